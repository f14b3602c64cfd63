"""An image as a vision model takes it: a `data:` URI of the picture downscaled (Pillow) so its
longest side is at most LONGEST_SIDE pixels (1568, the size past which providers shrink it
anyway); a photo as JPEG, a picture with transparency as PNG, an animation's first frame.

What decoding will cost is told from the header first (app.files.decoding), after a JPEG's
draft has chosen to decode it at the smallest scale still at least LONGEST_SIDE (or a smaller
one still, shown a little under LONGEST_SIDE, when only that one fits): a picture that would
take more than BUDGET_BYTES is refused undecoded. A picture larger than it is shown is shrunk
band by band, so reading it holds its decoded pixels and little more. Pictures are read on
the process's one reading thread (app.files.reading), one file at a time with documents and
pages, so several cost what the largest of them does. Only PNG, JPEG, GIF and WebP are opened
at all, and a PNG's text chunks are inflated to TEXT_BYTES at most.
"""

from __future__ import annotations

import base64
import io
import warnings

from PIL import Image, ImageOps, PngImagePlugin

from app.files.decoding import BUDGET_BYTES, LONGEST_SIDE, Bands, cost_at, has_alpha, shown_size
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
    (its draft), or at a smaller one still if that one would cost over BUDGET_BYTES and a
    smaller one does not (then it is shown a little under LONGEST_SIDE); the bytes decoding
    the opened picture (of `data`) will then hold at most."""
    full_size = opened.size
    costs = {
        scale: cost_at(opened, data, size, full_size=full_size) for scale, size in _drafts(opened)
    }
    scale = next((s for s, cost in costs.items() if cost <= BUDGET_BYTES), min(costs))
    if scale > 1:
        opened.draft(None, (full_size[0] // scale, full_size[1] // scale))
    return costs[scale]


def _drafts(opened: Image.Image) -> list[tuple[int, tuple[int, int]]]:
    """The scales a picture can be decoded at, each with its size, largest first: a JPEG's
    draft scale (as Pillow's draft picks it for its shown size), then each smaller one down to
    1/8; any other picture, its own size."""
    width, height = opened.size
    if opened.format != "JPEG" or len(getattr(opened, "tile", ())) != 1:
        return [(1, (width, height))]
    fitted = _fitted(opened.size)
    most = min(width // fitted[0], height // fitted[1])
    first = next(s for s in (8, 4, 2, 1) if most >= s)
    return [(s, (-(-width // s), -(-height // s))) for s in (1, 2, 4, 8) if s >= first]


def _fitted(size: tuple[int, int]) -> tuple[int, int]:
    """The size shown: the longest side at most LONGEST_SIDE, the shape kept."""
    width, height = size
    scale = min(1.0, LONGEST_SIDE / max(width, height, 1))
    return max(1, round(width * scale)), max(1, round(height * scale))


def _shrunk(opened: Image.Image) -> Image.Image:
    """The first frame, upright, at its shown size. A picture larger than that is shrunk band by
    band (app.files.decoding.Bands); the decoded picture is let go as soon as the last band
    is done."""
    work = "RGBA" if has_alpha(opened) else "RGB"
    opened.load()
    shown = shown_size(*opened.size)
    if shown == opened.size:
        picture = opened if opened.mode == work else opened.convert(work)
    else:
        picture = _banded(opened, work)
    if picture is not opened:
        opened.close()  # the decoded frame, now copied
    return ImageOps.exif_transpose(picture)  # a phone photo stands upright


def _banded(opened: Image.Image, work: str) -> Image.Image:
    """The picture shrunk to its shown size as Pillow's thumbnail shrinks it (reduce() by whole
    steps, then bicubic resampling, a picture with transparency premultiplied), one band of
    rows at a time: no full-size copy is made. The picture is kept with its transparency
    premultiplied until the last band, then unpremultiplied at its shown size."""
    plan = Bands.of(*opened.size)
    width, _ = opened.size
    (shown_width, shown_height), (across, down) = plan.shown, plan.factor
    inner = "RGBa" if work == "RGBA" else "RGB"  # Pillow resamples transparency premultiplied
    out = Image.new(inner, plan.shown)
    out.info = {k: v for k, v in opened.info.items() if k != "transparency"}  # its EXIF
    for first in range(0, shown_height, plan.rows):
        last = min(shown_height, first + plan.rows)
        top, bottom = plan.band(first, last)
        band = opened.crop((0, top, width, bottom))
        if band.mode != work:
            band = band.convert(work)
        if band.mode != inner:
            band = band.convert(inner)
        if (across, down) != (1, 1):
            band = band.reduce((across, down))
        # the shown rows' source box, in this band's reduced rows
        box = (0.0, first * plan.step - top // down, width / across, last * plan.step - top // down)
        rows = band.resize((shown_width, last - first), Image.Resampling.BICUBIC, box)
        band.close()
        out.paste(rows, (0, first))
        rows.close()
    opened.close()  # the decoded picture: every band is done
    if inner == work:
        return out
    unpremultiplied = out.convert(work)
    out.close()
    return unpremultiplied


def _encoded(picture: Image.Image) -> str:
    out = io.BytesIO()
    if picture.mode == "RGBA":
        picture.save(out, format="PNG", optimize=True)
        kind = "png"
    else:
        rgb = picture if picture.mode == "RGB" else picture.convert("RGB")
        rgb.save(out, format="JPEG", quality=JPEG_QUALITY)
        kind = "jpeg"
    return f"data:image/{kind};base64,{base64.b64encode(out.getvalue()).decode()}"
