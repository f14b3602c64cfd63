"""The readable text of a fetched page: an HTML page's main text (trafilatura, imported at the
first page: it and lxml cost memory a process that never fetches should not pay), a PDF's text
through the reader of shared files (app.files.documents), plain text as it is, the first two
on the process's one reading thread (app.files.reading). Anything else is named, not read."""

from __future__ import annotations

import logging

from app.files.documents import capped, pdf_text
from app.files.fetch import Unreadable
from app.files.reading import read
from app.tools.web_fetch import Page

HTML = ("text/html", "application/xhtml+xml")
PDF = ("application/pdf", "application/x-pdf")
PLAIN = ("text/plain", "text/markdown", "text/csv", "application/json")
# Of an HTML page, what trafilatura is given: its tree costs many times the bytes (a 3 MB page
# took +70 MiB and seconds of CPU), and an article's text sits well within its first megabyte.
HTML_BYTES = 1024 * 1024


class NotText(Exception):
    """The page holds nothing tomo can read as text; says what it was."""


async def readable_text(page: Page) -> str:
    """The page's text, capped to a few thousand characters (app.files.documents.capped)."""
    kind = page.content_type or _sniffed(page.data)
    if kind in HTML:
        text = await read(_main_text, _decoded(page, limit=HTML_BYTES))
    elif kind in PDF:
        try:
            text = await read(pdf_text, page.data)
        except Unreadable as error:
            raise NotText(f"a PDF whose text could not be read ({error})") from error
    elif kind in PLAIN or kind.startswith("text/"):
        if b"\x00" in page.data[:8192]:
            raise NotText(f"binary data, though sent as {kind}")
        text = _decoded(page)
    else:
        raise NotText(f"{kind or 'something of no stated type'}, {len(page.data)} bytes")
    if not text.strip():
        raise NotText(f"{kind} with no readable text in it")
    return capped(text)


def _sniffed(data: bytes) -> str:
    start = data[:512].lstrip().lower()
    if start.startswith(b"%pdf"):
        return "application/pdf"
    if start.startswith((b"<!doctype html", b"<html")):
        return "text/html"
    return ""


def _decoded(page: Page, *, limit: int | None = None) -> str:
    data = page.data if limit is None else page.data[:limit]
    try:
        return data.decode(page.charset or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        return data.decode("utf-8", errors="replace")


def _main_text(html: str) -> str:
    import trafilatura  # at the first page fetched

    logging.getLogger("trafilatura").setLevel(logging.ERROR)
    text = trafilatura.extract(html, fast=True, include_comments=False)
    if not text:  # no main part found (a short page): all of its text
        text = trafilatura.html2txt(html)
    return text or ""
