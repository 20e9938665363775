"""Export notices as a kind of the work engine (app/services/workspace_export/notice_work.py): what
the engine dispatches, how it hands over a notice whose sender stopped, and that an attempt it
moved past changes nothing. The same notices with real worker processes killed, frozen, slow and
under a flushed Redis are in tests/integration/work/test_engine_with_real_workers.py.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import inspect, update

from app.communications import parse_mail_settings
from app.domain.errors import TransitionRefused
from app.domain.timing.retry_policy import MAIL_TO_A_PERSON
from app.domain.workspace_export import export_notice
from app.extensions import db
from app.models.export_notice import ExportNotice, NoticeStatus
from app.models.types import utcnow
from app.services.work import engine
from app.services.work.claims import dispatch_pending
from app.services.work.work_kind import LOST_AFTER
from app.services.workspace_export import export_notices
from app.services.workspace_export.notice_work import NOTICES
from tests import factories

LAST_TRY = MAIL_TO_A_PERSON.max_attempts


def _notice(world, **overrides) -> ExportNotice:
    package = factories.make_package(factories.make_execution(world.workspace))
    return factories.make_package_ready_notice(package, world.admin, **overrides)


def _row(notice_id: int) -> ExportNotice:
    db.session.rollback()
    return db.session.get_one(ExportNotice, notice_id, populate_existing=True)


def _columns(notice_id: int) -> dict[str, object]:
    return {attribute.key: attribute.value for attribute in inspect(_row(notice_id)).attrs}


def _started_by_a_worker_that_died(notice_id: int) -> int:
    """The notice started by an attempt whose worker stopped: its lease already lapsed."""
    return export_notice.start(notice_id, "dead-worker", utcnow() - timedelta(seconds=1))


def _retry_time_passes(notice_id: int) -> None:
    db.session.execute(
        update(ExportNotice).where(ExportNotice.id == notice_id).values(next_attempt_at=utcnow() - timedelta(seconds=1))
    )
    db.session.commit()


def test_a_notice_just_recorded_is_left_to_the_process_sending_it(world, app_context):
    _notice(world, created_at=utcnow())

    assert dispatch_pending(NOTICES, utcnow()) == 0


def test_a_notice_its_process_left_unsent_is_dispatched_and_its_job_sends_it_once(
    world, smtp_server, smtp_settings, use_mailer
):
    use_mailer(smtp_settings)
    notice = _notice(world, created_at=utcnow() - 2 * LOST_AFTER)

    assert [dispatch_pending(NOTICES, utcnow()), dispatch_pending(NOTICES, utcnow())] == [1, 0]
    assert [export_notices.send(notice.id), export_notices.send(notice.id)] == ["sent", "not_due"]

    row = _row(notice.id)
    assert (row.status, row.attempt_count, row.lease_expires_at) == (NoticeStatus.SENT, 1, None)
    assert [message.recipients for message in smtp_server.messages] == [[world.admin.email]]


def test_a_notice_whose_sender_stopped_waits_for_its_retry_and_is_then_sent_once(
    world, smtp_server, smtp_settings, use_mailer
):
    use_mailer(smtp_settings)
    notice = _notice(world)
    _started_by_a_worker_that_died(notice.id)

    assert engine.redeliver_lapsed(utcnow()) == 1
    waiting = _row(notice.id)
    assert (waiting.status, waiting.attempt_count, waiting.job_id) == (NoticeStatus.PENDING, 1, None)
    assert waiting.next_attempt_at > utcnow() and "dead-worker" in waiting.last_error
    assert dispatch_pending(NOTICES, utcnow()) == 0  # not before its retry time

    _retry_time_passes(notice.id)
    assert dispatch_pending(NOTICES, utcnow()) == 1
    assert export_notices.send(notice.id) == "sent"
    assert _row(notice.id).attempt_count == 2
    assert [message.recipients for message in smtp_server.messages] == [[world.admin.email]]


def test_a_live_sender_keeps_its_notice(world, app_context):
    notice = _notice(world)
    export_notice.start(notice.id, "live-worker", utcnow() + timedelta(minutes=5))
    before = _columns(notice.id)

    assert engine.redeliver_lapsed(utcnow()) == 0
    assert _columns(notice.id) == before


@pytest.mark.parametrize(
    "stale_move",
    [
        lambda notice_id: export_notice.mark_sent(notice_id, 1, "Q000001X"),
        lambda notice_id: export_notice.retry_later(notice_id, 1, "451 later", utcnow() + timedelta(minutes=1)),
        lambda notice_id: export_notice.fail(notice_id, 1, "550 refused"),
        lambda notice_id: export_notice.renew_lease(notice_id, 1, utcnow() + timedelta(minutes=1)),
    ],
    ids=["sent", "retry_later", "fail", "renew_lease"],
)
def test_an_attempt_the_engine_moved_past_changes_nothing(world, app_context, stale_move):
    notice = _notice(world)
    _started_by_a_worker_that_died(notice.id)
    assert engine.redeliver_lapsed(utcnow()) == 1
    _retry_time_passes(notice.id)
    export_notice.start(notice.id, "new-worker", utcnow() + timedelta(minutes=5))
    before = _columns(notice.id)

    with pytest.raises(TransitionRefused):
        stale_move(notice.id)

    assert _columns(notice.id) == before
    assert (before["status"], before["attempt_count"], before["lease_holder"]) == ("sending", 2, "new-worker")


def test_a_notice_whose_last_allowed_try_lost_its_worker_is_given_up(world, app_context):
    notice = _notice(world, attempt_count=LAST_TRY - 1)
    _started_by_a_worker_that_died(notice.id)

    assert engine.redeliver_lapsed(utcnow()) == 1

    row = _row(notice.id)
    assert (row.status, row.attempt_count) == (NoticeStatus.FAILED, LAST_TRY)
    assert row.last_error.startswith(f"Given up after {LAST_TRY} tries")
    assert dispatch_pending(NOTICES, utcnow() + timedelta(days=1)) == 0


def test_the_last_try_use_mailer_a_person_allows_gives_the_notice_up_when_the_server_is_still_down(
    world, app_context, use_mailer, free_port
):
    use_mailer(parse_mail_settings(f"smtp://127.0.0.1:{free_port}", sender="Rhythm <exports@rhythm.test>"))
    notice = _notice(world, attempt_count=LAST_TRY - 2, next_attempt_at=utcnow() - timedelta(seconds=1))

    assert [export_notices.send(notice.id), _row(notice.id).status] == ["retry_later", NoticeStatus.PENDING]
    _retry_time_passes(notice.id)
    assert export_notices.send(notice.id) == "failed"

    row = _row(notice.id)
    assert (row.status, row.attempt_count) == (NoticeStatus.FAILED, LAST_TRY)
    assert row.last_error.startswith(f"Given up after {LAST_TRY} tries")
