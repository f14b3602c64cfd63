"""What may be stored and shown (docs/data-and-privacy.md#what-never-comes-back, docs/tools.md):
one place decides it, and every path that stores or shows a message goes through it.

- `rules`: the gate itself. Retention, channels tomo was removed from, the workspace gone,
  a channel's `/tomo forget`, Slack's deletions: whether a message may be stored, and whether
  it may be shown (by a tool, in a prompt).
- `scope`, `scopes`, `standing`: who may see what, from where the reply goes and who is in
  that conversation (guests and people of other organisations read less), following Slack
  now: the facts are written to the database with the events that change them.
"""
