"""The work engine: one way to dispatch, redispatch and redeliver every kind of background record
(export files, schedule runs, workspace-export executions, package deliveries, export notices).

Below the capabilities, which use them:

- `queue`: the Redis client, the work queues by priority, and claim-then-enqueue.
- `leases`: how a running record's holder keeps it, and how a dead holder is told from a slow one.
- `work_rows`, `work_kind`: what a kind declares (its tables and columns; `WorkKind`, with its
  retry policy and the few transitions only it knows), and what no kind varies: the job-id
  scheme, the lost-job and waiting-job checks against Redis.
- `claims`: the one claim, written once from a kind's declaration, and the dispatches made of it
  (a capability dispatches what it admits through it).
- `candidates`, `requeue`: the lost and lapsed records of a kind, and a staff requeue of one.

Above them, since they name every kind:

- `kinds`: the registered kinds, each declared beside its capability's use cases, in one tuple.
- `engine`: the periodic entry points (`dispatch_pending`, `redispatch_lost`,
  `redeliver_lapsed`), each one turn over every registered kind, and the staff requeue's lookup
  of a failed job's kind.

docs/architecture.md "The work engine" tells the whole story.
"""
