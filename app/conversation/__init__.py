"""The conversation: an event becomes a judgment or a reply, and a posted message.

`intake` takes a verified event (read, routed by `routing`, recorded) and hands a person's
message to the `timer_policy`, which sets its conversation's timers: a reply now, or a
`judgment` after the quiet wait. Both jobs share `job` (lock, context) and `skips`. A reply
claims its message (`claims`), posts it at most once (`posting`) or, asked for by a person,
streams it as the model writes it (`streaming`: `stream_text` makes the text safe piece by
piece, `stream_writer` writes the messages), with the `on_it` sign up meanwhile;
`channel_modes` and `own_voice` say when tomo holds back; `thread_history` reads a thread
from Slack; `recovery` gives owed conversations their timers back after a restart.
"""
