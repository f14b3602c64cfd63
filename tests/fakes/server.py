"""Run an ASGI app under uvicorn on a background thread, bound to 127.0.0.1."""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType
from typing import Self

import uvicorn
from starlette.types import ASGIApp

HOST = "127.0.0.1"


class ServerThread:
    """Serve ``app`` on ``127.0.0.1`` with an OS-chosen free port.

    ``start()`` blocks until the server accepts TCP connections; ``stop()`` asks
    uvicorn to exit and joins the thread. ``base_url`` is ``http://127.0.0.1:PORT``
    (no trailing slash) and is available after ``start()``.
    """

    def __init__(self, app: ASGIApp, *, name: str = "fake-server", lifespan: str = "off") -> None:
        """`lifespan` "on": the app's lifespan runs (an app that starts something in it)."""
        self._app = app
        self._name = name
        self._lifespan = lifespan
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None
        self.port: int = 0
        self.base_url: str = ""

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, timeout: float = 30.0) -> None:
        if self.running:
            raise RuntimeError(f"{self._name} is already running")
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, 0))
        self._sock = sock
        self.port = sock.getsockname()[1]
        self.base_url = f"http://{HOST}:{self.port}"
        config = uvicorn.Config(
            self._app,
            log_level="warning",
            access_log=False,
            lifespan=self._lifespan,
            ws="none",
            loop="asyncio",
            timeout_graceful_shutdown=1,
            # Idle connections stay open (uvicorn closes them after 5 s): a client's pooled
            # connection closed just as it sends fails with "Server disconnected", which a
            # slow machine made likely (an Anthropic-model judgment failed so).
            timeout_keep_alive=300,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name=self._name, daemon=True
        )
        self._thread.start()
        self._wait_until_accepting(timeout)

    def _wait_until_accepting(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._thread is None or not self._thread.is_alive():
                raise RuntimeError(f"{self._name} thread died during startup")
            if self._server is not None and self._server.started:
                try:
                    with socket.create_connection((HOST, self.port), timeout=0.5):
                        return
                except OSError:
                    pass
            time.sleep(0.005)
        self.stop()
        raise RuntimeError(f"{self._name} did not start within {timeout}s")

    def stop(self, timeout: float = 5.0) -> None:
        server, thread = self._server, self._thread
        if server is not None:
            server.should_exit = True
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive() and server is not None:
                server.force_exit = True
                thread.join(timeout)
        if self._sock is not None:
            self._sock.close()
        self._server = None
        self._thread = None
        self._sock = None


class Served:
    """Start, stop and `with` for a stand-in serving on its ServerThread `_server`."""

    _server: ServerThread

    def start(self) -> Self:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
