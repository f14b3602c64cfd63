"""The database at start-up: reached, or one short block saying that it cannot be and why, naming
DATABASE_URL with its password hidden, as the settings errors are (app.settings.report), rather
than a driver's traceback."""

from __future__ import annotations

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.engine import create_engine


class DatabaseUnreachable(Exception):
    """Start-up stops: the database cannot be reached. Its message is the block to print."""


def shown_url(database_url: str) -> str:
    """DATABASE_URL as an operator may see it: the password as ***."""
    try:
        return make_url(database_url).render_as_string(hide_password=True)
    except ArgumentError:
        return "(not a URL)"


def _reason(error: BaseException) -> str:
    """The driver's own words, first line only: 'Connect call failed', 'password
    authentication failed for user "tomo"', 'database "x" does not exist'."""
    cause = getattr(error, "orig", None) or error
    text = str(cause).strip().splitlines()
    return (text[0] if text else "") or type(cause).__name__


def explain(database_url: str, error: BaseException) -> DatabaseUnreachable:
    refused = isinstance(error, DBAPIError) and not isinstance(
        getattr(error, "orig", None), OSError
    )
    return DatabaseUnreachable(
        "\n".join(
            [
                "tomo cannot start: the database "
                + ("refuses the connection:" if refused else "cannot be reached:"),
                f"  DATABASE_URL: {shown_url(database_url)}",
                f"  {_reason(error)}",
                "Check DATABASE_URL (environment variables, or .env here), and "
                + (
                    "that its folder can be written."
                    if database_url.startswith("sqlite")
                    else "that the database server runs and lets this host in."
                ),
            ]
        )
    )


async def open_database(database_url: str) -> AsyncEngine:
    """The engine, once a first connection succeeded (the pool keeps it for what follows)."""
    try:
        engine = create_engine(database_url)
    except OSError as error:  # SQLite's folder cannot be made
        raise explain(database_url, error) from error
    try:
        async with engine.connect():
            pass
    except (OSError, DBAPIError) as error:
        await engine.dispose()
        raise explain(database_url, error) from error
    return engine
