"""Storing what happens: the events Slack sends (acknowledged once they are on disk) and the
messages fetched from Slack or posted by tomo, each through the gate (app.gate.rules).

- `recorder`: the durable part of the ack path, commits shared by concurrent requests.
- `ingest`: one group commit's deliveries written (messages, edits, deletions, Slack's facts).
- `deliveries`: what the recorder is handed and answers, and a new message's row.
- `messages`: messages that arrive outside the Events API (history fetches, tomo's posts).
- `isolation`: when a group commit fails, whether it was the database or one event's values.
"""
