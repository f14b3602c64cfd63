"""An image as a vision model takes it: a `data:` URI of the picture downscaled (Pillow) so its
longest side is at most LONGEST_SIDE pixels (1568, the size past which providers shrink it
anyway); a photo as JPEG, a picture with transparency as PNG, an animation's first frame.

What decoding will cost is told from the header first (app.files.decoding), after a JPEG's
draft has chosen to decode it at the smallest scale still at least LONGEST_SIDE: a picture
that would take more than BUDGET_BYTES is refused undecoded. Pictures are read on the process's
one reading thread (app.files.reading), one file at a time with documents and pages, so several
cost what the largest of them does. Only PNG, JPEG, GIF and WebP are opened at all, and a PNG's
text chunks are inflated to TEXT_BYTES at most.
"""

from __future__ import annotations

import base64
import io
import warnings

from PIL import Image, ImageOps, PngImagePlugin

from app.files.decoding import BUDGET_BYTES, LONGEST_SIDE, decoding_cost, has_alpha
from app.files.fetch import Unreadable
from app.files.reading import read, read_now

FORMATS = ("PNG", "JPEG", "GIF", "WEBP")
JPEG_QUALITY = 85
TEXT_BYTES = 4 * 1024 * 1024  # a PNG's text chunks, inflated, in all: more is refused
# Pillow's own limit (64 MB, which 64 KB of zTXt chunks reach) for every PNG this process opens.
PngImagePlugin.MAX_TEXT_MEMORY = TEXT_BYTES
MIB = 1024 * 1024


def data_uri(data: bytes) -> str:
    """The image as a data: URI; Unreadable for what Pillow cannot read as one, and for a
    picture too costly to decode. Waits for the pictures asked for before it."""
    return read_now(_read, data)


async def awaited_data_uri(data: bytes) -> str:
    """data_uri, awaited: no thread is held while the pictures asked for before it are read."""
    return await read(_read, data)


def _read(data: bytes) -> str:
    try:
        with warnings.catch_warnings():
            # The cost below judges: Pillow's warning past 89 MP would refuse a 108 MP photo,
            # which is decoded at 1/4. Its error past 179 MP stands.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=FORMATS) as opened:
                full_size = opened.size
                cost = drafted_cost(opened, data)
                if cost > BUDGET_BYTES:
                    raise Unreadable(
                        f"{full_size[0]}x{full_size[1]} px is too large to read "
                        f"({cost // MIB} MB to decode, over {BUDGET_BYTES // MIB} MB)"
                    )
                return _encoded(_shrunk(opened))
    except Unreadable:
        raise
    except Exception as error:  # Pillow fails in many ways on a bad file: all mean "unreadable"
        raise Unreadable(f"not an image Pillow can read ({type(error).__name__})") from error


def drafted_cost(opened: Image.Image, data: bytes) -> int:
    """Have a JPEG decoded at the smallest scale (1/2, 1/4, 1/8) still at least its shown size
    (its draft); the bytes decoding the opened picture (of `data`) will then hold at most."""
    full_size = opened.size
    opened.draft(None, _fitted(full_size))
    return decoding_cost(opened, data, full_size=full_size)


def _fitted(size: tuple[int, int]) -> tuple[int, int]:
    """The size shown: the longest side at most LONGEST_SIDE, the shape kept."""
    width, height = size
    scale = min(1.0, LONGEST_SIDE / max(width, height, 1))
    return max(1, round(width * scale)), max(1, round(height * scale))


def _shrunk(opened: Image.Image) -> Image.Image:
    """The first frame, upright, at its shown size; each full-size copy is let go as soon as
    the next is made, so no more than two are held at once."""
    work = "RGBA" if has_alpha(opened) else "RGB"
    picture: Image.Image = opened
    if opened.mode != work:
        picture = opened.convert(work)
        opened.close()  # the decoded frame, now copied
    picture.thumbnail((LONGEST_SIDE, LONGEST_SIDE))  # reduce() by whole steps, then resample
    return ImageOps.exif_transpose(picture)  # a phone photo stands upright


def _encoded(picture: Image.Image) -> str:
    out = io.BytesIO()
    if picture.mode == "RGBA":
        picture.save(out, format="PNG", optimize=True)
        kind = "png"
    else:
        picture.convert("RGB").save(out, format="JPEG", quality=JPEG_QUALITY)
        kind = "jpeg"
    return f"data:image/{kind};base64,{base64.b64encode(out.getvalue()).decode()}"
