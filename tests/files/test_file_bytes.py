"""What tomo makes of a file's bytes (docs/how-tomo-works.md#files): images downscaled to a data:
URI, documents' text capped; bad bytes are Unreadable, never another error."""

from __future__ import annotations

import base64
import io
import struct
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageChops, ImageStat

from app.domain import SharedFile
from app.files import documents
from app.files.decoding import BUDGET_BYTES, cost_at
from app.files.documents import CUT, MAX_CHARS, READ_SECONDS, document_text
from app.files.fetch import Unreadable
from app.files.images import JPEG_QUALITY, LONGEST_SIDE, data_uri
from tests.files.samples import pdf, picture

PDF = SharedFile(id="F1", name="plan.pdf", mimetype="application/pdf", filetype="pdf")
TEXT = SharedFile(id="F2", name="deploy.log", mimetype="text/plain", mode="snippet")


def decoded(uri: str) -> Image.Image:
    head, _, data = uri.partition(",")
    assert head in ("data:image/jpeg;base64", "data:image/png;base64")
    return Image.open(io.BytesIO(base64.b64decode(data)))


def test_a_large_photo_is_downscaled_to_the_longest_side_keeping_its_shape() -> None:
    shown = decoded(data_uri(picture(3000, 2000)))
    assert shown.format == "JPEG" and shown.size == (LONGEST_SIDE, 1045)


def test_a_small_picture_with_transparency_stays_its_size_as_a_png() -> None:
    shown = decoded(data_uri(picture(640, 480, alpha=True)))
    assert shown.format == "PNG" and shown.size == (640, 480) and shown.mode == "RGBA"


def test_a_jpeg_and_a_webp_and_a_gif_are_read() -> None:
    """A WebP costs libwebp's and Pillow's buffers besides its pixels (16 bytes a pixel in all):
    one of 2000x3000 is over the budget, one of 1200x1800 is read."""
    for kind, size in (("JPEG", (2000, 3000)), ("WEBP", (1200, 1800)), ("GIF", (2000, 3000))):
        shown = decoded(data_uri(picture(*size, kind=kind)))
        assert max(shown.size) == LONGEST_SIDE


@pytest.mark.parametrize(
    ("width", "height", "kind", "options"),
    [
        (5120, 2880, "PNG", {}),  # a 5K display's screenshot
        (3840, 2160, "PNG", {"alpha": True}),  # a 4K one, with transparency
        (4032, 3024, "JPEG", {}),  # a 12 MP phone photo
        (4032, 3024, "JPEG", {"progressive": True}),  # a 12 MP one saved for the web
        (8000, 6000, "JPEG", {}),  # a 48 MP phone photo, decoded at a quarter of its size
    ],
)
def test_todays_screenshots_and_photos_are_shown_at_the_longest_side(
    width: int, height: int, kind: str, options: dict[str, bool]
) -> None:
    if kind == "PNG":  # a screen: flat colours, which PNG stores (and Pillow writes) quickly
        screen = Image.linear_gradient("L").resize((width, height))
        if options.get("alpha"):
            screen = screen.convert("LA").convert("RGBA")
        out = io.BytesIO()
        screen.convert("RGBA" if options.get("alpha") else "RGB").save(out, format="PNG")
        data = out.getvalue()
    else:
        data = picture(width, height, kind=kind, **options)
    shown = decoded(data_uri(data))
    assert max(shown.size) == LONGEST_SIDE
    assert shown.format == ("PNG" if options.get("alpha") else "JPEG")


def test_a_phone_photo_stands_upright_as_its_exif_says() -> None:
    """Orientation 6: the camera was turned; the stored 3000 x 2000 picture is shown 2000 wide
    (and shrunk before it is turned, which must not lose the orientation)."""
    photo = Image.open(io.BytesIO(picture(3000, 2000, kind="JPEG")))
    exif = photo.getexif()
    exif[0x0112] = 6
    out = io.BytesIO()
    photo.save(out, format="JPEG", exif=exif.tobytes())
    assert decoded(data_uri(out.getvalue())).size == (1045, LONGEST_SIDE)


QUADRANTS = ((220, 30, 30), (30, 200, 40), (40, 60, 210), (230, 220, 40))  # red green blue yellow


