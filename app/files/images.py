"""An image as a vision model takes it: a `data:` URI of the picture downscaled (Pillow) so its
longest side is at most LONGEST_SIDE pixels, the size past which providers shrink it anyway
(Anthropic's 1568 px); a photo as JPEG, a picture with transparency as PNG, an animation's
first frame."""

from __future__ import annotations

import base64
import io
import warnings

from PIL import Image, ImageOps

from app.files.fetch import Unreadable

LONGEST_SIDE = 1568
MAX_PIXELS = 64_000_000  # a decompression bomb is refused before it is decoded
JPEG_QUALITY = 85


def data_uri(data: bytes) -> str:
    """The image as a data: URI; Unreadable for what Pillow cannot read as one."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as opened:
                if opened.width * opened.height > MAX_PIXELS:
                    raise Unreadable(f"{opened.width}x{opened.height} px is too large to read")
                # Shrunk first: a JPEG is then decoded at a fraction of its size (Pillow's
                # draft), a 48 MP phone photo in tens of MB rather than hundreds.
                opened.thumbnail((LONGEST_SIDE, LONGEST_SIDE))
                picture = ImageOps.exif_transpose(opened)  # a phone photo stands upright
                return _encoded(picture)
    except Unreadable:
        raise
    except Exception as error:  # Pillow fails in many ways on a bad file: all mean "unreadable"
        raise Unreadable(f"not an image Pillow can read ({type(error).__name__})") from error


def _encoded(picture: Image.Image) -> str:
    out = io.BytesIO()
    if picture.mode in ("RGBA", "LA", "PA") or "transparency" in picture.info:
        picture.convert("RGBA").save(out, format="PNG", optimize=True)
        kind = "png"
    else:
        picture.convert("RGB").save(out, format="JPEG", quality=JPEG_QUALITY)
        kind = "jpeg"
    return f"data:image/{kind};base64,{base64.b64encode(out.getvalue()).decode()}"
