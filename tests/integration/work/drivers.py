"""One driver per kind of background work, for the engine's tests with real workers.

A driver says what the engine's tests cannot say once for every kind: how to make a record of the
kind ready to run (tests/factories.py and the product's own admission and production), which lock
stops its job at a known point inside a step while its lease renewal goes on, which status is its
success, where its claimed job is recorded, and what one completion of it leaves outside the
database. `DRIVERS` is keyed by the kind's `name` in `app.services.work.kinds.WORK_KINDS`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import select

from app.domain.people.access import current_context
from app.domain.schedules import destination_delivery
from app.extensions import db
from app.models import ExportExecution, ExportFile, ExportPackage, Membership, Person, ScheduleRun
from app.models.export_destination import ExportDestination
from app.models.export_notice import ExportNotice
from app.models.export_package import ExportVolume
from app.models.package_delivery import ExportDelivery
from app.models.schedule import RecipientDelivery, RunTrigger, Schedule, ScheduleRecipient
from app.models.schedule_destination_delivery import DestinationDelivery
from app.models.types import utcnow
from app.services.files.file_requests import QueryFileOptions, request_query_file
from app.services.schedules import destination_deliveries
from app.services.schedules.schedule_admission import admit_run
from app.services.schedules.schedule_runs import process_run
from app.services.work.work_kind import LOST_AFTER
from app.services.workspace_export.package_delivery import package_keys, relative_key
from app.services.workspace_export.package_production import run_execution
from tests import factories
from tests.fixtures.workers import TIMESHEET_TABLE
from tests.integration.packages.package_reading import ALL_DATASETS, fill_every_dataset
from tests.integration.work.pool import Outside

# A job reading the timesheet table waits inside its query: a file's or a run's rows, an
# execution's count in its snapshot.
_TIMESHEET_LOCKED = f"LOCK TABLE {TIMESHEET_TABLE} IN ACCESS EXCLUSIVE MODE"
# A delivery reads its package's volumes once it holds its lease, before it copies anything.
_VOLUMES_LOCKED = f"LOCK TABLE {ExportVolume.__tablename__} IN ACCESS EXCLUSIVE MODE"
# A notice's attempt asks who hears about its subject (the workspace's memberships) once it holds
# its lease, before it mails anyone; no turn of the engine reads them.
_MEMBERSHIPS_LOCKED = f"LOCK TABLE {Membership.__tablename__} IN ACCESS EXCLUSIVE MODE"


@dataclass(frozen=True)
class Driver:
    """`make_ready()` commits a record the engine's next `dispatch_pending` turn dispatches, and
    returns its id; `hold` is the lock statement that stops its job mid-step; `succeeded` the
    record's status once it completed; `job_id(id)` the job its latest dispatch claimed;
    `assert_done_once(ids, outside)` fails unless what is outside the database is exactly what
    one completion of each record leaves; `after_handover(id)` is what must happen, beyond the
    engine's turns, between a dead attempt being handed over and the next one starting."""

    model: type
    hold: str
    succeeded: str
    make_ready: Callable[[], int]
    job_id: Callable[[int], str | None]
    assert_done_once: Callable[[list[int], Outside], None]
    after_handover: Callable[[int], None] = lambda record_id: None

    def row(self, record_id: int):
        """The record as the database holds it now (nothing cached)."""
        db.session.rollback()
        return db.session.get_one(self.model, record_id, populate_existing=True)


def _workspace_with_rows():
    """A workspace, a member who reads every dataset (and may send schedules outside it), a few
    timesheet rows and a saved query of them."""
    workspace = factories.make_workspace()
    member = factories.make_member(workspace, grants=["schedules.external_recipients"]).person
    employee = factories.make_team_member(factories.make_team(workspace))
    for value in factories.hostile_values()[:5]:
        factories.make_timesheet_entry(employee, note=value)
    return workspace, member, factories.make_query(workspace, member)


# Export files


def _ready_file() -> int:
    workspace, member, query = _workspace_with_rows()
    access = current_context(workspace.id, member.id)
    assert access is not None
    return request_query_file(access, query, QueryFileOptions(format="csv"), dispatch_now=False).id


def _file_job(export_id: int) -> str | None:
    return FILES.row(export_id).outbox.job_id


def _files_done_once(export_ids: list[int], outside: Outside) -> None:
    assert outside.stored() == {FILES.row(export_id).storage_key for export_id in export_ids}
    assert outside.delivered() == set() and outside.recipients() == Counter()


FILES = Driver(
    model=ExportFile,
    hold=_TIMESHEET_LOCKED,
    succeeded="succeeded",
    make_ready=_ready_file,
    job_id=_file_job,
    assert_done_once=_files_done_once,
)


# Schedule runs


