"""GET /admin/memories shows operators what the memory job wrote, behind the admin token."""

from __future__ import annotations

from tests.conftest import ADMIN_TOKEN, StartTomo, purpose_of, wait_for
from tests.fakes import FakeModel


async def test_memories_written_by_the_job_are_visible_to_operators(
    start_tomo: StartTomo, model: FakeModel
) -> None:
    model.responder = lambda r: "Alice is planning a trip" if purpose_of(r) == "memory" else None
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:

        async def known() -> bool:
            return (await tomo.rows("SELECT count(*) AS n FROM channel"))[0]["n"] >= 2

        await wait_for(known, what="the directory")
        ts = await tomo.message("I am planning a trip", user="U1")
        await wait_for(lambda: tomo.rows("SELECT ts FROM message"), what="the message")
        await tomo.runtime.memory.run()
        good = await tomo.client.get(
            "/admin/memories", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}
        )
        wrong = await tomo.client.get(
            "/admin/memories", headers={"Authorization": "Bearer not-the-token"}
        )
        missing = await tomo.client.get("/admin/memories")

    assert good.status_code == 200
    memories = good.json()["memories"]
    assert sorted((m["scope"], m["scope_id"], m["kind"]) for m in memories) == [
        ("channel", "C1", "long_term"),
        ("channel", "C1", "short_term"),
        ("workspace", "", "long_term"),
        ("workspace", "", "short_term"),
    ]
    for memory in memories:
        assert memory["content"] == "Alice is planning a trip"
        assert memory["model"] == "test-model"
        assert memory["updated_at"].endswith("Z")
        if memory["scope"] == "channel":
            assert memory["source_ts"] == ts  # the newest message the memory has seen
    assert wrong.status_code == 401 and missing.status_code == 401


async def test_memories_answer_404_without_an_admin_token(start_tomo: StartTomo) -> None:
    async with start_tomo(ADMIN_TOKEN=None) as tomo:
        response = await tomo.client.get(
            "/admin/memories", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}
        )
    assert response.status_code == 404
