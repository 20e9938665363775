"""The audit log as a CSV file, through the export-file path: admission from the audit page, the
outbox, a real rq worker reading the events with the requester's access as it is then, storage,
and the Files pages."""

from __future__ import annotations

import csv
import io
import re
from datetime import timedelta

import pytest
from sqlalchemy import func, select, update

from app.data.audit_events import iter_events
from app.domain.errors import AccessDenied
from app.domain.people.access import current_context
from app.domain.sources.stored_request import AuditSelection
from app.extensions import db
from app.models import ExportFile, Membership
from app.models.types import utcnow
from app.rendering.neutralise import neutralise
from app.services.accounts import audit
from app.services.files.file_work import FILES
from app.services.pages import list_pages
from app.services.work.claims import dispatch_pending
from app.services.workspace import audit_log
from tests import factories
from tests.fixtures.workers import file_row, wait_for

HEADING = [
    "event_id",
    "at",
    "who",
    "rhythm_staff",
    "action",
    "what",
    "changed",
    "on_type",
    "on_id",
    "reason",
    "details",
]
_TOKEN = re.compile(r'name="request_token" value="([^"]+)"')


def record(workspace, actor, action="schedule.paused", reason=None, days_ago=0, **details):
    event = audit.record(
        workspace_id=workspace.id,
        actor_id=actor.id if actor else None,
        action=action,
        subject_type="schedule",
        subject_id=7,
        reason=reason,
        details=details,
    )
    event.created_at = utcnow() - timedelta(days=days_ago)
    db.session.commit()
    return event


def export_csv(client, workspace, **filters):
    """Press "Export CSV" on the audit page as it shows with `filters`; the answer to the form."""
    page = client.get(f"/w/{workspace.id}/audit/", query_string=filters).text
    hidden = dict(re.findall(r'<input type="hidden" name="([a-z_]+)" value="([^"]*)">', page))
    assert _TOKEN.search(page), "the audit page offers no Export CSV form"
    return client.post(f"/w/{workspace.id}/audit/files", data=hidden)


def settled(export_id: int) -> ExportFile:
    return wait_for(lambda: (row := file_row(export_id)).is_settled and row, what="the audit file to settle")


def stored_rows(storage, export: ExportFile) -> list[list[str]]:
    data = b"".join(storage.read_chunks(export.storage_key)).decode("utf-8-sig")
    return list(csv.reader(io.StringIO(data, newline="")))


def only_file() -> ExportFile:
    db.session.rollback()
    return db.session.execute(select(ExportFile)).scalar_one()


def test_a_real_worker_writes_the_filtered_log_with_formulas_neutralised(
    client, auth, world, isolated_storage, start_worker
):
    hostile = factories.hostile_values()
    for value in hostile:
        record(world.workspace, world.admin, "schedule.paused", reason=value)
    record(world.workspace, world.admin, "schedule.deleted", reason="another action")
    record(world.workspace, world.admin, "schedule.paused", reason="too old", days_ago=10)
    record(world.workspace, world.member, "schedule.paused", reason="someone else")
    record(world.other_workspace, world.outsider, "schedule.paused", reason="another workspace")
    start_worker()
    auth.login(world.admin.email)
    since = (utcnow() - timedelta(days=2)).date().isoformat()

    answer = export_csv(client, world.workspace, action="schedule.paused", actor=world.admin.id, since=since)

    export = only_file()
    assert answer.status_code == 302
    assert answer.headers["Location"] == f"/w/{world.workspace.id}/files/{export.id}"
    produced = settled(export.id)
    assert produced.status == "succeeded", produced.failure_detail
    rows = stored_rows(isolated_storage, produced)
    assert rows[0] == HEADING
    assert [row[9] for row in rows[1:]] == [neutralise(value) for value in reversed(hostile)]
    assert produced.row_count == len(hostile)
    assert {(row[2], row[3], row[4], row[5]) for row in rows[1:]} == {
        (world.admin.name, "false", "schedule.paused", "Schedule paused")
    }


def test_formula_like_text_starts_with_a_quote_in_every_text_column(
    client, auth, world, isolated_storage, start_worker
):
    world.admin.name = "=HYPERLINK(1)"
    db.session.commit()
    record(world.workspace, world.admin, "=cmd|calc", reason="@SUM(A1)", note="+1")
    start_worker()
    auth.login(world.admin.email)

    export_csv(client, world.workspace)

    row = stored_rows(isolated_storage, settled(only_file().id))[1]
    assert (row[2], row[4], row[5], row[9]) == ("'=HYPERLINK(1)", "'=cmd|calc", "Recorded change", "'@SUM(A1)")
    assert row[10] == '{"note": "+1"}'


