"""Attachments under the workspace's policy, through the real aiosmtpd server: a file within the
limit arrives attached byte for byte beside its link, a larger one arrives as the link with the
sentence saying why, and each recipient row records which it was."""

from __future__ import annotations

import math
import re

from sqlalchemy import select, update

from app.extensions import db
from app.models import ExportFile, Workspace
from app.models.schedule import RecipientDelivery, ScheduleRun
from app.services.schedules.schedule_runs import process_run
from app.storage import get_storage
from tests import factories

DOWNLOAD_LINK = re.compile(r"https?://\S+/d/\S+")


def _allow_attachments(workspace: Workspace, limit_mb: int | None) -> None:
    db.session.execute(update(Workspace).where(Workspace.id == workspace.id).values(attachment_limit_mb=limit_mb))
    db.session.commit()


def _settled(run_id: int) -> tuple[ExportFile, RecipientDelivery]:
    db.session.rollback()
    run = db.session.get_one(ScheduleRun, run_id)
    export = db.session.get_one(ExportFile, run.export_id)
    row = db.session.scalars(select(RecipientDelivery).where(RecipientDelivery.run_id == run_id)).one()
    return export, row


def _stored_bytes(export: ExportFile) -> bytes:
    return b"".join(get_storage().read_chunks(export.storage_key))


def _attachments(message) -> list:
    return list(message.iter_attachments())


def test_a_file_within_the_limit_arrives_attached_byte_for_byte_and_linked(
    run_scenario, mail_to_smtp_server, smtp_server
):
    _allow_attachments(run_scenario.workspace, 5)
    run = run_scenario.admit(run_scenario.make_schedule(attach_file=True))

    assert process_run(run.id) == "succeeded"

    export, row = _settled(run.id)
    (arrived,) = smtp_server.messages
    (attachment,) = _attachments(arrived.message)
    assert attachment.get_content_type() == "text/csv"
    assert attachment.get_filename() == export.file_name
    assert attachment.get_payload(decode=True) == _stored_bytes(export)
    assert DOWNLOAD_LINK.search(arrived.part("text/plain"))
    assert row.attached is True


def _big_notes(scenario, total_bytes: int) -> None:
    """Timesheet rows whose notes make the query's CSV about `total_bytes` long."""
    team = factories.make_team(scenario.workspace, name="Day team")
    employee = factories.make_team_member(team, full_name="Ada Long")
    for n in range(total_bytes // 20_000 + 1):
        factories.make_timesheet_entry(employee, note=f"{n:05d}" + "x" * 19_995)


def test_a_file_over_the_limit_arrives_as_the_link_with_the_reason(run_scenario, mail_to_smtp_server, smtp_server):
    _allow_attachments(run_scenario.workspace, 1)
    _big_notes(run_scenario, 800_000)  # under 1 MiB as bytes, over it base64-encoded
    run = run_scenario.admit(run_scenario.make_schedule(attach_file=True))

    assert process_run(run.id) == "succeeded"

    export, row = _settled(run.id)
    assert 786_432 < export.size_bytes < 1 << 20
    encoded_mib = 4 * -(-export.size_bytes // 3) / (1 << 20)
    (arrived,) = smtp_server.messages
    assert _attachments(arrived.message) == []
    text = " ".join(arrived.part("text/plain").split())
    assert (
        f"The file is {math.ceil(encoded_mib * 10) / 10:.1f} MB encoded for email, over this workspace's 1 MB "
        "attachment limit, so it is linked instead." in text
    )
    assert DOWNLOAD_LINK.search(arrived.part("text/plain"))
    assert (row.attached, row.attachment_limit_mb) == (False, 1)


def test_a_schedule_that_did_not_choose_to_attach_sends_the_link_only(run_scenario, mail_to_smtp_server, smtp_server):
    _allow_attachments(run_scenario.workspace, 5)
    run = run_scenario.admit(run_scenario.make_schedule())

    process_run(run.id)

    _, row = _settled(run.id)
    (arrived,) = smtp_server.messages
    assert _attachments(arrived.message) == []
    assert "linked instead" not in arrived.part("text/plain")
    assert row.attached is None


def test_links_only_overrules_a_schedule_that_chose_to_attach(run_scenario, mail_to_smtp_server, smtp_server):
    run = run_scenario.admit(run_scenario.make_schedule(attach_file=True))

    process_run(run.id)

    _, row = _settled(run.id)
    (arrived,) = smtp_server.messages
    assert _attachments(arrived.message) == []
    assert row.attached is None


def test_a_retry_sends_the_message_the_row_decided_even_after_the_policy_changed(
    run_scenario, mail_to_smtp_server, smtp_server
):
    _allow_attachments(run_scenario.workspace, 5)
    run = run_scenario.admit(run_scenario.make_schedule(attach_file=True))
    smtp_server.refuse(1)
    assert process_run(run.id) == "retry_later"
    _allow_attachments(run_scenario.workspace, None)
    db.session.execute(update(ScheduleRun).where(ScheduleRun.id == run.id).values(next_attempt_at=None))
    db.session.commit()

    assert process_run(run.id) == "succeeded"

    export, row = _settled(run.id)
    (arrived,) = smtp_server.messages
    (attachment,) = _attachments(arrived.message)
    assert attachment.get_payload(decode=True) == _stored_bytes(export)
    assert row.attached is True
