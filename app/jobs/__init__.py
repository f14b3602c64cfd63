"""Jobs: the timers that decide when tomo judges or replies, and where their jobs run.

How they fit:
- `kinds`: the kinds of job (judgment, reply, and the periodic memory, directory and prune)
  and the ids of a conversation's jobs (`judgment:{channel}:{thread_ts}`,
  `reply:{channel}:{thread_ts}`).
- `timers` (over `timer_store`): APScheduler 3 with an in-memory store; at most one judgment
  and one reply timer per conversation, set and replaced on the ack path by
  app.conversation.timing.policy, plus the periodic jobs.
- `runner`: where a job runs, behind one interface: `InlineJobs` (on the web process's event
  loop) or `supervisor.WorkerJobs` (in the job worker process, `python -m app.wiring.worker`, which
  the supervisor starts, pings, and replaces when it dies or hangs). `protocol` is what the
  two processes say over their socket; `child` is the worker's side of it.
- Recovery: the store is only a cache. The database is the truth, and
  app.conversation.timing.recovery gives every conversation still owed a judgment or a reply its
  timer back, at start-up and after the worker is replaced.
"""
