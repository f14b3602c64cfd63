"""The ASGI app: `uvicorn app.main:app`.

`app` is built when uvicorn first asks for it, before uvicorn logs its first line: the settings
are read then, so an invalid one stops the process with its message alone (a SystemExit, no
traceback), and logging is set up then, so with LOG_FORMAT=json every line is JSON.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from fastapi import FastAPI
from starlette.types import Message, Receive, Scope, Send

from app.db.reachable import DatabaseUnreachable
from app.observability.logs import setup_logging
from app.routes import (
    admin,
    admin_api,
    admin_feedback,
    admin_page,
    commands,
    events,
    health,
    interactions,
    metrics,
    ready,
)
from app.settings import Settings, load_settings
from app.wiring.lifespan import running


class Tomo(FastAPI):
    """FastAPI, except that Slack's POST /slack/events, the hot path, goes straight to its
    handler (app.routes.events.serve) rather than through the middleware stack."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and scope["path"] == events.PATH:
            scope["app"] = self
            await events.serve(scope, receive, send)
        elif scope["type"] == "lifespan":
            await super().__call__(scope, receive, self._plainly(send))
        else:
            await super().__call__(scope, receive, send)

    def _plainly(self, send: Send) -> Send:
        """A start-up stopped by a problem an operator fixes (the database unreachable) is
        reported as its one block, not as Starlette's traceback of it."""

        async def sending(message: Message) -> None:
            problem = getattr(self.state, "startup_problem", None)
            if message["type"] == "lifespan.startup.failed" and problem:
                message = {**message, "message": problem}
            await send(message)

        return sending


def create_app(settings: Settings | None = None) -> FastAPI:
    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        resolved = settings or load_settings()
        setup_logging(level=resolved.LOG_LEVEL, fmt=resolved.LOG_FORMAT)
        async with contextlib.AsyncExitStack() as stack:
            try:
                runtime = await stack.enter_async_context(running(resolved))
            except DatabaseUnreachable as error:
                app.state.startup_problem = str(error)
                raise
            app.state.runtime = runtime
            yield

    app = Tomo(title="tomo", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.router.routes.append(events.route)
    app.include_router(commands.router)
    app.include_router(interactions.router)
    app.include_router(health.router)
    app.include_router(ready.router)
    app.include_router(metrics.router)
    app.include_router(admin.router)
    app.include_router(admin_api.router)
    app.include_router(admin_feedback.router)
    app.include_router(admin_page.router)
    return app


def __getattr__(name: str) -> FastAPI:
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    settings = load_settings()
    setup_logging(level=settings.LOG_LEVEL, fmt=settings.LOG_FORMAT)
    application = globals()["app"] = create_app(settings)
    return application
