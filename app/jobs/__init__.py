"""Jobs: the timers that decide when tomo judges or replies, and the process that runs them.

- `supervisor`: the web process's side of the job worker: starts it, sends it each job that
  fires, watches it, and replaces it when it dies or hangs.
- `worker`: the job worker process itself (`python -m app.jobs.worker FD`).
- `protocol`: the lines the two exchange.
"""