def _quadrants(width: int, height: int, mode: str) -> bytes:
    """A PNG in four flat quadrants (clockwise from the top left: red, green, blue, yellow), the
    bottom left one half transparent in an RGBA picture; a palette one keeps its four colours
    (and its colour 0 transparent, so it is read with transparency)."""
    picture = Image.new("RGBA", (width, height))
    half_width, half_height = width // 2, height // 2
    corners = ((0, 0), (half_width, 0), (half_width, half_height), (0, half_height))
    for (left, top), colour in zip(corners, QUADRANTS, strict=True):
        alpha = 128 if (left, top) == (0, half_height) else 255
        picture.paste((*colour, alpha), (left, top, left + half_width, top + half_height))
    out = io.BytesIO()
    if mode == "P":  # colours 0-3 the quadrants', 4 a transparent one no pixel has
        palette = Image.new("P", (width, height))
        palette.putpalette([value for colour in (*QUADRANTS, (0, 0, 0)) for value in colour])
        for index, (left, top) in enumerate(corners):
            palette.paste(index, (left, top, left + half_width, top + half_height))
        palette.save(out, format="PNG", transparency=4)
    else:
        picture.save(out, format="PNG")
    return out.getvalue()


@pytest.mark.parametrize("mode", ["RGBA", "P"])
def test_a_large_picture_shrunk_band_by_band_keeps_its_shape_and_its_colours_in_place(
    mode: str,
) -> None:
    """A 6400x1600 picture (over four times LONGEST_SIDE: reduced by half, then resampled, in
    bands) comes out 1568x392, each quadrant's colour where it was."""
    shown = decoded(data_uri(_quadrants(6400, 1600, mode)))
    assert shown.format == "PNG" and shown.size == (LONGEST_SIDE, 392)
    width, height = shown.size
    for x, y, colour, alpha in (
        (width // 4, height // 4, QUADRANTS[0], 255),
        (3 * width // 4, height // 4, QUADRANTS[1], 255),
        (3 * width // 4, 3 * height // 4, QUADRANTS[2], 255),
        (width // 4, 3 * height // 4, QUADRANTS[3], 128 if mode == "RGBA" else 255),
    ):
        pixel = shown.convert("RGBA").getpixel((x, y))
        assert isinstance(pixel, tuple)
        assert max(abs(a - b) for a, b in zip(pixel, (*colour, alpha), strict=True)) <= 2
    # the edges stay sharp: a few shown pixels from the middle, the colours are still pure
    middle = shown.convert("RGBA").getpixel((width // 2 - 3, height // 4))
    assert isinstance(middle, tuple) and middle[:3] == QUADRANTS[0]


def test_shrinking_in_bands_makes_what_pillows_thumbnail_makes_of_a_photo() -> None:
    """A 3840x2160 photo-like picture with transparency, and a 6400x1600 one without (reduced
    by half first): the banded shrink against Pillow's thumbnail of the whole picture
    (rounding in its two passes can differ by one or two steps)."""
    for width, height, alpha in ((3840, 2160, True), (6400, 1600, False)):
        data = picture(width, height, alpha=alpha)
        whole = Image.open(io.BytesIO(data))
        whole.thumbnail((LONGEST_SIDE, LONGEST_SIDE))
        if not alpha:  # as it is shown: a JPEG
            out = io.BytesIO()
            whole.save(out, format="JPEG", quality=JPEG_QUALITY)
            whole = Image.open(out)
        shown = decoded(data_uri(data))
        assert shown.size == whole.size
        difference = ImageChops.difference(shown.convert(whole.mode), whole)
        assert max(ImageStat.Stat(difference).mean) < 1.0


def test_a_jpeg_too_costly_at_its_draft_is_read_at_a_smaller_one() -> None:
    """A 19 MP progressive photo (4992x3744, colour at 4:2:0): libjpeg's coefficients, its
    draft at 1/2 (2496x1872) and shrinking it cost over BUDGET_BYTES; at 1/4 it fits, and
    the photo is shown at 1248x936, a little under LONGEST_SIDE, rather than refused."""
    data = picture(4992, 3744, kind="JPEG", progressive=True, subsampling=2, quality=75)
    opened = Image.open(io.BytesIO(data))
    natural = cost_at(opened, data, (2496, 1872), full_size=(4992, 3744))
    assert natural > BUDGET_BYTES
    assert decoded(data_uri(data)).size == (1248, 936)


def _png_header_only(width: int, height: int) -> bytes:
    """A PNG that declares a size and holds one empty row: what a decompression bomb looks
    like before it is decoded."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body)
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    row = zlib.compress(b"\x00" + b"\x00" * 3 * 16)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", row)


def test_a_picture_too_large_to_decode_is_refused_before_it_is() -> None:
    with pytest.raises(Unreadable, match=r"8500x8500 px is too large to read \(\d+ MB"):
        data_uri(_png_header_only(8500, 8500))
    with pytest.raises(Unreadable, match="12000x12000 px is too large"):
        data_uri(_png_header_only(12_000, 12_000))  # over Pillow's warning: ours judges
    with pytest.raises(Unreadable, match="DecompressionBomb"):
        data_uri(_png_header_only(20_000, 20_000))  # over Pillow's own limit


def test_a_jpeg_in_several_scans_is_judged_by_its_full_size_coefficients() -> None:
    """libjpeg keeps every coefficient of a JPEG in several scans, however small it decodes it:
    a 63 MP one whose first scan holds one component of three (a sequential JPEG in three
    scans; here its header alone, as nothing is decoded) is refused, the same photo in one
    scan is decoded at an eighth of its size and shown."""
    one_scan = io.BytesIO()
    Image.new("RGB", (9000, 7000), (200, 120, 40)).save(one_scan, format="JPEG")
    data = bytearray(one_scan.getvalue())
    assert max(decoded(data_uri(bytes(data))).size) == LONGEST_SIDE
    scan = data.index(b"\xff\xda")
    assert data[scan + 4] == 3  # the components of the first scan
    data[scan + 4] = 1
    with pytest.raises(Unreadable, match="9000x7000 px is too large to read"):
        data_uri(bytes(data))


def test_a_truncated_png_is_unreadable() -> None:
    whole = picture(800, 600)
    with pytest.raises(Unreadable):
        data_uri(whole[: len(whole) // 3])


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=2048))
def test_any_bytes_as_an_image_are_a_picture_or_unreadable(data: bytes) -> None:
    try:
        assert data_uri(data).startswith("data:image/")
    except Unreadable:
        pass


def test_a_pdfs_text_is_read_page_by_page() -> None:
    text = document_text(PDF, pdf(["Day 1: Kyoto (temples)", "Day 2: Nara"], ["Budget: 80,000"]))
    assert text == "Day 1: Kyoto (temples)\nDay 2: Nara\nBudget: 80,000"


def test_a_long_document_is_capped() -> None:
    pages = [[f"line {n} of page {p}: " + "words " * 12 for n in range(40)] for p in range(20)]
    text = document_text(PDF, pdf(*pages))
    assert len(text) <= MAX_CHARS + len(CUT) and text.endswith(CUT)
    assert text.startswith("line 0 of page 0")


def test_a_page_of_millions_of_drawing_instructions_is_skipped_not_read_for_seconds() -> None:
    """400,000 moves in a few compressed kilobytes took pypdf 4.5 s; the page is skipped (by
    its size, whatever the machine's speed), the next one read."""
    trap = b"BT /F1 12 Tf " + b"1 0 Td " * 400_000 + b"(x) Tj ET"
    data = pdf(trap, ["Budget: 80,000"])
    assert len(data) < 10_000
    assert document_text(PDF, data) == "Budget: 80,000"  # the trap's "x" was never read


class Clock:
    """The reader's clock, a second further on each time it is read: what a page costs on a
    given machine does not decide how many pages are begun (bench/ holds time budgets)."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        self.now += 1.0
        return self.now


def test_no_page_is_begun_after_the_reading_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Thirty pages just under the limit of drawing instructions: reading stops at the time.
    Started at 1 s, pages are begun at 2 s and 3 s; at 4 s, past READ_SECONDS, none is."""
    assert READ_SECONDS == 2.0
    monkeypatch.setattr(documents, "time", Clock())
    heavy = b"BT /F1 12 Tf " + b"1 0 Td " * 36_000 + b"(page) Tj ET"
    text = document_text(PDF, pdf(*[heavy] * 30))
    assert text.count("page") == 2


def test_a_pdf_that_does_not_parse_and_one_without_text_are_unreadable() -> None:
    for broken in (b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog", pdf([])[:-40], b"not a pdf at all"):
        with pytest.raises(Unreadable):
            document_text(PDF, broken)


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=2048))
def test_any_bytes_as_a_pdf_are_text_or_unreadable(data: bytes) -> None:
    try:
        assert document_text(PDF, b"%PDF-1.4\n" + data).strip()
    except Unreadable:
        pass


def test_a_snippets_text_is_read_in_utf8_and_japanese_survives() -> None:
    log = "ERROR: 接続が拒否されました\n  at deploy.sh:12\n"
    assert document_text(TEXT, log.encode()) == log.strip()


def test_binary_bytes_are_no_text() -> None:
    with pytest.raises(Unreadable):
        document_text(TEXT, bytes(range(256)) * 4)
