"""Export notices: who gets them, once per (subject, kind, person), what they say, and the mail
server being down while notifying (the retry dispatched by the work engine, whose job is
`export_notices.send`). Sent to the real aiosmtpd server of tests/fixtures/smtp.py."""

from __future__ import annotations

from datetime import timedelta

import pytest
from markupsafe import escape
from sqlalchemy import delete, select, update

from app.communications import parse_mail_settings
from app.communications.messages import one_line
from app.extensions import db
from app.models import Membership
from app.models.export_execution import ExecutionTrigger, ExportExecution
from app.models.export_notice import ExportNotice, NoticeKind, NoticeStatus
from app.models.export_settings import ExportSettings
from app.models.types import utcnow
from app.services.work.claims import dispatch_pending
from app.services.workspace_export import execution_admission, export_notices
from app.services.workspace_export.notice_work import NOTICES
from tests import factories


@pytest.fixture
def mail_to_smtp_server(use_mailer, smtp_settings):
    use_mailer(smtp_settings)


def _package(workspace, notify_person_ids=()):
    snapshot = factories.settings_snapshot(notify_person_ids=list(notify_person_ids))
    execution = factories.make_execution(workspace, settings_snapshot=snapshot)
    return factories.make_package(execution, row_count=1234, size_bytes=5_000_000)


def _use_a_mail_server_that_is_down(use_mailer, free_port) -> None:
    use_mailer(
        parse_mail_settings(f"smtp://127.0.0.1:{free_port}", sender="Rhythm <exports@rhythm.test>", timeout_seconds=2)
    )


def _remove_from_the_workspace(person) -> None:
    db.session.execute(delete(Membership).where(Membership.person_id == person.id))
    db.session.commit()


def _notices() -> list[ExportNotice]:
    db.session.rollback()
    return list(db.session.scalars(select(ExportNotice).order_by(ExportNotice.person_id)))


def _retry_time_passes() -> None:
    """Every pending notice's retry time is moved into the past, as the wait would."""
    db.session.execute(
        update(ExportNotice)
        .where(ExportNotice.next_attempt_at.is_not(None))
        .values(next_attempt_at=utcnow() - timedelta(seconds=1))
    )
    db.session.commit()


def _send_dispatched() -> list[str]:
    """Run the job of every notice the engine dispatched and did not settle, as a worker would."""
    dispatched = db.session.scalars(
        select(ExportNotice.id).where(ExportNotice.status == NoticeStatus.PENDING, ExportNotice.job_id.is_not(None))
    ).all()
    return [export_notices.send(notice_id) for notice_id in dispatched]


def test_administrators_and_the_snapshots_notification_people_who_are_members_are_notified(world, app_context):
    second_admin = factories.make_member(world.workspace, role="admin").person
    former = factories.make_person()
    package = _package(world.workspace, notify_person_ids=[world.member.id, former.id, world.outsider.id])

    chosen = export_notices.recipients("package", package.id, world.workspace.id)

    assert chosen == sorted([world.admin.id, second_admin.id, world.member.id])


def test_notifying_twice_records_and_sends_one_notice_per_person(world, smtp_server, mail_to_smtp_server):
    package = _package(world.workspace, notify_person_ids=[world.member.id])

    sent = [
        export_notices.notify(NoticeKind.PACKAGE_READY, "package", package.id, world.workspace.id) for _ in range(2)
    ]

    assert sent == [2, 0]
    assert [(n.person_id, n.status) for n in _notices()] == [(world.admin.id, "sent"), (world.member.id, "sent")]
    assert sorted(m.recipients[0] for m in smtp_server.messages) == sorted([world.admin.email, world.member.email])


