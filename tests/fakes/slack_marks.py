"""What FakeSlack adds to a message or thread without posting: reactions and the thread status.

Shapes from Slack's reference pages (docs.slack.dev/reference/methods/reactions.add,
reactions.remove, assistant.threads.setStatus): each answers `{"ok": true}`; reactions.add
refuses a second identical reaction with `already_reacted`, reactions.remove one that is not
there with `no_reaction`, both a message that does not exist with `message_not_found`. A
message's reactions come back in history as `"reactions": [{"name", "users", "count"}]`. The
thread status ("<App> is thinking...") is cleared by an empty status and by the app's next
post in the thread.
"""

from __future__ import annotations

from typing import Any

from tests.fakes.slack_workspace import Message, Params, SlackError, SlackWorkspace

MARK_METHODS = frozenset({"reactions.add", "reactions.remove", "assistant.threads.setStatus"})


class SlackMarks(SlackWorkspace):
    def _clear_marks(self) -> None:
        with self._lock:
            self._statuses: dict[tuple[str, str], str] = {}

    def reactions(self, channel: str, ts: str) -> list[str]:
        """The names of the reactions on a message, in the order they were added."""
        with self._lock:
            message = self._find(channel, ts)
            return [r["name"] for r in (message or {}).get("reactions", [])]

    def thread_status(self, channel: str, thread_ts: str) -> str:
        """The status shown under the thread now ("" when none)."""
        with self._lock:
            return self._statuses.get((channel, thread_ts), "")

    def answer_mark(self, method: str, params: Params) -> dict[str, Any]:
        with self._lock:
            try:
                if method == "assistant.threads.setStatus":
                    return self._set_status(params)
                return self._react(params, add=method == "reactions.add")
            except SlackError as exc:
                return {"ok": False, "error": str(exc)}

    def after_post(self, channel: str, thread_ts: str | None) -> None:
        """Slack clears the thread status once the app posts in the thread."""
        with self._lock:
            self._statuses.pop((channel, thread_ts or ""), None)

    # The methods below run with the lock held.
    def _find(self, channel: str, ts: str) -> Message | None:
        return next((m for m in self._history.get(channel, []) if m["ts"] == ts), None)

    def _react(self, params: Params, *, add: bool) -> dict[str, Any]:
        name = str(params.get("name") or "")
        if not name:
            raise SlackError("invalid_name")
        message = self._find(str(params.get("channel") or ""), str(params.get("timestamp") or ""))
        if message is None:
            raise SlackError("message_not_found")
        reactions: list[dict[str, Any]] = message.setdefault("reactions", [])
        mine = next((r for r in reactions if r["name"] == name), None)
        if add:
            if mine is not None and self.bot_user_id in mine["users"]:
                raise SlackError("already_reacted")
            if mine is None:
                mine = {"name": name, "users": [], "count": 0}
                reactions.append(mine)
            mine["users"].append(self.bot_user_id)
        else:
            if mine is None or self.bot_user_id not in mine["users"]:
                raise SlackError("no_reaction")
            mine["users"].remove(self.bot_user_id)
            if not mine["users"]:
                reactions.remove(mine)
        if mine in reactions:
            mine["count"] = len(mine["users"])
        if not reactions:
            del message["reactions"]
        return {"ok": True}

    def _set_status(self, params: Params) -> dict[str, Any]:
        channel = str(params.get("channel_id") or "")
        thread_ts = str(params.get("thread_ts") or "")
        if channel not in self._channels and channel not in self._history:
            raise SlackError("channel_not_found")
        if not thread_ts:
            raise SlackError("invalid_thread_ts")
        status = str(params.get("status") or "")
        if status:
            self._statuses[(channel, thread_ts)] = status
        else:
            self._statuses.pop((channel, thread_ts), None)
        return {"ok": True}