def _ready_run() -> int:
    """A run admitted by hand, of a schedule to its owner, a colleague and an outside address."""
    workspace, owner, query = _workspace_with_rows()
    colleague = factories.make_member(workspace).person
    schedule = factories.make_schedule(query, owner)
    schedule.recipients += [
        ScheduleRecipient(person_id=colleague.id, address_key=f"person:{colleague.id}", position=1),
        ScheduleRecipient(email="outside@example.org", address_key="outside@example.org", position=2),
    ]
    db.session.commit()
    run = admit_run(
        schedule_id=schedule.id,
        workspace_id=workspace.id,
        occurrence_at=(utcnow() - timedelta(minutes=5)).replace(second=0, microsecond=0),
        trigger=RunTrigger.MANUAL,
    )
    assert run is not None
    return run.id


def _run_addresses(run_id: int) -> list[str]:
    """The address of each recipient row of the run."""
    return [
        row.email or db.session.get_one(Person, row.person_id).email
        for row in db.session.scalars(select(RecipientDelivery).where(RecipientDelivery.run_id == run_id))
    ]


def _runs_done_once(run_ids: list[int], outside: Outside) -> None:
    runs = [RUNS.row(run_id) for run_id in run_ids]
    assert outside.stored() == {db.session.get_one(ExportFile, run.export_id).storage_key for run in runs}
    expected = Counter(address for run in runs for address in _run_addresses(run.id))
    assert sum(expected.values()) == 3 * len(runs)  # each run made its three recipient rows
    assert outside.recipients() == expected
    assert outside.delivered() == set()


RUNS = Driver(
    model=ScheduleRun,
    hold=_TIMESHEET_LOCKED,
    succeeded="succeeded",
    make_ready=_ready_run,
    job_id=lambda run_id: RUNS.row(run_id).job_id,
    assert_done_once=_runs_done_once,
)


# Workspace-export executions


def _ready_execution() -> int:
    """A queued execution of every dataset, in a workspace whose administrator hears of its package."""
    workspace = factories.make_workspace()
    factories.make_member(workspace, role="admin")
    fill_every_dataset(workspace)
    snapshot = factories.settings_snapshot(datasets=ALL_DATASETS)
    return factories.make_execution(workspace, settings_snapshot=snapshot).id


def _package_of(execution_id: int) -> ExportPackage:
    return db.session.scalars(select(ExportPackage).where(ExportPackage.execution_id == execution_id)).one()


def _package_objects(package: ExportPackage) -> set[str]:
    """The package's complete volumes, its checksums and its manifest: what a delivery copies."""
    return set(package_keys(package))


def _admin_address(workspace_id: int) -> str:
    return db.session.scalars(
        select(Person.email).join(Membership).where(Membership.workspace_id == workspace_id, Membership.role == "admin")
    ).one()


def _executions_done_once(execution_ids: list[int], outside: Outside) -> None:
    """Each execution's package stored once, and its administrator told once that it is ready."""
    executions = [EXECUTIONS.row(execution_id) for execution_id in execution_ids]
    packages = [_package_of(execution.id) for execution in executions]
    assert outside.stored() == {key for package in packages for key in _package_objects(package)}
    assert outside.recipients() == Counter(_admin_address(execution.workspace_id) for execution in executions)
    assert outside.delivered() == set()


EXECUTIONS = Driver(
    model=ExportExecution,
    hold=_TIMESHEET_LOCKED,
    succeeded="succeeded",
    make_ready=_ready_execution,
    job_id=lambda execution_id: EXECUTIONS.row(execution_id).job_id,
    assert_done_once=_executions_done_once,
)


# Package deliveries


def _ready_delivery() -> int:
    """A pending delivery of a package this process produced, to a directory destination, left
    behind by the process that made it (so the engine dispatches it)."""
    workspace = factories.make_workspace()
    factories.make_team_member(factories.make_team(workspace))
    execution = factories.make_execution(workspace)
    assert run_execution(execution.id) == "succeeded"
    destination = factories.make_destination(workspace)
    delivery = factories.make_package_delivery(
        _package_of(execution.id), destination, created_at=utcnow() - 2 * LOST_AFTER
    )
    return delivery.id


def _backoff_passes(delivery_id: int) -> None:
    """A delivery whose worker died is failed as transient and retried after its first backoff
    (minutes): the test lets that time pass rather than wait for it."""
    delivery = DELIVERIES.row(delivery_id)
    assert (delivery.status, delivery.failure_code) == ("failed", "worker_stopped")
    delivery.next_attempt_at = utcnow() - timedelta(seconds=1)
    db.session.commit()


def _deliveries_done_once(delivery_ids: list[int], outside: Outside) -> None:
    deliveries = [DELIVERIES.row(delivery_id) for delivery_id in delivery_ids]
    packages = {delivery.package_id: db.session.get_one(ExportPackage, delivery.package_id) for delivery in deliveries}
    expected = set()
    for delivery in deliveries:
        package = packages[delivery.package_id]
        destination = db.session.get_one(ExportDestination, delivery.destination_id)
        objects = {key for key in outside.stored() if key.startswith(package.prefix)}
        expected |= {f"{destination.path}/{relative_key(package, key)}" for key in objects}
    assert outside.delivered() == expected
    assert outside.stored() == {key for package in packages.values() for key in _package_objects(package)}
    assert outside.recipients() == Counter()


