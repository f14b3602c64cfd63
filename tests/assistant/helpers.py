"""What the tests of tomo's AI-app surfaces share."""

from __future__ import annotations

from typing import Any

from tests.conftest import Tomo, judgment_json, purpose_of, wait_for
from tests.fakes import FakeModel, FakeSlack


def answer_by_purpose(
    model: FakeModel, *, judgment: str = judgment_json(True), reply: str = "hello!"
) -> None:
    def responder(request: dict[str, Any]) -> str:
        return judgment if purpose_of(request) == "judgment" else reply

    model.responder = responder


async def settled(tomo: Tomo, status: str = "posted") -> None:
    """Wait until a claim is finished with `status` (after the post was stored)."""
    await wait_for(
        lambda: tomo.rows("SELECT 1 FROM reply WHERE status = :s", s=status),
        what=f"a {status} claim",
    )


async def feedback_rows(tomo: Tomo) -> list[dict[str, Any]]:
    return await tomo.rows("SELECT * FROM feedback ORDER BY id")


def with_blocks(slack: FakeSlack, posts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """FakeSlack's posts, each with its blocks where it has any."""
    result = []
    for post in posts:
        blocks = slack.blocks_of(post["channel"], post["ts"])
        result.append(post | ({"blocks": blocks} if blocks else {}))
    return result