def test_the_package_ready_email_links_to_the_package_page(world, app, smtp_server, mail_to_smtp_server):
    package = _package(world.workspace)

    export_notices.notify(NoticeKind.PACKAGE_READY, "package", package.id, world.workspace.id)

    message = smtp_server.messages[0]
    link = f"{app.config['SETTINGS'].public_url}/w/{world.workspace.id}/export/packages/{package.id}"
    assert link in message.part("text/plain")
    assert f'href="{link}"' in message.part("text/html")
    assert "1,234" in message.part("text/plain")
    assert message.message["Message-ID"].startswith("<export-notice.")


def test_the_execution_failed_email_links_to_the_execution_page(world, app, smtp_server, mail_to_smtp_server):
    execution = factories.make_execution(
        world.workspace, status="failed", failure_code="stalled", failure_detail="The export stopped making progress."
    )

    export_notices.notify(NoticeKind.EXECUTION_FAILED, "execution", execution.id, world.workspace.id)

    text = smtp_server.messages[0].part("text/plain")
    assert f"{app.config['SETTINGS'].public_url}/w/{world.workspace.id}/export/executions/{execution.id}" in text
    assert "The export stopped making progress." in text


def test_the_mail_server_down_leaves_the_notice_pending_and_it_is_sent_once_later(
    world, smtp_server, smtp_settings, use_mailer, free_port
):
    _use_a_mail_server_that_is_down(use_mailer, free_port)
    package = _package(world.workspace)

    assert export_notices.notify(NoticeKind.PACKAGE_READY, "package", package.id, world.workspace.id) == 0
    (notice,) = _notices()
    assert (notice.status, notice.attempt_count) == (NoticeStatus.PENDING, 1)
    assert notice.last_error and notice.next_attempt_at > utcnow()

    use_mailer(smtp_settings)  # the server is back
    assert dispatch_pending(NOTICES, utcnow()) == 0  # not before its retry time
    _retry_time_passes()
    assert [dispatch_pending(NOTICES, utcnow()), dispatch_pending(NOTICES, utcnow())] == [1, 0]
    assert _send_dispatched() == ["sent"]
    assert export_notices.notify(NoticeKind.PACKAGE_READY, "package", package.id, world.workspace.id) == 0

    (notice,) = _notices()
    assert (notice.status, notice.attempt_count, notice.last_error) == (NoticeStatus.SENT, 2, None)
    assert [m.recipients for m in smtp_server.messages] == [[world.admin.email]]


def test_a_refused_message_fails_for_good(world, smtp_server, mail_to_smtp_server):
    smtp_server.refuse(1, 550, "5.1.1 No such user", at="RCPT")
    package = _package(world.workspace)

    export_notices.notify(NoticeKind.PACKAGE_READY, "package", package.id, world.workspace.id)

    (notice,) = _notices()
    assert notice.status == NoticeStatus.FAILED
    assert "No such user" in notice.last_error
    assert dispatch_pending(NOTICES, utcnow() + timedelta(days=1)) == 0


def test_hostile_workspace_and_destination_names_survive_in_the_delivery_failed_email(
    world, smtp_server, mail_to_smtp_server
):
    for value in factories.hostile_values():
        smtp_server.messages.clear()
        workspace = factories.make_workspace(name=value[:200])
        admin = factories.make_member(workspace, role="admin").person
        destination = factories.make_destination(workspace, name=value[:100])
        package = _package(workspace)
        delivery = factories.make_package_delivery(
            package,
            destination,
            status="failed",
            failure_class="permanent",
            failure_code="AccessDenied",
            failure_summary="AccessDenied: " + value[:200],
        )

        assert export_notices.notify(NoticeKind.DELIVERY_FAILED, "delivery", delivery.id, workspace.id) == 1

        (message,) = smtp_server.messages
        assert message.recipients == [admin.email]
        text, html = message.part("text/plain"), message.part("text/html")
        for shown in (one_line(value[:200]), one_line(value[:100])):
            assert shown in text, value
            assert str(escape(shown)) in html, value


# Who hears about an execution: its settings snapshot, and access as it is at each send


