"""The text of a document: a PDF's (pypdf, page by page until enough), a text file's or a
snippet's (UTF-8, else Latin-1), at most MAX_CHARS characters each.

Reading a PDF's text takes time in proportion to its pages' drawing instructions, which a few
compressed kilobytes can make millions of (4.5 s of CPU for a 5 KB file): a page whose
instructions are over MAX_PAGE_CONTENT is skipped, and no page is begun after READ_SECONDS.
"""

from __future__ import annotations

import io
import logging
import time

from app.domain import SharedFile
from app.files.fetch import Unreadable

MAX_CHARS = 4000
MAX_PAGES = 30  # pages looked at for text: a scanned book yields nothing on its first pages
CUT = "\n[…]"
MAX_PAGE_CONTENT = 256 * 1024  # bytes of a page's drawing instructions (decompressed)
READ_SECONDS = 2.0


def capped(text: str) -> str:
    text = "\n".join(line.rstrip() for line in text.strip().splitlines())
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS].rstrip() + CUT


def document_text(file: SharedFile, data: bytes) -> str:
    """The document's text, capped; Unreadable when none can be read."""
    text = _pdf(data) if file.is_pdf else _plain(data)
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
    from pypdf import PdfReader  # loaded with the first PDF

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # it warns of every oddity it mends
    try:
        reader = PdfReader(io.BytesIO(data))
        parts: list[str] = []
        started = time.monotonic()
        for page in reader.pages[:MAX_PAGES]:
            if time.monotonic() - started > READ_SECONDS:
                break
            contents = page.get_contents()
            if contents is not None and len(contents.get_data()) > MAX_PAGE_CONTENT:
                continue  # a drawing, or a trap: too long to read for its text
            parts.append(page.extract_text() or "")
            if sum(map(len, parts)) > MAX_CHARS:
                break
    except Exception as error:  # pypdf's errors for a broken or encrypted file, and worse
        raise Unreadable(f"not a PDF pypdf can read ({type(error).__name__})") from error
    return "\n".join(parts)