DELIVERIES = Driver(
    model=ExportDelivery,
    hold=_VOLUMES_LOCKED,
    succeeded="delivered",
    make_ready=_ready_delivery,
    job_id=lambda delivery_id: DELIVERIES.row(delivery_id).job_id,
    assert_done_once=_deliveries_done_once,
    after_handover=_backoff_passes,
)


# Export notices


def _ready_notice() -> int:
    """A PACKAGE_READY notice to a workspace's administrator, left unsent by the process that
    recorded it (so the engine dispatches it)."""
    workspace = factories.make_workspace()
    admin = factories.make_member(workspace, role="admin").person
    package = factories.make_package(factories.make_execution(workspace))
    return factories.make_package_ready_notice(package, admin, created_at=utcnow() - 2 * LOST_AFTER).id


def _retry_time_passes(notice_id: int) -> None:
    """A notice whose sender died waits for its retry (seconds to minutes): the test lets that
    time pass rather than wait for it."""
    notice = NOTICES.row(notice_id)
    assert (notice.status, notice.job_id) == ("pending", None)
    notice.next_attempt_at = utcnow() - timedelta(seconds=1)
    db.session.commit()


def _notices_done_once(notice_ids: list[int], outside: Outside) -> None:
    """Each notice's person mailed once, nothing stored or delivered."""
    people = [db.session.get_one(Person, NOTICES.row(notice_id).person_id) for notice_id in notice_ids]
    assert outside.recipients() == Counter(person.email for person in people)
    assert outside.stored() == set() and outside.delivered() == set()


NOTICES = Driver(
    model=ExportNotice,
    hold=_MEMBERSHIPS_LOCKED,
    succeeded="sent",
    make_ready=_ready_notice,
    job_id=lambda notice_id: NOTICES.row(notice_id).job_id,
    assert_done_once=_notices_done_once,
    after_handover=_retry_time_passes,
)


# Schedule runs' copies to destinations


def _ready_copy() -> int:
    """A run's pending copy of its file (produced in this process) to a directory destination."""
    workspace, owner, query = _workspace_with_rows()
    schedule = factories.make_schedule(query, owner)
    schedule.recipients = []
    db.session.commit()
    run = admit_run(
        schedule_id=schedule.id, workspace_id=workspace.id, occurrence_at=utcnow(), trigger=RunTrigger.MANUAL
    )
    assert run is not None and process_run(run.id) == "succeeded"
    run = db.session.get_one(ScheduleRun, run.id, populate_existing=True)
    destination = factories.make_destination(workspace)
    export = db.session.get_one(ExportFile, run.export_id)
    destination_delivery.create(
        workspace_id=workspace.id,
        run_id=run.id,
        destination_id=destination.id,
        target_key=destination_deliveries.target_key(schedule, run, export),
    )
    db.session.commit()
    return db.session.scalars(select(DestinationDelivery.id).where(DestinationDelivery.run_id == run.id)).one()


def _copy_backoff_passes(delivery_id: int) -> None:
    """A copy whose worker died is failed as transient and retried after its first backoff."""
    delivery = COPIES.row(delivery_id)
    assert (delivery.status, delivery.failure_code) == ("failed", "worker_stopped")
    delivery.next_attempt_at = utcnow() - timedelta(seconds=1)
    db.session.commit()


def _copies_done_once(delivery_ids: list[int], outside: Outside) -> None:
    deliveries = [COPIES.row(delivery_id) for delivery_id in delivery_ids]
    runs = [db.session.get_one(ScheduleRun, delivery.run_id) for delivery in deliveries]
    assert outside.stored() == {db.session.get_one(ExportFile, run.export_id).storage_key for run in runs}
    assert outside.delivered() == {
        f"{db.session.get_one(ExportDestination, delivery.destination_id).path}/{delivery.target_key}"
        for delivery in deliveries
    }
    assert outside.recipients() == Counter()


COPIES = Driver(
    model=DestinationDelivery,
    # A copy reads its run's schedule once it holds its lease, before it copies anything; no turn
    # of the engine reads that table.
    hold=f"LOCK TABLE {Schedule.__tablename__} IN ACCESS EXCLUSIVE MODE",
    succeeded="delivered",
    make_ready=_ready_copy,
    job_id=lambda delivery_id: COPIES.row(delivery_id).job_id,
    assert_done_once=_copies_done_once,
    after_handover=_copy_backoff_passes,
)


DRIVERS = {
    "file": FILES,
    "run": RUNS,
    "schedule_destination_delivery": COPIES,
    "execution": EXECUTIONS,
    "delivery": DELIVERIES,
    "notice": NOTICES,
}
