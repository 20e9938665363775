"""One lifecycle transition: the guarded UPDATE of one row (INV-12).

Every lifecycle in the domain (files, schedules, schedule runs, recipient deliveries, message
templates, workspace exports and their volumes and packages, export notices, export suspension)
moves a row by one conditional UPDATE whose WHERE clause names the state it starts from, and
after an attempt started the attempt it acts for. The guard is in the statement, never checked
beforehand, so two processes racing on one row cannot both move it.

One commit rule: `apply` never commits. The lifecycle function commits right after it when the
transition is a fact the next process relies on (a claim, a started attempt, a lease, a settled
row), and otherwise says "Not committed" in its docstring: its caller commits the transition
with what belongs in the same transaction (an audit event, the run's attempt row, the file the
run admitted). A refused transition rolls the session back, so nothing its caller wrote before
it in that transaction is committed afterwards by mistake, and raises TransitionRefused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from sqlalchemy import ColumnElement, update

from app.domain.errors import TransitionRefused
from app.extensions import Model, db


def apply(
    model: type[Model],
    where: Iterable[ColumnElement[bool]],
    values: Mapping[str, Any],
    refusal: str,
    returning: Any = None,
) -> Any:
    """UPDATE the one `model` row `where` names (its key and the guard) with `values`; returns the
    changed row's `returning` column (its id unless another is named). Refused, with the sentence
    `refusal`, when no row matches: the row is not in the state the guard names (any more)."""
    column = model.__table__.c.id if returning is None else returning
    row = db.session.execute(
        update(model).where(*where).values(**values).returning(column).execution_options(synchronize_session=False)
    ).one_or_none()
    if row is None:
        db.session.rollback()
        raise TransitionRefused(refusal)
    return row[0]


# A lifecycle's transition of one row by its id: (id, guard, values, what it does) → `returning`.
RowTransition = Callable[[int, Iterable[ColumnElement[bool]], Mapping[str, Any], str], Any]


def of_rows(model: type[Model], noun: str, returning: Any = None) -> RowTransition:
    """`apply` for one `model` row by its id, refused with "<noun> <id> cannot <action> now"."""
    key = model.__table__.c.id

    def apply_to(record_id: int, guard: Iterable[ColumnElement[bool]], values: Mapping[str, Any], action: str) -> Any:
        return apply(model, [key == record_id, *guard], values, f"{noun} {record_id} cannot {action} now", returning)

    return apply_to
