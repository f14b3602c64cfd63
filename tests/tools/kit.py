"""A Kit built from a running tomo, as the reply loop builds one: the tools are constructed
with it and run as a reply would run them."""

from __future__ import annotations

from app.gate.scopes import Scopes
from app.tools.base import Asker
from app.tools.given import GivenUrls
from app.tools.kit import Kit
from tests.conftest import Tomo


def kit_of(tomo: Tomo) -> Kit:
    runtime = tomo.runtime
    return Kit(
        settings=runtime.settings,
        engine=runtime.engine,
        slack=runtime.slack,
        identity=runtime.identity,
        llm=runtime.llm,
        scopes=Scopes(
            engine=runtime.engine,
            slack=runtime.slack,
            identity=runtime.identity,
            learn=lambda people: runtime.directory.learn(channel=None, people=people),
        ),
        recorder=runtime.recorder,
    )


def asker(
    channel: str, *, claim: int = 1, user: str | None = "U1", given: tuple[str, ...] = ()
) -> Asker:
    """`given`: text the reply was given (a person's message), whose URLs fetch_url may read."""
    return Asker(
        team_id="T0001",
        channel=channel,
        thread_ts="",
        user_id=user,
        claim_id=claim,
        given=GivenUrls(given),
    )
