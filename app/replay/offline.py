"""Offline answers for the replay, given to LiteLLM as its own `mock_response`.

No model is asked, so these are rules, not judgment: respond to questions (after a short
delay), stay silent otherwise, and reply with a labelled stand-in in the conversation's language.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from app.domain import is_japanese
from app.replay.timeline import CURRENT_JOB

QUESTION_DELAY_SECONDS = 30
_QUESTION = re.compile("[?\uff1f]|(?:か|かな|かね|っけ)[。\uff01!…\\s]*$")  # full-width ? and ! too

TextOf = Callable[[str, str], str | None]  # (channel, ts) -> the message's text


def is_question(text: str) -> bool:
    return bool(_QUESTION.search(text.strip()))


class OfflineAnswers:
    def __init__(self, text_of: TextOf) -> None:
        self._text_of = text_of

    def _latest_text(self) -> str:
        job = CURRENT_JOB.get()
        if job is None:
            return ""
        return self._text_of(job.channel, job.latest_ts) or ""

    def __call__(self, purpose: str, messages: list[dict[str, str]]) -> str:
        text = self._latest_text()
        if purpose == "judgment":
            return self.judgment(text)
        if purpose == "reply":
            return self.reply(text)
        return "(offline mock memory: nothing was summarised)"

    def judgment(self, text: str) -> str:
        if is_question(text):
            verdict = {
                "should_respond": True,
                "reason": "offline mock: a question nobody has answered yet",
                "confidence": 0.8,
                "delay_seconds": QUESTION_DELAY_SECONDS,
            }
        else:
            verdict = {
                "should_respond": False,
                "reason": "offline mock: no question in the latest message, so tomo stays quiet",
                "confidence": 0.6,
                "delay_seconds": None,
            }
        return json.dumps(verdict)

    def reply(self, text: str) -> str:
        if is_japanese(text):
            return "【オフラインのモック返信】いい質問ですね。本物のモデルならここで答えます。"
        return "(offline mock reply) Good question! A real model would answer here."
