"""Jobs: the timers that decide when tomo judges or replies, and the process that runs them.

How they fit:
- `timers` (over `timer_store`): APScheduler 3 with an in-memory store. Each conversation has
  at most one judgment and one reply timer (`judgment:{channel}:{thread_ts}`,
  `reply:{channel}:{thread_ts}`), set and replaced on the ack path by
  `app.conversation.timer_policy`, plus the periodic jobs (memory, directory, prune).
- `supervisor`: when a timer fires, its job goes to the job worker (`JOB_WORKER=process`),
  a child process that the supervisor starts, pings, and replaces when it dies or hangs; with
  `JOB_WORKER=inline` the job runs on the web process's own event loop instead.
- `worker`: the job worker process (`python -m app.jobs.worker FD`), running the same
  judgment, reply and memory services the web process would; `protocol`: what the two say.
- Recovery: the store is only a cache. The database is the truth, and
  `app.conversation.recovery` gives every conversation still owed a judgment or a reply its timer
  back, at start-up and after the worker is replaced.
"""
