"""The kinds of job tomo runs, and the ids that name a conversation's jobs.

Each conversation (a thread, or a channel's top level with thread_ts "") has at most one
pending judgment and one pending reply, named `judgment:{channel}:{thread_ts}` and
`reply:{channel}:{thread_ts}`, and at most one call waiting for a person's approval,
`approval:{channel}:{thread_ts}`; a channel with a digest schedule has one pending digest,
`digest:{channel}`; the periodic jobs go by their kind's name.
"""

from __future__ import annotations

from enum import StrEnum


class JobKind(StrEnum):
    JUDGMENT = "judgment"  # should tomo join this conversation, and when?
    REPLY = "reply"  # answer the conversation
    DIGEST = "digest"  # post a channel's scheduled digest (app.digest)
    MEMORY = "memory"  # refresh the memories (periodic)
    DIRECTORY = "directory"  # refresh the channels tomo is in (periodic)
    PRUNE = "prune"  # forget old event ids (periodic)
    PURGE = "purge"  # delete what is older than the retention (periodic)
    STALLED = "stalled"  # run again what a dead instance left running (periodic, Procrastinate)
    APPROVAL = "approval"  # a call waiting for a person's approval: decided, or its wait over


CONVERSATION_JOBS = (JobKind.JUDGMENT, JobKind.REPLY)
# The jobs that belong to one channel: what the admin page lists, what a channel's erasure
# cancels, what a dead instance's stall hands back (/admin/jobs lists every job).
CHANNEL_JOBS = (*CONVERSATION_JOBS, JobKind.DIGEST, JobKind.APPROVAL)


def job_id(kind: JobKind, channel: str, thread_ts: str) -> str:
    if kind is JobKind.DIGEST:
        return f"{kind}:{channel}"  # one per channel, whatever thread_ts it was set with
    return f"{kind}:{channel}:{thread_ts}"