def test_the_file_keeps_the_code_beside_its_sentence_what_changed_and_the_reason_in_words(
    client, auth, world, isolated_storage, start_worker
):
    record(world.workspace, world.admin, "schedule.refreshed", reason="user", from_version=2, to_version=3)
    start_worker()
    auth.login(world.admin.email)

    export_csv(client, world.workspace)

    row = stored_rows(isolated_storage, settled(only_file().id))[1]
    assert (row[4], row[5], row[6], row[9]) == (
        "schedule.refreshed",
        "Schedule's query refreshed",
        "version: 2 → 3",
        "Paused by hand.",
    )


def test_the_product_s_own_actions_have_no_person(client, auth, world, isolated_storage, start_worker):
    record(world.workspace, None, "schedule.paused", reason="automatic")
    start_worker()
    auth.login(world.admin.email)

    export_csv(client, world.workspace)

    row = stored_rows(isolated_storage, settled(only_file().id))[1]
    assert (row[2], row[3], row[9]) == ("", "", "automatic")


def test_an_administrator_no_longer_one_when_it_runs_gets_a_failed_file_saying_why(
    world, isolated_storage, start_worker
):
    record(world.workspace, world.admin, reason="kept secret")
    access = current_context(world.workspace.id, world.admin.id)
    export = audit_log.request_csv_file(access, list_pages.read_request(audit_log.AUDIT_LIST, {}), dispatch_now=False)
    db.session.execute(
        update(Membership)
        .where(Membership.workspace_id == world.workspace.id, Membership.person_id == world.admin.id)
        .values(role="member")
    )
    db.session.commit()
    start_worker()

    assert dispatch_pending(FILES) == 1
    failed = settled(export.id)

    assert (failed.status, failed.failure_code) == ("failed", "access_lost")
    assert "no longer an administrator" in failed.failure_detail
    assert isolated_storage.list_keys("files/") == []


def test_a_member_who_is_not_an_administrator_gets_404_and_no_file(client, auth, world):
    record(world.workspace, world.admin)
    auth.login(world.member.email)

    answer = client.post(f"/w/{world.workspace.id}/audit/files", data={})

    assert answer.status_code == 404
    assert db.session.scalar(select(func.count()).select_from(ExportFile)) == 0


def test_the_form_sent_twice_makes_one_file(client, auth, world):
    record(world.workspace, world.admin)
    auth.login(world.admin.email)
    page = client.get(f"/w/{world.workspace.id}/audit/").text
    form = {"request_token": _TOKEN.search(page).group(1)}

    first = client.post(f"/w/{world.workspace.id}/audit/files", data=form)
    again = client.post(f"/w/{world.workspace.id}/audit/files", data=form)

    assert first.headers["Location"] == again.headers["Location"]
    assert only_file().kind == "audit"


def test_the_files_pages_show_an_audit_file_as_the_audit_log_with_its_filters(client, auth, world):
    record(world.workspace, world.admin, "schedule.deleted")
    factories.make_export(factories.make_query(world.workspace, world.admin, name="Hours query"), world.admin)
    auth.login(world.admin.email)
    export_csv(client, world.workspace, action="schedule.deleted", since="2026-11-01")
    export = db.session.execute(select(ExportFile).where(ExportFile.kind == "audit")).scalar_one()

    listed = client.get(f"/w/{world.workspace.id}/files/", query_string={"source": "audit"}).text
    detail = client.get(f"/w/{world.workspace.id}/files/{export.id}").text

    assert "Audit log" in listed and "Hours query" not in listed
    assert export.file_name.startswith("audit-log-") and export.file_name.endswith(".csv")
    assert "The workspace's audit log" in detail
    assert "Schedule deleted" in detail and "2026-11-01" in detail
    assert f'href="/w/{world.workspace.id}/audit/?action=schedule.deleted&amp;since=2026-11-01"' in detail


def test_the_reader_refuses_a_member_and_reads_only_the_administrator_s_workspace(world):
    record(world.workspace, world.admin, reason="ours")
    record(world.other_workspace, world.outsider, reason="theirs")

    with pytest.raises(AccessDenied):
        iter_events(current_context(world.workspace.id, world.member.id), AuditSelection())
    events = list(iter_events(current_context(world.workspace.id, world.admin.id), AuditSelection()))
    assert [event[7] for event in events] == ["ours"]


def test_a_damaged_form_token_is_said_on_the_audit_page_and_makes_no_file(client, auth, world):
    record(world.workspace, world.admin, reason="still listed")
    auth.login(world.admin.email)

    answer = client.post(f"/w/{world.workspace.id}/audit/files", data={"request_token": "not a token!"})

    assert answer.status_code == 400
    assert "No file was requested: The form was damaged" in answer.text and "still listed" in answer.text
    assert db.session.scalar(select(func.count()).select_from(ExportFile)) == 0
