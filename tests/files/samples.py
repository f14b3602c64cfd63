"""Real file bytes for the tests: pictures made with Pillow, PDFs written out object by object
(PDF 1.4: a catalog, pages, a Helvetica font, one text stream per page, a cross-reference
table with each object's byte offset), so pypdf reads them as it reads any PDF. And Slack's
file objects from the fixtures, served by the Slack stand-in's file host."""

from __future__ import annotations

import copy
import io
import json
import zlib
from pathlib import Path
from typing import Any

from PIL import Image

from tests.fakes import FakeSlack

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def file_object(fixture: str, *, path: tuple[str, ...] = ("event", "files")) -> dict[str, Any]:
    """The first file object of a fixture (its event's, or a Web API answer's)."""
    folder = "slack_web" if fixture.startswith("web/") else "slack"
    found: Any = json.loads(
        (FIXTURES / folder / f"{fixture.removeprefix('web/')}.json").read_text()
    )
    for key in path:
        found = found[key]
    return copy.deepcopy(found[0] if isinstance(found, list) else found)


def hosted(
    slack: FakeSlack, obj: dict[str, Any], body: bytes, kind: str, **how: Any
) -> dict[str, Any]:
    """The file object with its URLs on the stand-in's file host, which serves `body`."""
    name = obj["name"].lower()
    url = slack.host_file(f"T0001-{obj['id']}/download/{name}", body, content_type=kind, **how)
    return obj | {
        "url_private": url.replace("/download/", "/"),
        "url_private_download": url,
        "size": len(body),
    }


def picture(
    width: int, height: int, *, kind: str = "PNG", alpha: bool = False, **options: Any
) -> bytes:
    """A photo-like picture (a gradient under noise), so it does not compress to nothing;
    `options` for Pillow's writer (progressive=True for a JPEG)."""
    noise = Image.effect_noise((width, height), 64).convert("L")
    gradient = Image.linear_gradient("L").resize((width, height))
    picture = Image.merge("RGB", (gradient, noise, gradient.rotate(180)))
    if alpha:
        picture.putalpha(gradient)
    out = io.BytesIO()
    picture.save(out, format=kind, **options)
    return out.getvalue()


def _escaped(line: str) -> str:
    return line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def pdf(*pages: list[str] | bytes) -> bytes:
    """A PDF whose pages show these lines of text; a page given as bytes is those drawing
    instructions, compressed (FlateDecode) as PDF writers store them."""
    count = len(pages)
    # 1 catalog, 2 pages, 3 font, then a page and its content stream for each page.
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids ["
        + b" ".join(f"{4 + 2 * n} 0 R".encode() for n in range(count))
        + f"] /Count {count} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for n, lines in enumerate(pages):
        if isinstance(lines, bytes):
            stream, filters = zlib.compress(lines), b" /Filter /FlateDecode"
        else:
            text = " 0 -18 Td ".join(f"({_escaped(line)}) Tj" for line in lines)
            stream, filters = f"BT /F1 12 Tf 72 740 Td {text} ET".encode("latin-1"), b""
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * n} 0 R >>".encode()
        )
        objects.append(
            f"<< /Length {len(stream)}".encode()
            + filters
            + b" >>\nstream\n"
            + stream
            + b"\nendstream"
        )
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return bytes(out)
