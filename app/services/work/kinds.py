"""The registered kinds of background work (docs/architecture.md "The work engine"). Each kind
declares itself, a `WorkKind` beside its capability's use cases: its tables and columns, its
retry policy as data, and the few transitions only it knows (giving a record up). Adding a kind
is its declaration, a job function, and a place in `WORK_KINDS`."""

from __future__ import annotations

from app.services.files.file_work import FILES
from app.services.schedules.run_work import RUNS
from app.services.work.work_kind import WorkKind
from app.services.workspace_export.delivery_work import DELIVERIES
from app.services.workspace_export.execution_work import EXECUTIONS
from app.services.workspace_export.notice_work import NOTICES

WORK_KINDS: tuple[WorkKind, ...] = (FILES, RUNS, EXECUTIONS, DELIVERIES, NOTICES)
