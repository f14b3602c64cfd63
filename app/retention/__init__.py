"""What tomo keeps, and for how long (docs/data-and-privacy.md).

- `batches`: deleting many rows a few hundred at a time, each batch its own commit.
- `purge`: the periodic purge of what is older than MESSAGE_RETENTION_DAYS, of messages
  written before a `/tomo forget`, and of what tomo kept of channels it was removed from.
- `erase`: a channel deleted in Slack, or the app uninstalled: timers stopped, everything
  tomo kept of it deleted, resumed after a restart.
"""
