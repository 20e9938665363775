"""The work engine: one way to dispatch, redispatch and redeliver every kind of background record
(export files, schedule runs, workspace-export executions, package deliveries).

- `core`: what every kind shares and no kind varies: the job-id scheme, the lost-job and
  waiting-job checks against Redis, and `WorkKind`, the spec a kind declares its differences in.
- `kinds`: the registered kinds, one `WorkKind` each, in one tuple.
- `engine`: the periodic entry points (`dispatch_pending`, `redispatch_lost`,
  `redeliver_lapsed`), each one turn over every registered kind, and the staff requeue's lookup
  of a failed job's kind.

docs/architecture.md "The work engine" tells the whole story.
"""
