"""What decoding a picture will cost in memory, told from its header before it is decoded.

A picture's cost is the bytes its reading holds at the fullest moment:
- the picture: Pillow keeps 1 byte a pixel for palette and grey pictures, 2 for 16-bit grey,
  4 for everything else (RGB included);
- the copy it is shrunk from, 4 more: RGB from palette or grey, or the premultiplied copy of
  a picture with transparency;
- shrinking's two passes: the first makes a picture as wide as the one shown and as tall as
  the original, the second the one shown, then its copy, 4 bytes a pixel each;
- a JPEG in several scans (a progressive one, or a sequential one whose first scan holds fewer
  components than the picture): libjpeg keeps every DCT coefficient of the full-size picture,
  2 bytes each, whatever scale it decodes it at;
- a WebP: libwebp decodes into a canvas and a buffer of its own, which Pillow copies twice;
- the file itself.
"""

from __future__ import annotations

from PIL import Image

LONGEST_SIDE = 1568  # the longest side of a picture shown to a model (Anthropic's limit)
BUDGET_BYTES = 128 * 1024 * 1024  # a picture that would take more is not decoded
COPY = 4  # bytes a pixel of the RGB(A) copy a picture is shrunk from
WEBP_BUFFERS = 12  # bytes a pixel libwebp and Pillow hold besides the picture
BYTES_PER_PIXEL = {"1": 1, "L": 1, "P": 1, "I;16": 2, "I;16B": 2, "I;16L": 2, "I;16N": 2}


def has_alpha(picture: Image.Image) -> bool:
    return picture.mode in ("RGBA", "LA", "PA", "RGBa", "La") or "transparency" in picture.info


def decoding_cost(picture: Image.Image, data: bytes, *, full_size: tuple[int, int]) -> int:
    """Bytes reading this opened (not yet decoded) picture of these bytes will hold at most;
    `full_size` is its size in the file, before a JPEG's draft shrank what will be decoded."""
    pixels = picture.width * picture.height
    held = BYTES_PER_PIXEL.get(picture.mode, 4)
    if has_alpha(picture):
        cost = pixels * (max(held, COPY) + COPY)  # RGBA beside its premultiplied copy
    elif picture.mode != "RGB":
        cost = pixels * (held + COPY)  # the picture beside its RGB copy
    else:
        cost = pixels * held
    scale = min(1.0, LONGEST_SIDE / max(picture.width, picture.height))
    shown_width, shown_height = picture.width * scale, picture.height * scale
    # resampling's first pass (as wide as shown, as tall as the picture), its result and copy
    cost += int(COPY * shown_width * (picture.height + 2 * shown_height))
    if picture.format == "JPEG" and _in_several_scans(picture, data):
        cost += _coefficients(picture, full_size)
    if picture.format == "WEBP":
        cost += pixels * WEBP_BUFFERS
    return cost + len(data)


def _in_several_scans(picture: Image.Image, data: bytes) -> bool:
    """A progressive JPEG, or one whose first scan (its markers walked up to the first start
    of scan) holds fewer components than the picture; one that cannot be told counts as one."""
    if picture.info.get("progressive"):
        return True
    at = 2  # after the start of image
    while at + 4 < len(data):
        if data[at] != 0xFF:
            return True
        marker = data[at + 1]
        if marker == 0xFF:  # a fill byte
            at += 1
        elif marker == 0x01 or 0xD0 <= marker <= 0xD8:  # markers without a length
            at += 2
        elif marker == 0xDA:  # start of scan: its length, then how many components
            return data[at + 4] < getattr(picture, "layers", 1)
        else:
            at += 2 + int.from_bytes(data[at + 2 : at + 4], "big")
    return True


def _coefficients(picture: Image.Image, full_size: tuple[int, int]) -> int:
    """A JPEG's DCT coefficients at its full size: 2 bytes a sample of each component, at its
    sampling (a 4:2:0 colour photo: 1.5 samples a pixel)."""
    layers = getattr(picture, "layer", None) or [("", 1, 1, 0)] * 3
    most_h = max(h for _, h, _, _ in layers)
    most_v = max(v for _, _, v, _ in layers)
    width, height = full_size
    samples = sum(
        -(-width * h // most_h // 8) * 8 * (-(-height * v // most_v // 8) * 8)
        for _, h, v, _ in layers
    )
    return samples * 2
