"""Processing a schedule run: the use case the run job calls (the work engine dispatches it and
watches its lease from its declaration, app/services/schedules/run_work.py).

A run attempt: start (lease taken and renewed while it works), rebuild the owner's access as it
is now, check the source, admit the file through the export-file path (requester = owner,
`schedule_id` set) and produce it in this process with `run_export_file` (same transitions,
same storage), decide by the schedule's send condition whether to send it (a skipped run settles
there: app/services/schedules/send_decision.py), make the recipient rows, send what is pending,
settle. A run as each recipient makes one file per access for its people instead, and the owner's
file, as above, only for its destinations. A run delivered twice
finds its file and its rows and goes on from where they are; nobody is emailed twice
(app/services/schedules/schedule_delivery.py). docs/architecture.md "Schedule runs" has the whole story.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NoReturn

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from app.domain.errors import TransitionRefused, ValidationError
from app.domain.people.access import RequesterContext, current_context
from app.domain.schedules import schedule_lifecycle, schedule_run
from app.domain.sources.catalog import get_dataset
from app.domain.timing.retry_policy import MAIL_TO_A_PERSON, SCHEDULED_FILE, RetryPolicy
from app.extensions import db
from app.models import ExportFile, Report, SavedQuery
from app.models.export_file import FailureCode, FileStatus
from app.models.schedule import (
    MAIL_UNAVAILABLE,
    SETTLED_RUN_STATUSES,
    PauseReason,
    Schedule,
    ScheduleKind,
    ScheduleRun,
    ScheduleRunAttempt,
    ScheduleRunFile,
    SkipReason,
)
from app.models.types import Moment, database_clock
from app.services.schedules import (
    destination_deliveries,
    destination_work,
    recipient_files,
    run_file_production,
    schedule_delivery,
    send_decision,
)
from app.services.schedules.schedules import audit_pause
from app.services.work import leases

log = logging.getLogger(__name__)

TRANSIENT_FILE_FAILURES: set[str] = {FailureCode.STORAGE_ERROR, FailureCode.STORAGE_FULL, FailureCode.INTERNAL}
# The cause of every other transient failure: storage unavailable, an unexpected error.
OTHER_TRANSIENT = "other_transient"
# How often a run is tried again, the policy of each cause of a transient failure's purpose
# (app/domain/timing/retry_policy.py): the n-th attempt that failed of that cause waits the n-th
# delay, and the last one the policy allows fails the run. Recipients the mail server could not
# take wait as all mail to a person does; each is mailed once (submitted rows are never sent again).
RETRIES: dict[str, RetryPolicy] = {OTHER_TRANSIENT: SCHEDULED_FILE, MAIL_UNAVAILABLE: MAIL_TO_A_PERSON}
_CAUSES: dict[str, set[str]] = {OTHER_TRANSIENT: TRANSIENT_FILE_FAILURES, MAIL_UNAVAILABLE: {MAIL_UNAVAILABLE}}


# Processing


class _Stop(Exception):
    """This attempt settled or re-queued the run; the reason is already recorded.

    Outside DomainError: a signal inside the job, from a step of the attempt to its end."""


def process_run(run_id: int, now: datetime | None = None) -> str:
    """Run one attempt of the run; returns one word describing the outcome, for logs."""
    run = db.session.get(ScheduleRun, run_id)
    if run is None:
        return "missing"
    if run.status in SETTLED_RUN_STATUSES:
        return "already_settled"
    started_at = now or database_clock()
    try:
        attempt = schedule_run.start_attempt(run_id, leases.holder_name(), leases.lease_expiry(), now=started_at)
    except TransitionRefused:
        return "not_due"

    def renew(lease_expires_at: Moment) -> None:
        schedule_run.renew_lease(run_id, attempt, lease_expires_at)

    with leases.renewed_while_running(renew, f"schedule run {run_id}"):
        try:
            return _attempt(run_id, attempt, started_at)
        except _Stop as stop:
            return str(stop)
        except TransitionRefused:
            log.info("schedule run %s attempt %s was superseded", run_id, attempt)
            return "superseded"
        except Exception:  # an unexpected error is transient: the run retries, the log has the details
            log.exception("schedule run %s attempt %s failed unexpectedly", run_id, attempt)
            return _after_unexpected_error(run_id, attempt, started_at)


def _after_unexpected_error(run_id: int, attempt: int, started_at: datetime) -> str:
    db.session.rollback()
    run = db.session.get(ScheduleRun, run_id)
    if run is None:
        return "missing"
    detail = (
        f"Something went wrong while running the schedule, and the error was logged; "
        f"the reference is “schedule run {run_id}”."
    )
    try:
        _retry_or_fail(run, attempt, FailureCode.INTERNAL, detail, started_at)
    except _Stop as stop:
        return str(stop)
    except TransitionRefused:
        return "superseded"
    return "superseded"


def _attempt(run_id: int, attempt: int, started_at: datetime) -> str:
    run = db.session.get_one(ScheduleRun, run_id, populate_existing=True)
    # What an attempt reads of its run is fixed once it started (its identity, occurrence, and the
    # file and decision an earlier attempt left), and every change to it is a guarded statement:
    # out of the session, the commits between the steps do not have it read again at each use.
    db.session.expunge(run)
    schedule = db.session.get_one(Schedule, run.schedule_id)
    owner = current_context(schedule.workspace_id, schedule.owner_id)
    dataset = _check_access_and_source(run, schedule, owner, attempt)
    assert owner is not None
    if schedule.run_as_recipients:
        return _attempt_as_recipients(run, schedule, owner, dataset, attempt, started_at)
    export = _file_for(run, schedule, owner, attempt, started_at)
    if send_decision.skipped(run, schedule, export, attempt):
        # Not a failure: the file was made, and the schedule said not to send it.
        settle_schedule(run.schedule_id, run.workspace_id, failed=False)
        db.session.commit()
        return "skipped"

    schedule_delivery.create_deliveries(run, schedule, owner, export)
    _copy_to_destinations(run, schedule, export)
    outcome = schedule_delivery.send_pending(
        run, schedule, export, attempt, _mail_retry_at(run_id, attempt, started_at)
    )
    return _finish(run, schedule, attempt, started_at, outcome, export.row_count)


def _copy_to_destinations(run: ScheduleRun, schedule: Schedule, export: ExportFile) -> None:
    # The copies go as their own work, beside the mail: a destination that is slow or down never
    # holds the recipients' messages back, nor the run.
    destination_work.dispatch(destination_deliveries.create_deliveries(run, schedule, export))


def _mail_retry_at(run_id: int, attempt: int, started_at: datetime) -> Callable[[], datetime]:
    """When the rows the mail server could not take are tried again: worked out (two queries) the
    first time a row is refused, and the same for every row of the attempt."""

    @functools.cache
    def retry_at() -> datetime:
        return _clock(started_at) + (_backoff(run_id, attempt, MAIL_UNAVAILABLE) or timedelta(0))

    return retry_at


def _finish(
    run: ScheduleRun,
    schedule: Schedule,
    attempt: int,
    started_at: datetime,
    outcome: schedule_delivery.SendOutcome,
    row_count: int | None,
) -> str:
    """Settle the run once its pending rows were sent: left to its holder, waiting for the mail
    server, or succeeded."""
    run_id = run.id
    if outcome.held_elsewhere:
        # This attempt no longer holds the run: a newer one does (and settles it), or its lease
        # lapsed and the watchdog delivers the run again. It settles nothing.
        log.info(
            "schedule run %s attempt %s: %s recipient row(s) left to the run's holder",
            run_id,
            attempt,
            outcome.held_elsewhere,
        )
        raise _Stop("superseded")
    if outcome.waiting:
        _retry_or_fail(
            run,
            attempt,
            MAIL_UNAVAILABLE,
            f"The mail server was not available for {outcome.waiting} recipient(s).",
            started_at,
        )
    schedule_run.succeed(run_id, attempt, row_count)
    settle_schedule(run.schedule_id, run.workspace_id, failed=False)
    db.session.commit()
    return "succeeded"


def _attempt_as_recipients(
    run: ScheduleRun, schedule: Schedule, owner: RequesterContext, dataset: str, attempt: int, started_at: datetime
) -> str:
    """Run as each recipient: one file per distinct access, each made with its first recipient's
    access now, each decided by the send condition on its own, each sent to its recipients only.
    A person who lost access to the source is skipped with that reason; the others get theirs.

    The destinations the schedule chose get the owner's file, made, decided and copied exactly as an
    ordinary run's (the run's own file), never a person's. The run is skipped only when every file
    it decided on was held back; one that sent anything to anyone succeeds."""
    destinations = _owners_file_to_destinations(run, schedule, owner, attempt, started_at)
    recipients = recipient_files.grouped(schedule, dataset)
    schedule_delivery.create_deliveries(run, schedule, owner, None, recipients.others)
    schedule_delivery.create_deliveries(
        run, schedule, owner, None, recipients.lost_access, SkipReason.RECIPIENT_ACCESS_LOST
    )
    retry_at = _mail_retry_at(run.id, attempt, started_at)
    waiting = held = 0
    people: list[_Decided] = []
    for group in recipients.groups:
        run_file = recipient_files.run_file(run.id, group)
        export = _recipient_file(run, schedule, run_file, group.requester, attempt, started_at)
        if export is None:
            schedule_delivery.create_deliveries(
                run, schedule, owner, None, group.recipients, SkipReason.RECIPIENT_ACCESS_LOST
            )
            continue
        decided = _Decided(
            export.row_count or 0, send_decision.recipient_file_skip_reason(run, schedule, run_file, export, attempt)
        )
        people.append(decided)
        if decided.skip_reason is not None:
            continue
        schedule_delivery.create_deliveries(run, schedule, owner, export, group.recipients, own_file=True)
        outcome = schedule_delivery.send_pending(run, schedule, export, attempt, retry_at, own_file=True)
        waiting, held = waiting + outcome.waiting, held + outcome.held_elsewhere
    decisions = [*people, *([destinations] if destinations is not None else [])]
    if decisions and all(d.skip_reason is not None for d in decisions) and not (waiting or held):
        reason = send_decision.nothing_sent(
            [d.skip_reason for d in people if d.skip_reason is not None],
            destinations.skip_reason if destinations is not None else None,
        )
        schedule_run.skip(run.id, attempt, None, None, reason)
        settle_schedule(run.schedule_id, run.workspace_id, failed=False)
        db.session.commit()
        return "skipped"
    sent_rows = sum(d.rows for d in decisions if d.skip_reason is None)
    return _finish(run, schedule, attempt, started_at, schedule_delivery.SendOutcome(waiting, held), sent_rows)


@dataclass(frozen=True)
class _Decided:
    """A file the send condition decided on: its rows, and why it was held back (None: sent)."""

    rows: int
    skip_reason: str | None


def _owners_file_to_destinations(
    run: ScheduleRun, schedule: Schedule, owner: RequesterContext, attempt: int, started_at: datetime
) -> _Decided | None:
    """Run as each recipient: the owner's file, made and decided as an ordinary run's, and copied to
    the schedule's destinations unless the send condition holds it back. None when the schedule
    delivers to no destination: then no such file is made."""
    # A file an earlier attempt made is decided on (or its decision kept) even if the destinations
    # were removed since: the run settles by what it already decided.
    if run.export_id is None and not destination_deliveries.chosen_destinations(schedule.id):
        return None
    export = _file_for(run, schedule, owner, attempt, started_at)
    reason = send_decision.owners_file_skip_reason(run, schedule, export, attempt)
    if reason is None:
        _copy_to_destinations(run, schedule, export)
    return _Decided(export.row_count or 0, reason)


def _recipient_file(
    run: ScheduleRun,
    schedule: Schedule,
    run_file: ScheduleRunFile,
    requester: RequesterContext,
    attempt: int,
    started_at: datetime,
) -> ExportFile | None:
    """One access's file, produced: the one an earlier attempt began, else a new one requested by
    `requester`. None when the requester lost access while it was made (its recipients are skipped)."""
    export = db.session.get(ExportFile, run_file.export_id) if run_file.export_id is not None else None
    if export is None or (export.status == FileStatus.FAILED and export.failure_code != FailureCode.CANCELLED):
        now = database_clock()
        try:
            export, _ = run_file_production.queued_file(schedule, requester, now)
        except ValidationError as exc:
            _settle_failed(
                run, attempt, FailureCode.INVALID_REQUEST, f"The schedule's source can no longer be run: {exc}"
            )
        db.session.add(export)
        db.session.flush()
        schedule_run.record_recipient_file(run_file.id, run.id, attempt, export.id)
        db.session.commit()
    export = run_file_production.produced(export.id)
    if export.status == FileStatus.SUCCEEDED:
        return export
    if export.failure_code == FailureCode.ACCESS_LOST:
        return None
    _file_failed(run, export, attempt, started_at)


def _check_access_and_source(run: ScheduleRun, schedule: Schedule, owner: RequesterContext | None, attempt: int) -> str:
    """The dataset the schedule's source reads, once the owner is found to read it; else the run
    fails and the schedule pauses."""
    if owner is None:
        _fail_and_pause(
            run,
            attempt,
            FailureCode.ACCESS_LOST,
            "The schedule's owner is no longer a member of this workspace.",
            PauseReason.OWNER_ACCESS_LOST,
        )
    if schedule.kind == ScheduleKind.REPORT:
        report = db.session.get(Report, schedule.report_id) if schedule.report_id is not None else None
        query = db.session.get(SavedQuery, report.source_query_id) if report is not None else None
        if report is None or query is None:
            _fail_and_pause(
                run,
                attempt,
                FailureCode.SOURCE_MISSING,
                "The report this schedule prints was deleted.",
                PauseReason.SOURCE_REMOVED,
            )
        dataset = query.dataset
    else:
        named = (schedule.query_definition or {}).get("dataset")
        found = get_dataset(named) if isinstance(named, str) else None
        if found is None:
            _fail_and_pause(
                run,
                attempt,
                FailureCode.SOURCE_MISSING,
                f"The dataset {named!r} this schedule reads no longer exists.",
                PauseReason.SOURCE_REMOVED,
            )
        dataset = found.name
    if not owner.can_read_dataset(dataset):
        _fail_and_pause(
            run,
            attempt,
            FailureCode.ACCESS_LOST,
            "The schedule's owner no longer has access to the dataset it reads.",
            PauseReason.OWNER_ACCESS_LOST,
        )
    return dataset


def _fail_and_pause(run: ScheduleRun, attempt: int, code: str, detail: str, reason: PauseReason) -> NoReturn:
    run_id, schedule_id, workspace_id = run.id, run.schedule_id, run.workspace_id
    schedule_run.fail(run_id, attempt, code, detail)
    db.session.commit()
    schedule_delivery.fail_pending(run_id, attempt, detail)
    try:
        schedule_lifecycle.pause(schedule_id, reason)
    except TransitionRefused:
        pass  # paused already (by hand, or by another run): the reason on the page stays
    else:
        audit_pause(workspace_id, schedule_id, reason, None, {"run_id": run_id})
    schedule_lifecycle.record_run_outcome(schedule_id, failed=True)
    db.session.commit()
    raise _Stop(code)


# How often a run's attempt looks again at a file another live job is producing for it.
def _file_for(
    run: ScheduleRun, schedule: Schedule, owner: RequesterContext, attempt: int, started_at: datetime
) -> ExportFile:
    """The run's own file, made with the owner's access and succeeded: the one an earlier attempt
    made (or began), else a new one. When it failed the run settles or waits for a retry."""
    export = db.session.get(ExportFile, run.export_id) if run.export_id is not None else None
    # A person who stopped this run's file ends the run with it (without retry), never with a new file.
    if export is None or (export.status == FileStatus.FAILED and export.failure_code != FailureCode.CANCELLED):
        export_id = _admit_file(run, schedule, owner, attempt)
    else:
        export_id = export.id
    export = run_file_production.produced(export_id)
    if export.status != FileStatus.SUCCEEDED:
        _file_failed(run, export, attempt, started_at)
    return export


def _admit_file(run: ScheduleRun, schedule: Schedule, owner: RequesterContext, attempt: int) -> int:
    """A queued file of the schedule's source, requested by the owner, committed with the run's
    reference to it; its id. Its outbox row is claimed by this run's job (which produces it right away),
    so the file dispatcher leaves it alone and its lost-job check finds it if this job dies."""
    now = database_clock()
    try:
        export, source_changed = run_file_production.queued_file(schedule, owner, now)
    except ValidationError as exc:
        _settle_failed(run, attempt, FailureCode.INVALID_REQUEST, f"The schedule's source can no longer be run: {exc}")
    db.session.add(export)
    try:
        db.session.flush()
        export_id = export.id
        schedule_run.record_file(run.id, attempt, export_id, source_changed)
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        _fail_and_pause(
            run,
            attempt,
            FailureCode.SOURCE_MISSING,
            "The schedule's source was deleted meanwhile.",
            PauseReason.SOURCE_REMOVED,
        )
    return export_id


def _file_failed(run: ScheduleRun, export: ExportFile, attempt: int, started_at: datetime) -> NoReturn:
    """Settle the run after its file failed: retry the transient failures, pause for lost access or a
    removed source, and fail the run for the rest (a cancelled file among them: a person's choice)."""
    code = export.failure_code or FailureCode.INTERNAL
    detail = f"The file was not produced: {export.failure_detail or code}"
    if code in TRANSIENT_FILE_FAILURES:
        _retry_or_fail(run, attempt, code, detail, started_at)
    if code == FailureCode.ACCESS_LOST:
        _fail_and_pause(run, attempt, code, detail, PauseReason.OWNER_ACCESS_LOST)
    if code == FailureCode.SOURCE_MISSING:
        _fail_and_pause(run, attempt, code, detail, PauseReason.SOURCE_REMOVED)
    _settle_failed(run, attempt, code, detail)


def _clock(started_at: datetime) -> datetime:
    """Now, as the attempt reckons it: the database's clock, or the later moment the attempt was
    started at (a caller's `now`, as the periodic functions take one)."""
    return max(started_at, database_clock())


def attempts_failed_with(run_id: int, codes: set[str], before: int | None = None) -> int:
    """How many of the run's attempts (numbered below `before`) ended with one of `codes`."""
    query = select(func.count()).where(ScheduleRunAttempt.run_id == run_id, ScheduleRunAttempt.error_code.in_(codes))
    if before is not None:
        query = query.where(ScheduleRunAttempt.number < before)
    return db.session.scalar(query) or 0


def _backoff(run_id: int, attempt: int, code: str) -> timedelta | None:
    """The delay before the run's next attempt once `attempt` failed with `code`; None when the
    attempts for its cause are used up (RETRIES)."""
    cause = MAIL_UNAVAILABLE if code == MAIL_UNAVAILABLE else OTHER_TRANSIENT
    failed = attempts_failed_with(run_id, _CAUSES[cause], before=attempt) + 1
    policy = RETRIES[cause]
    return None if policy.exhausted(failed) else policy.delay_after(failed)


def _retry_or_fail(run: ScheduleRun, attempt: int, code: str, detail: str, started_at: datetime) -> NoReturn:
    delay = _backoff(run.id, attempt, code)
    if delay is None:
        _settle_failed(run, attempt, code, f"{detail} (after {attempt} attempts)")
    schedule_run.retry_later(run.id, attempt, code, detail, _clock(started_at) + delay)
    db.session.commit()
    raise _Stop("retry_later")


def _settle_failed(run: ScheduleRun, attempt: int, code: str, detail: str) -> NoReturn:
    run_id, schedule_id, workspace_id = run.id, run.schedule_id, run.workspace_id
    schedule_run.fail(run_id, attempt, code, detail)
    # A run whose file a person cancelled failed by their choice, not by the schedule's: it ends
    # the failure streak rather than extending it (a run of failures shows something is wrong).
    settle_schedule(schedule_id, workspace_id, failed=code != FailureCode.CANCELLED)
    db.session.commit()
    schedule_delivery.fail_pending(run_id, attempt, detail)
    raise _Stop(code)


def settle_schedule(schedule_id: int, workspace_id: int, failed: bool) -> None:
    if schedule_lifecycle.record_run_outcome(schedule_id, failed):
        audit_pause(workspace_id, schedule_id, PauseReason.FAILURE_STREAK, None)
