"""What decoding a picture will cost in memory, told from its header before it is decoded, and
how a large one is shrunk in bands so that it costs little more than its decoded pixels.

A picture larger than it is shown is shrunk band by band (`Bands`): a band of its rows is cut,
converted to RGB or RGBA (premultiplied, as Pillow resamples it), reduced by whole steps
(Pillow's thumbnail: while what is left to resample is at least REDUCING_GAP times the shown
size), then resampled (bicubic) into its rows of the shown picture; the band is let go before
the next is cut, and the decoded picture as soon as the last band is done. Each band holds
the rows its output rows' filter reaches, so the result is what Pillow's thumbnail makes of
the whole picture; a band is about BAND_BYTES (at 4 bytes a pixel) at most.

A picture's cost is the bytes its reading holds at the fullest moment:
- the decoded picture: Pillow keeps 1 byte a pixel for palette and grey pictures, 2 for 16-bit
  grey, 4 for everything else (RGB included);
- a band beside its converted (or premultiplied) copy, 4 bytes a pixel each (a picture shown
  at its own size: its whole copy, and the copy turned upright);
- the shown picture and its copy, 4 bytes a pixel each;
- a JPEG in several scans (a progressive one, or a sequential one whose first scan holds fewer
  components than the picture): libjpeg keeps every DCT coefficient of the full-size picture,
  2 bytes each, whatever scale it decodes it at;
- a WebP: libwebp decodes into a canvas and a buffer of its own, which Pillow copies twice;
- the file itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from PIL import Image

LONGEST_SIDE = 1568  # the longest side of a picture shown to a model (Anthropic's limit)
# A picture that would take more is not decoded: a 5K screenshot with transparency (5120x2880
# RGBA, 14.7 MP) costs 83 MiB, the largest RGBA square read is about 4400x4400.
BUDGET_BYTES = 80 * 1024 * 1024
COPY = 4  # bytes a pixel of RGB(A): a band's copies, the shown picture
WEBP_BUFFERS = 12  # bytes a pixel libwebp and Pillow hold besides the picture
BYTES_PER_PIXEL = {"1": 1, "L": 1, "P": 1, "I;16": 2, "I;16B": 2, "I;16L": 2, "I;16N": 2}
BAND_BYTES = 4 * 1024 * 1024  # a band of the picture, in RGB(A), at most about
REDUCING_GAP = 2.0  # as Pillow's thumbnail: reduce() by whole steps while 2x is left
SUPPORT = 2.0  # the bicubic filter's reach, in source pixels per shown pixel (Pillow's)


def has_alpha(picture: Image.Image) -> bool:
    return picture.mode in ("RGBA", "LA", "PA", "RGBa", "La") or "transparency" in picture.info


def shown_size(width: int, height: int) -> tuple[int, int]:
    """The size a picture is shown at: the longest side at most LONGEST_SIDE, the shape kept,
    rounded as Pillow's thumbnail rounds it."""
    if width <= LONGEST_SIDE and height <= LONGEST_SIDE:
        return width, height
    aspect = width / height
    if aspect > 1:  # wider than tall (a square goes the other way, as in Pillow)
        shown = min(
            (math.floor(LONGEST_SIDE / aspect), math.ceil(LONGEST_SIDE / aspect)),
            key=lambda n: 0 if n == 0 else abs(aspect - LONGEST_SIDE / n),
        )
        return LONGEST_SIDE, max(shown, 1)
    shown = min(
        (math.floor(LONGEST_SIDE * aspect), math.ceil(LONGEST_SIDE * aspect)),
        key=lambda n: abs(aspect - n / LONGEST_SIDE),
    )
    return max(shown, 1), LONGEST_SIDE


@dataclass(frozen=True)
class Bands:
    """How a picture of `size` is shrunk to `shown` band by band: reduced `factor` times
    (across, down), then resampled; `rows` shown rows a band."""

    size: tuple[int, int]
    shown: tuple[int, int]
    factor: tuple[int, int]
    rows: int

    @classmethod
    def of(cls, width: int, height: int) -> Bands:
        shown = shown_size(width, height)
        factor = (
            max(1, int(width / shown[0] / REDUCING_GAP)),
            max(1, int(height / shown[1] / REDUCING_GAP)),
        )
        plan = cls((width, height), shown, factor, 1)
        # as many shown rows as keep a band, with the rows its filter reaches, within BAND_BYTES
        fits = BAND_BYTES // (COPY * width * factor[1]) - 2 * plan.margin - 2
        return cls(plan.size, shown, factor, max(1, min(shown[1], int(fits / plan.step))))

    @property
    def step(self) -> float:
        """Reduced rows a shown row spans (Pillow resamples the reduced picture's box, the
        whole picture's size divided by the factor: a last partial step counts as a part)."""
        return self.size[1] / self.factor[1] / self.shown[1]

    @property
    def margin(self) -> int:
        """Reduced rows the filter reaches past a band's own, on each side (and one spare)."""
        return math.ceil(SUPPORT * max(self.step, 1.0)) + 2

    def band(self, first: int, last: int) -> tuple[int, int]:
        """The picture's rows (whole reduction steps) that shown rows first..last-1 need."""
        reduced = -(-self.size[1] // self.factor[1])
        top = max(0, math.floor(first * self.step) - self.margin)
        bottom = min(reduced, math.ceil(last * self.step) + self.margin)
        return top * self.factor[1], min(self.size[1], bottom * self.factor[1])

    def largest_band(self) -> int:
        """Rows of the picture in its largest band."""
        shown_rows = self.shown[1]
        return max(
            bottom - top
            for top, bottom in (
                self.band(first, min(shown_rows, first + self.rows))
                for first in range(0, shown_rows, self.rows)
            )
        )


def cost_at(
    picture: Image.Image, data: bytes, size: tuple[int, int], *, full_size: tuple[int, int]
) -> int:
    """Bytes reading this opened (not yet decoded) picture of these bytes will hold at most,
    decoded at `size` (a JPEG's draft scale); `full_size` is its size in the file."""
    width, height = size
    pixels = width * height
    cost = pixels * BYTES_PER_PIXEL.get(picture.mode, 4)
    shown = shown_size(width, height)
    if shown == size:  # not shrunk: its RGB(A) copy, then the copy turned upright
        cost += 2 * COPY * pixels
    else:  # a band beside its copy, the shown picture and its copy
        cost += 2 * COPY * width * Bands.of(width, height).largest_band()
        cost += 2 * COPY * shown[0] * shown[1]
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
