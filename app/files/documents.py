"""The text of a document: a PDF's (pypdf, page by page until enough), a text file's or a
snippet's (UTF-8, else Latin-1), at most MAX_CHARS characters each.

Reading a PDF's text takes time in proportion to its pages' drawing instructions, which a few
compressed kilobytes can make millions of (4.5 s of CPU for a 5 KB file): a page whose
instructions are over MAX_PAGE_CONTENT is skipped, and no page is begun after READ_SECONDS.
Memory: pypdf inflates a stream whole and keeps it with its page, and a few compressed
kilobytes inflate to its own limit of 75 MB a stream (five such pages: 208 MB); here no
stream is inflated past MAX_STREAM_BYTES (pypdf's own limits, lowered for the reading), and a
page that holds one is skipped.
"""

from __future__ import annotations

import io
import logging
import time
from typing import Any

from app.domain import SharedFile
from app.files.fetch import Unreadable

MAX_CHARS = 4000
MAX_PAGES = 30  # pages looked at for text: a scanned book yields nothing on its first pages
CUT = "\n[…]"
MAX_PAGE_CONTENT = 256 * 1024  # bytes of a page's drawing instructions (decompressed)
MAX_STREAM_BYTES = 1024 * 1024  # bytes any stream is inflated to (a font's map, a page's)
READ_SECONDS = 2.0
# pypdf's decompressions, each bounded by its `{kind}_maximum_output_length` setting
INFLATING = ("zlib", "lzw", "run_length", "brotli", "jbig2", "array_based_stream")


def capped(text: str) -> str:
    text = "\n".join(line.rstrip() for line in text.strip().splitlines())
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS].rstrip() + CUT


def document_text(file: SharedFile, data: bytes) -> str:
    """The document's text, capped; Unreadable when none can be read."""
    text = _pdf(data) if file.is_pdf else _plain(data)
    if not text.strip():
        raise Unreadable("no text in it")
    return capped(text)


def pdf_text(data: bytes) -> str:
    """A PDF's text, capped (a page fetched from the web); Unreadable when none can be read."""
    text = _pdf(data)
    if not text.strip():
        raise Unreadable("no text in it")
    return capped(text)


def _plain(data: bytes) -> str:
    sample = data[: MAX_CHARS * 4]
    try:
        return sample.decode("utf-8", errors="strict")
    except UnicodeDecodeError as error:
        if error.start > len(sample) - 4:  # a character cut by the sample's end
            return sample[: error.start].decode("utf-8")
        if b"\x00" in sample:
            raise Unreadable("binary, not text") from error
        return sample.decode("latin-1")


def _pdf(data: bytes) -> str:
    from pypdf import Configuration, PdfReader, apply_configuration  # with the first PDF
    from pypdf.errors import LimitReachedError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # it warns of every oddity it mends
    limits = (f"{kind}_maximum_output_length" for kind in INFLATING)
    inflated: dict[str, Any] = {
        limit: MAX_STREAM_BYTES for limit in limits if hasattr(Configuration, limit)
    }
    try:
        with apply_configuration(**inflated):
            reader = PdfReader(io.BytesIO(data))
            parts: list[str] = []
            started = time.monotonic()
            for page in reader.pages[:MAX_PAGES]:
                if time.monotonic() - started > READ_SECONDS:
                    break
                try:
                    contents = page.get_contents()
                    if contents is not None and len(contents.get_data()) > MAX_PAGE_CONTENT:
                        continue  # a drawing, or a trap: too long to read for its text
                    parts.append(page.extract_text() or "")
                except LimitReachedError:
                    continue  # a stream that inflates past MAX_STREAM_BYTES: a trap
                if sum(map(len, parts)) > MAX_CHARS:
                    break
    except Exception as error:  # pypdf's errors for a broken or encrypted file, and worse
        raise Unreadable(f"not a PDF pypdf can read ({type(error).__name__})") from error
    return "\n".join(parts)
