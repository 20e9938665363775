"""What staff with `staff.execute` may do, each with a reason, each audited in the transaction of
the change it makes (DESIGN section 10): suspend and resume a workspace's export, mark a stuck
workspace export failed, delete a package early (its workspace's administrators told), and
requeue a failed job through the product's own dispatch (the work engine's, for every kind).

Each checks, itself, that the person holds `staff.execute` and gave a reason
(app/domain/people/staff_rules.py), whoever calls it: a route, a job or the command line. A
refusal is the error of its category (app/domain/errors.py), with a sentence for the staff
member: AccessDenied without the permission, TransitionRefused when the record's status moved on,
RequeueRefused when a job cannot be dispatched again, ValidationError for the reason."""

from __future__ import annotations

from rq.exceptions import NoSuchJobError
from rq.job import Job
from rq.registry import FailedJobRegistry
from sqlalchemy.exc import IntegrityError

from app.domain.errors import TransitionRefused
from app.domain.people.staff_rules import refuse_unless_staff_executor, staff_reason
from app.domain.workspace_export import export_execution, export_suspension
from app.extensions import db
from app.models import ExportExecution, ExportPackage, Person, Workspace
from app.models.export_notice import NoticeKind
from app.models.types import database_clock
from app.services.accounts import audit
from app.services.work.engine import record_of
from app.services.work.queue import redis_connection, work_queues
from app.services.work.requeue import requeue_of
from app.services.work.work_kind import RequeueRefused
from app.services.workspace_export import export_notices, package_retention
from app.services.workspace_export.package_cleanup import remove_leftovers_of_settled

_NOT_DISPATCHED = "Another dispatch got there first, or Redis refused; the periodic dispatcher retries it."


def _reason(actor: Person, text: str | None) -> str:
    """The action's reason, once the actor is known to hold `staff.execute`."""
    refuse_unless_staff_executor(actor)
    return staff_reason(text)


def suspend_export(workspace: Workspace, actor: Person, reason_text: str | None) -> None:
    reason = _reason(actor, reason_text)
    try:
        export_suspension.suspend(workspace.id, reason)
        audit.record(
            workspace_id=workspace.id,
            actor_id=actor.id,
            action="export.suspended",
            subject_type="workspace",
            subject_id=workspace.id,
            reason=reason,
        )
        db.session.commit()
    except IntegrityError:  # another staff member suspended it at the same moment
        db.session.rollback()
        raise TransitionRefused("This workspace's export was suspended a moment ago by someone else.") from None


def resume_export(workspace: Workspace, actor: Person, reason_text: str | None) -> None:
    reason = _reason(actor, reason_text)
    export_suspension.resume(workspace.id)
    audit.record(
        workspace_id=workspace.id,
        actor_id=actor.id,
        action="export.resumed",
        subject_type="workspace",
        subject_id=workspace.id,
        reason=reason,
    )
    db.session.commit()


def stop_execution(execution: ExportExecution, seen_attempt: int, actor: Person, reason_text: str | None) -> None:
    """Mark a queued or running execution failed, at the attempt the staff member saw on the page;
    what its attempts left unpublished in storage is removed, and its people get the
    EXECUTION_FAILED notice, as for every failure. A worker still producing it finds its next
    update refused and removes its own objects too (app/services/workspace_export/package_production.py)."""
    reason = _reason(actor, reason_text)
    export_execution.stop_by_staff(execution.id, seen_attempt, f"Marked failed by Rhythm staff: {reason}")
    audit.record(
        workspace_id=execution.workspace_id,
        actor_id=actor.id,
        action="export.execution_stopped",
        subject_type="execution",
        subject_id=execution.id,
        reason=reason,
        details={"attempt": seen_attempt},
    )
    db.session.commit()
    remove_leftovers_of_settled(execution.workspace_id, execution.id, seen_attempt)
    export_notices.notify_execution_failed(execution.id, execution.workspace_id)


def delete_package(package: ExportPackage, actor: Person, reason_text: str | None) -> None:
    """Delete an available package before its retention deadline, through the administrators'
    own early deletion (so not while a delivery copies it), audited with the reason; then the
    workspace's administrators and the export's notification people are told by a notice."""
    reason = _reason(actor, reason_text)
    package_retention.delete_early(package.workspace_id, package.id, actor, reason=reason)
    export_notices.notify(NoticeKind.PACKAGE_DELETED, "package", package.id, package.workspace_id)


def requeue_failed_job(job_id: str, actor: Person, reason_text: str | None) -> str:
    """Dispatch again, through the product's own dispatch, the record a failed RQ job worked on,
    then drop the failed job from its registry. Returns a sentence saying what happened."""
    reason = _reason(actor, reason_text)
    registry = next((r for r in _failed_registries() if job_id in r.get_job_ids()), None)
    if registry is None:
        raise RequeueRefused("That job is no longer among the failed jobs (it was requeued or expired).")
    try:
        job = Job.fetch(job_id, connection=redis_connection())
    except NoSuchJobError:
        raise RequeueRefused("That job is no longer stored in Redis; the watchdog handles its record.") from None
    kind, record_id = record_of(job)
    if kind is None or record_id is None:
        raise RequeueRefused("This job is not one the product can dispatch again.")
    requeue = requeue_of(kind, record_id, database_clock())
    # Added before the dispatch's claim commits, so the claim and its audit event commit together.
    audit.record(
        workspace_id=requeue.workspace_id,
        actor_id=actor.id,
        action="job.requeued",
        subject_type=requeue.subject_type,
        subject_id=record_id,
        reason=reason,
        details={"failed_job": job_id},
    )
    if not requeue.dispatch():
        db.session.rollback()
        raise RequeueRefused(f"{requeue.label} could not be dispatched now. {_NOT_DISPATCHED}")
    registry.remove(job, delete_job=True)
    return f"{requeue.label} was dispatched again."


def _failed_registries() -> list[FailedJobRegistry]:
    return [FailedJobRegistry(queue=queue) for queue in work_queues()]
