"""fetch_url over https with the connection pinned to the checked address: the TLS server name
(SNI) and the certificate check still use the URL's host name, not the address. A TLS server
on 127.0.0.1 with a certificate made here by openssl; skipped where openssl is absent."""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app.tools.fetch_url import FetchUrlTool
from tests.tools.kit import asker
from tests.tools.test_fetch_url import kit, loopback_too

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is absent")

BODY = b"Served over TLS to whoever asked for pages.example."


def certificate(folder: Path, name: str) -> tuple[Path, Path]:
    cert, key = folder / f"{name}.pem", folder / f"{name}.key"
    command = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
    command += ["-keyout", str(key), "-out", str(cert), "-subj", f"/CN={name}"]
    command += ["-addext", f"subjectAltName=DNS:{name}"]
    subprocess.run(
        command,
        check=True,
        capture_output=True,
    )
    return cert, key


class TLSPage:
    """One plain-text page over TLS; records the server name each client asked for."""

    def __init__(self) -> None:
        self.server_names: list[str | None] = []
        self.hosts: list[str] = []
        self.port = 0

    async def serve(self, cert: Path, key: Path) -> asyncio.Server:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key)
        context.sni_callback = lambda sock, name, ctx: self.server_names.append(name)
        server = await asyncio.start_server(self._answer, "127.0.0.1", 0, ssl=context)
        self.port = server.sockets[0].getsockname()[1]
        return server

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()
            return
        for line in head.decode().split("\r\n"):
            if line.lower().startswith("host:"):
                self.hosts.append(line.split(":", 1)[1].strip())
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n"
            + f"Content-Length: {len(BODY)}\r\n\r\n".encode()
            + BODY
        )
        await writer.drain()
        writer.close()


@pytest.fixture
async def page(tmp_path: Path) -> AsyncIterator[tuple[TLSPage, Path, Path]]:
    served = TLSPage()
    cert, key = certificate(tmp_path, "pages.example")
    other, _ = certificate(tmp_path, "other.example")
    server = await served.serve(cert, key)
    async with server:
        yield served, cert, other


async def resolve(host: str, port: int) -> list[str]:
    return {"pages.example": ["127.0.0.1"]}[host]


async def test_the_name_is_sent_and_verified_while_the_address_is_pinned(
    page: tuple[TLSPage, Path, Path],
) -> None:
    served, cert, _ = page
    tool = FetchUrlTool(
        kit(private=False),
        allow=loopback_too,
        resolve=resolve,
        verify=ssl.create_default_context(cafile=str(cert)),
    )
    result = await tool.run(
        {"url": f"https://pages.example:{served.port}/"},
        asker=asker("C1", given=(f"https://pages.example:{served.port}/",)),
    )
    assert result.ok, result.text
    assert BODY.decode() in result.text
    assert served.server_names == ["pages.example"]
    assert served.hosts == [f"pages.example:{served.port}"]


async def test_a_certificate_for_another_name_is_refused(
    page: tuple[TLSPage, Path, Path],
) -> None:
    served, _, other = page
    tool = FetchUrlTool(
        kit(private=False),
        allow=loopback_too,
        resolve=resolve,
        verify=ssl.create_default_context(cafile=str(other)),
    )
    result = await tool.run(
        {"url": f"https://pages.example:{served.port}/"},
        asker=asker("C1", given=(f"https://pages.example:{served.port}/",)),
    )
    assert not result.ok and "could not fetch it (ConnectError)" in result.text
    assert served.hosts == []
