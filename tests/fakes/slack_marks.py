"""What FakeSlack adds to a message or thread without posting: reactions and the thread status.

Shapes from Slack's reference pages (docs.slack.dev/reference/methods/reactions.add,
reactions.remove, assistant.threads.setStatus): each answers `{"ok": true}`; reactions.add
refuses a second identical reaction with `already_reacted`, reactions.remove one that is not
there with `no_reaction`, both a message that does not exist with `message_not_found`. A
message's reactions come back in history as `"reactions": [{"name", "users", "count"}]`. The
thread status ("<App> is thinking...") is cleared by an empty status and by the app's next
post in the thread.

The AI app's marks (docs.slack.dev/reference/methods/assistant.threads.setSuggestedPrompts,
assistant.threads.setTitle): suggested prompts take `channel_id`, `prompts` (each `title` and
`message`; Slack shows at most four) and an optional `title`, and, since Slack's agent view,
an optional `thread_ts` (slack-sdk 3.43's "make thread_ts optional" change); a title needs
`channel_id`, `thread_ts` and `title`. `prompts()` and `titles()` read back what was set.
"""

from __future__ import annotations

from typing import Any

from tests.fakes.slack_workspace import Message, Params, SlackError, SlackWorkspace

MARK_METHODS = frozenset(
    {
        "reactions.add",
        "reactions.remove",
        "assistant.threads.setStatus",
        "assistant.threads.setSuggestedPrompts",
        "assistant.threads.setTitle",
    }
)
MAX_PROMPTS = 4


class SlackMarks(SlackWorkspace):
    def _clear_marks(self) -> None:
        with self._lock:
            self._statuses: dict[tuple[str, str], str] = {}
            self._prompts: list[dict[str, Any]] = []
            self._titles: dict[tuple[str, str], str] = {}

    def prompts(self) -> list[dict[str, Any]]:
        """Each setSuggestedPrompts call Slack took: channel, thread_ts, title, prompts."""
        with self._lock:
            return [dict(p) for p in self._prompts]

    def titles(self) -> dict[tuple[str, str], str]:
        """The title of each thread that has one, by (channel, thread_ts)."""
        with self._lock:
            return dict(self._titles)

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
                if method == "assistant.threads.setSuggestedPrompts":
                    return self._set_prompts(params)
                if method == "assistant.threads.setTitle":
                    return self._set_title(params)
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

    def _set_prompts(self, params: Params) -> dict[str, Any]:
        channel = str(params.get("channel_id") or "")
        if channel not in self._channels and channel not in self._history:
            raise SlackError("channel_not_found")
        prompts = params.get("prompts")
        if not isinstance(prompts, list) or not 1 <= len(prompts) <= MAX_PROMPTS:
            raise SlackError("invalid_arguments")
        for prompt in prompts:
            if not isinstance(prompt, dict) or not prompt.get("title") or not prompt.get("message"):
                raise SlackError("invalid_arguments")
        self._prompts.append(
            {
                "channel": channel,
                "thread_ts": params.get("thread_ts"),
                "title": params.get("title"),
                "prompts": prompts,
            }
        )
        return {"ok": True}

    def _set_title(self, params: Params) -> dict[str, Any]:
        channel = str(params.get("channel_id") or "")
        thread_ts = str(params.get("thread_ts") or "")
        if channel not in self._channels and channel not in self._history:
            raise SlackError("channel_not_found")
        if not thread_ts:
            raise SlackError("invalid_thread_ts")
        if not params.get("title"):
            raise SlackError("invalid_arguments")
        self._titles[(channel, thread_ts)] = str(params["title"])
        return {"ok": True}
