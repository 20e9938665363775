"""Where a kind of background work keeps its records and their claims: the declaration the work
engine reads to write every kind's claim, its dispatch turns and its staff requeue once
(app/services/work/claims.py, candidates.py, requeue.py).

A record is a row of `model`, moved by its own lifecycle (app/domain) through `queued` statuses,
waiting for a job, to `running`, held by one attempt under a lease. The claim that names the job
carrying it is recorded on `claims`: the record's own row for every kind but files, whose claims
stay on their outbox row (INV-01), one per file (`record_key`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, select
from sqlalchemy.orm import InstrumentedAttribute

from app.extensions import Model
from app.models.types import Moment

# A column of a declared table, as SQLAlchemy's mapped classes give it.
Column = InstrumentedAttribute[Any]


@dataclass(frozen=True)
class WorkRows:
    """A kind's tables and columns, with the statuses its lifecycle moves a record through.

    `active` are the statuses a record may still take a job in (a staff requeue refuses the
    others); `running` the one whose holder keeps a lease. `waiting(now)` says a record waits for
    a job by `now` (queued, and whatever else the kind's dispatch needs: a retry's time come, a
    destination enabled). `claimable(moment)`, the claim's guard, is "one of `active`" unless the
    kind's lifecycle says otherwise. `dispatch_count`, when declared, counts the claims.
    """

    model: type[Model]
    status: Column
    active: Sequence[str]
    running: str
    waiting: Callable[[datetime], ColumnElement[bool]]
    attempt: Column
    lease_holder: Column
    lease_expires_at: Column
    claims: type[Model]
    record_key: Column
    job_id: Column
    dispatched_at: Column
    dispatch_count: Column | None = None
    claimable: Callable[[Moment], ColumnElement[bool]] | None = None

    @classmethod
    def leased(
        cls,
        model: type[Model],
        *,
        active: Sequence[str],
        running: str,
        waiting: Callable[[datetime], ColumnElement[bool]],
        claims: type[Model] | None = None,
        record_key: Column | None = None,
        dispatch_count: Column | None = None,
        claimable: Callable[[Moment], ColumnElement[bool]] | None = None,
    ) -> WorkRows:
        """The rows of a kind whose columns have the names every leased model gives them
        (`status`, `attempt_count`, `lease_holder`, `lease_expires_at`; `job_id` and
        `dispatched_at` on `claims`, the record's own row unless it keeps its claims apart)."""
        claimed_on = claims or model
        return cls(
            model=model,
            status=_column(model, "status"),
            active=active,
            running=running,
            waiting=waiting,
            attempt=_column(model, "attempt_count"),
            lease_holder=_column(model, "lease_holder"),
            lease_expires_at=_column(model, "lease_expires_at"),
            claims=claimed_on,
            record_key=_column(model, "id") if record_key is None else record_key,
            job_id=_column(claimed_on, "job_id"),
            dispatched_at=_column(claimed_on, "dispatched_at"),
            dispatch_count=dispatch_count,
            claimable=claimable,
        )

    @property
    def record_id(self) -> Column:
        return self.model.id  # type: ignore[attr-defined]

    def select(self, *columns: Any) -> Select[Any]:
        """SELECT `columns` of the records joined with their claims (one row each)."""
        statement = select(*columns).select_from(self.model)
        if self.claims is not self.model:
            statement = statement.join(self.claims, self.record_key == self.record_id)
        return statement

    def of_record(self, condition: ColumnElement[bool]) -> ColumnElement[bool]:
        """`condition` on the record, said of its claim row (the same row for all but files)."""
        if self.claims is self.model:
            return condition
        return self.record_key.in_(select(self.record_id).where(condition))

    @property
    def claimed_while_running(self) -> bool:
        """Whether the claim takes a running record (a redelivery): then a newer dispatch of a
        running record may still be on its way into Redis. A kind that declares its own guard
        (a delivery: pending, or failed and due) claims only records no attempt holds."""
        return self.claimable is None and self.running in self.active

    def may_claim(self, moment: Moment) -> ColumnElement[bool]:
        """The claim's guard on the record's state: it may still take a job."""
        if self.claimable is not None:
            return self.claimable(moment)
        return self.status.in_(self.active)


def _column(model: type[Model], name: str) -> Column:
    """A mapped class's column by name (type[Model] does not know the columns a model declares)."""
    column: Column = getattr(model, name)
    return column
