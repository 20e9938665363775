"""Run as each recipient: the recipients grouped by the access that shapes their file, and the
run's file row for each group (app/domain/schedules/recipient_access.py describes the access).

Each person's access is read as it is now, as if they asked for the file themselves; a person who
can no longer read the source is set apart, to be skipped with that reason. A group's file row is
inserted once per (run, access), so a run delivered again finds the file its earlier attempt began
and no access gets two files.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import select

from app.domain.people.access import RequesterContext, current_context
from app.domain.schedules import recipient_access
from app.extensions import db, insert_ignoring_duplicates
from app.models.schedule import Schedule, ScheduleRecipient, ScheduleRunFile
from app.models.types import database_now


@dataclass
class AccessGroup:
    """Recipients whose access makes the same file; the first of them requests it."""

    key: str
    described: dict
    requester: RequesterContext
    recipients: list[ScheduleRecipient] = field(default_factory=list)


@dataclass
class GroupedRecipients:
    groups: list[AccessGroup]
    # People who can no longer read the schedule's source.
    lost_access: list[ScheduleRecipient]
    # No longer members, or addresses: the delivery rules skip them with their own reasons.
    others: list[ScheduleRecipient]


def grouped(schedule: Schedule, dataset: str) -> GroupedRecipients:
    """The schedule's recipients, in order, grouped by their access to `dataset` now."""
    groups: dict[str, AccessGroup] = {}
    lost: list[ScheduleRecipient] = []
    others: list[ScheduleRecipient] = []
    for recipient in schedule.recipients:
        access = (
            current_context(schedule.workspace_id, recipient.person_id) if recipient.person_id is not None else None
        )
        if access is None:
            others.append(recipient)
            continue
        if not access.can_read_dataset(dataset):
            lost.append(recipient)
            continue
        described = recipient_access.description(access, dataset)
        key = recipient_access.key(described)
        groups.setdefault(key, AccessGroup(key, described, access)).recipients.append(recipient)
    return GroupedRecipients(list(groups.values()), lost, others)


def run_file(run_id: int, group: AccessGroup) -> ScheduleRunFile:
    """The run's file row for the group's access, inserted if it is not there yet. Committed."""
    db.session.execute(
        insert_ignoring_duplicates(ScheduleRunFile.__table__, ["run_id", "access_key"]).values(
            run_id=run_id,
            access_key=group.key,
            access=group.described,
            requester_id=group.requester.person_id,
            created_at=database_now(),
        )
    )
    db.session.commit()
    return db.session.scalars(
        select(ScheduleRunFile)
        .where(ScheduleRunFile.run_id == run_id, ScheduleRunFile.access_key == group.key)
        .execution_options(populate_existing=True)
    ).one()
