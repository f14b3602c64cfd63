"""`/tomo forget` deletes the channel's stored messages written before that moment, with what
was read of their files (the memories are app.memory.control's). A deletion cut short is
finished by the next purge, which deletes what a channel's forget record still covers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlmodel import col

from app.db.models import Message
from app.recording.recorder import Recorder
from app.retention.batches import delete_in_batches, table_of
from app.slack.files import files_from_json


@dataclass(frozen=True)
class ForgottenMessages:
    messages: int
    files: int  # the files those messages carried


async def forget_messages(recorder: Recorder, *, channel: str, before: float) -> ForgottenMessages:
    rows: list[Any] = []
    where = (col(Message.channel) == channel) & (col(Message.created_at) < before)
    count = await delete_in_batches(
        recorder,
        table_of(Message),
        where,
        returning=[col(Message.files)],
        kept=rows,
    )
    files = sum(len(files_from_json(row[0])) for row in rows if row[0])
    return ForgottenMessages(messages=count, files=files)
