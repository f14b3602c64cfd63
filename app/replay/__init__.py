"""The offline replay: a developer's tool, not part of the service.

`python -m app.replay FILE` plays a conversation file through tomo's own code (signed events
into the ingress, routing, timers, judgment, reply) with time compressed, against a temporary
SQLite database and a local Slack stand-in, and prints a timeline.

- `cli`: the command line, the offline check and the summary.
- `conversation`: the conversation file (one JSON object a line) and its checks.
- `cast`: who is who (people, channels, the bot) and the signed event bodies sent for them.
- `run`: the replay itself: tomo started in-process, each line delivered at its time.
- `timeline`: what happened, as lines of the timeline (timers, judgments, replies).
- `slack`: the Slack stand-in tomo's client talks to; `offline`: LiteLLM's mock answers.
"""