def _admitted_with_notify_people(workspace, admin, people) -> ExportExecution:
    """An execution admitted for real, its snapshot taken from settings naming `people`."""
    factories.make_export_settings(workspace, notify_person_ids=[person.id for person in people])
    return execution_admission.admit(workspace.id, admin, ExecutionTrigger.MANUAL)


def _subject(kind: str, execution: ExportExecution, workspace) -> tuple[NoticeKind, int]:
    if kind == "execution":
        return NoticeKind.EXECUTION_FAILED, execution.id
    package = factories.make_package(execution)
    if kind == "package":
        return NoticeKind.PACKAGE_READY, package.id
    delivery = factories.make_package_delivery(
        package,
        factories.make_destination(workspace),
        status="failed",
        failure_class="permanent",
        failure_code="AccessDenied",
    )
    return NoticeKind.DELIVERY_FAILED, delivery.id


@pytest.mark.parametrize("subject_type", ["execution", "package", "delivery"])
def test_a_settings_edit_after_admission_does_not_change_who_hears_about_that_execution(
    world, smtp_server, mail_to_smtp_server, subject_type
):
    chosen_then = world.member
    chosen_since = factories.make_member(world.workspace).person
    execution = _admitted_with_notify_people(world.workspace, world.admin, [chosen_then])
    settings = db.session.scalar(select(ExportSettings).where(ExportSettings.workspace_id == world.workspace.id))
    settings.notify_person_ids = [chosen_since.id]
    db.session.commit()
    kind, subject_id = _subject(subject_type, execution, world.workspace)

    export_notices.notify(kind, subject_type, subject_id, world.workspace.id)

    assert sorted(m.recipients[0] for m in smtp_server.messages) == sorted([world.admin.email, chosen_then.email])


def test_a_snapshot_person_removed_from_the_workspace_since_admission_is_not_notified(
    world, smtp_server, mail_to_smtp_server
):
    execution = _admitted_with_notify_people(world.workspace, world.admin, [world.member])
    _remove_from_the_workspace(world.member)

    export_notices.notify(NoticeKind.EXECUTION_FAILED, "execution", execution.id, world.workspace.id)

    assert [m.recipients for m in smtp_server.messages] == [[world.admin.email]]


def test_an_administrator_demoted_since_admission_and_not_named_in_the_snapshot_is_not_notified(
    world, smtp_server, mail_to_smtp_server
):
    demoted = factories.make_member(world.workspace, role="admin")
    execution = _admitted_with_notify_people(world.workspace, world.admin, [])
    demoted.role = "member"
    db.session.commit()

    export_notices.notify(NoticeKind.EXECUTION_FAILED, "execution", execution.id, world.workspace.id)

    assert [m.recipients for m in smtp_server.messages] == [[world.admin.email]]


def test_a_person_removed_before_a_notices_retry_is_not_mailed_and_the_notice_says_why(
    world, smtp_server, smtp_settings, use_mailer, free_port
):
    _use_a_mail_server_that_is_down(use_mailer, free_port)
    package = _package(world.workspace, notify_person_ids=[world.member.id])
    assert export_notices.notify(NoticeKind.PACKAGE_READY, "package", package.id, world.workspace.id) == 0
    _remove_from_the_workspace(world.member)

    use_mailer(smtp_settings)  # the server is back
    _retry_time_passes()
    assert dispatch_pending(NOTICES, utcnow()) == 2
    assert sorted(_send_dispatched()) == ["failed", "sent"]

    assert [m.recipients for m in smtp_server.messages] == [[world.admin.email]]
    notices = {notice.person_id: notice for notice in _notices()}
    assert notices[world.admin.id].status == NoticeStatus.SENT
    assert (notices[world.member.id].status, notices[world.member.id].last_error) == (
        NoticeStatus.FAILED,
        export_notices.NO_LONGER_A_RECIPIENT,
    )
