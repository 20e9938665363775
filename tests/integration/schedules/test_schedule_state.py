"""Pause, resume, take ownership, run now, the run history fragment, and what the sources' removal does."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from app.domain.people.access import current_context
from app.domain.values.text_rules import new_request_token, request_key
from app.extensions import db
from app.models import AuditEvent, Report, SavedQuery
from app.models.schedule import (
    RecipientDelivery,
    Schedule,
    ScheduleRun,
    ScheduleRunAttempt,
)
from app.models.types import utcnow
from app.services.accounts import audit
from app.services.schedules import schedules
from tests import factories
from tests.fixtures.routes import HTMX
from tests.fixtures.workers import wait_for
from tests.integration.packages.threads import in_thread
from tests.integration.schedules.forms import schedules_url


def _fresh(schedule_id: int) -> Schedule:
    db.session.expire_all()
    return db.session.get(Schedule, schedule_id)


def _report(world, query, owner) -> Report:
    report = Report(
        workspace_id=world.workspace.id,
        owner_id=owner.id,
        name="Hours report",
        kind="table",
        source_query_id=query.id,
        columns=[{"name": "hours", "width": None}],
        title="Hours",
    )
    db.session.add(report)
    db.session.commit()
    return report


def test_pausing_by_hand_then_resuming_moves_the_next_occurrence_from_now(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member, next_occurrence_at=utcnow() - timedelta(days=3))
    auth.login(world.member.email)
    assert client.post(schedules_url(world, f"{schedule.id}/pause")).status_code == 302
    paused = _fresh(schedule.id)
    assert (paused.status, paused.pause_reason) == ("paused", "user")
    assert "Paused by hand." in client.get(schedules_url(world, f"{schedule.id}")).get_data(as_text=True)
    assert client.post(schedules_url(world, f"{schedule.id}/resume")).status_code == 302
    resumed = _fresh(schedule.id)
    assert resumed.status == "active" and resumed.pause_reason is None
    assert resumed.next_occurrence_at > utcnow()
    actions = db.session.scalars(select(AuditEvent.action).order_by(AuditEvent.id)).all()
    assert actions == ["schedule.paused", "schedule.resumed"]


def test_a_legacy_import_resumes_only_with_the_confirmation_tick(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(
        query, world.member, status="paused", pause_reason="legacy_import", legacy_ref="OLD-7"
    )
    auth.login(world.member.email)
    refused = client.post(schedules_url(world, f"{schedule.id}/resume"))
    assert refused.status_code == 400
    assert "old system" in refused.get_data(as_text=True)
    assert _fresh(schedule.id).status == "paused"
    assert (
        client.post(schedules_url(world, f"{schedule.id}/resume"), data={"legacy_switched_off": "y"}).status_code == 302
    )
    assert _fresh(schedule.id).status == "active"


def test_an_imported_schedule_shows_its_old_system_id_on_its_page(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(
        query, world.member, status="paused", pause_reason="legacy_import", legacy_ref="SCH-1007"
    )
    auth.login(world.member.email)

    page = client.get(schedules_url(world, str(schedule.id))).get_data(as_text=True)

    assert re.search(r"<dt>Old system's id</dt><dd>SCH-1007 ", page.replace("&#39;", "'"))


def test_resume_says_the_owner_lost_access_and_stays_paused(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member, status="paused", pause_reason="owner_access_lost")
    world.member_membership.dataset_grants = ["people"]
    world.member_membership.grants = ["schedules.manage"]
    db.session.commit()
    auth.login(world.member.email)
    page = client.get(schedules_url(world, f"{schedule.id}")).get_data(as_text=True)
    assert "owner lost access" in page and "can no longer read the data" in page
    refused = client.post(schedules_url(world, f"{schedule.id}/resume"))
    assert refused.status_code == 400 and "can no longer read the data" in refused.get_data(as_text=True)
    assert _fresh(schedule.id).pause_reason == "owner_access_lost"


def test_deleting_a_report_pauses_its_schedules_with_source_removed(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    report = _report(world, query, world.member)
    schedule = factories.make_schedule(
        query,
        world.member,
        kind="report",
        format="pdf",
        source_query_id=None,
        query_definition=None,
        query_version=None,
        report_id=report.id,
        report_version_seen=1,
    )
    auth.login(world.member.email)
    assert client.post(f"/w/{world.workspace.id}/reports/{report.id}/delete").status_code == 302
    paused = _fresh(schedule.id)
    assert (paused.status, paused.pause_reason, paused.report_id) == ("paused", "source_removed", None)
    page = client.get(schedules_url(world, f"{schedule.id}")).get_data(as_text=True)
    assert "Its report was deleted" in page
    refused = client.post(schedules_url(world, f"{schedule.id}/resume"))
    assert refused.status_code == 400 and "choose another source" in refused.get_data(as_text=True)


def test_deleting_a_saved_query_a_schedule_sends_is_refused_naming_the_schedule(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    factories.make_schedule(query, world.member, name="Monday digest")
    auth.login(world.member.email)
    assert "Monday digest" in client.get(f"/w/{world.workspace.id}/queries/{query.id}/delete").get_data(as_text=True)
    refused = client.post(f"/w/{world.workspace.id}/queries/{query.id}/delete")
    assert refused.status_code == 409 and "Monday digest" in refused.get_data(as_text=True)
    assert db.session.get(SavedQuery, query.id) is not None


def test_taking_ownership_needs_authority_is_audited_and_shown_in_the_history(client, auth, world):
    query = factories.make_query(world.workspace, world.scoped)
    schedule = factories.make_schedule(query, world.scoped)
    world.member_membership.grants = ["schedules.manage"]
    db.session.commit()
    auth.login(world.member.email)
    assert client.post(schedules_url(world, f"{schedule.id}/take-ownership")).status_code == 302
    assert _fresh(schedule.id).owner_id == world.member.id
    event = db.session.scalar(select(AuditEvent).where(AuditEvent.action == "schedule.ownership_taken"))
    assert event.actor_id == world.member.id and event.details["from_owner_id"] == world.scoped.id
    page = client.get(schedules_url(world, f"{schedule.id}")).get_data(as_text=True)
    assert f"took ownership from {world.scoped.name}" in page


def test_an_owner_without_authority_cannot_take_ownership_of_their_own_schedule_again(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member)
    auth.login(world.member.email)
    assert "Take ownership" not in client.get(schedules_url(world, f"{schedule.id}")).get_data(as_text=True)
    assert client.post(schedules_url(world, f"{schedule.id}/take-ownership")).status_code == 404
    assert db.session.scalar(select(AuditEvent.id)) is None


def test_run_now_admits_a_manual_run_and_leaves_the_timetable(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member)
    next_before = schedule.next_occurrence_at
    auth.login(world.member.email)
    assert client.post(schedules_url(world, f"{schedule.id}/run-now")).status_code == 302
    run = db.session.scalar(select(ScheduleRun))
    assert (run.schedule_id, run.trigger, run.status) == (schedule.id, "manual", "queued")
    assert _fresh(schedule.id).next_occurrence_at == next_before
    assert f"{world.member.name} · pressed Run now" in client.get(schedules_url(world, f"{schedule.id}")).get_data(
        as_text=True
    )


RUN_NOW_TOKEN = re.compile(r'name="request_token" value="([A-Za-z0-9_-]+)"')


def _run_now_token(client, world, schedule) -> str:
    """The one-time token of the Run now form, as the schedule page renders it."""
    page = client.get(schedules_url(world, f"{schedule.id}")).get_data(as_text=True)
    return RUN_NOW_TOKEN.search(page).group(1)


def _run_requests() -> list[str]:
    return db.session.scalars(select(AuditEvent.action).where(AuditEvent.action == "schedule.run_requested")).all()


def test_run_now_sent_again_with_its_token_admits_one_run(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member)
    auth.login(world.member.email)
    token = _run_now_token(client, world, schedule)

    first = client.post(schedules_url(world, f"{schedule.id}/run-now"), data={"request_token": token})
    again = client.post(
        schedules_url(world, f"{schedule.id}/run-now"), data={"request_token": token}, follow_redirects=True
    )

    assert first.status_code == 302 and again.status_code == 200
    assert "already under way, so no other was started" in again.get_data(as_text=True)
    assert len(db.session.scalars(select(ScheduleRun.id)).all()) == 1
    assert _run_requests() == ["schedule.run_requested"]


def test_run_now_with_its_token_after_the_run_settled_shows_that_run(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member)
    auth.login(world.member.email)
    token = _run_now_token(client, world, schedule)
    client.post(schedules_url(world, f"{schedule.id}/run-now"), data={"request_token": token})
    run = db.session.scalar(select(ScheduleRun))
    run.status = "succeeded"
    db.session.commit()

    again = client.post(
        schedules_url(world, f"{schedule.id}/run-now"), data={"request_token": token}, follow_redirects=True
    )

    assert "This press of Run now was answered already" in again.get_data(as_text=True)
    assert db.session.scalars(select(ScheduleRun.id)).all() == [run.id]


def test_run_now_from_another_page_while_a_manual_run_is_queued_shows_that_run(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member)
    auth.login(world.member.email)
    first_page, second_page = _run_now_token(client, world, schedule), _run_now_token(client, world, schedule)
    assert first_page != second_page

    client.post(schedules_url(world, f"{schedule.id}/run-now"), data={"request_token": first_page})
    second = client.post(
        schedules_url(world, f"{schedule.id}/run-now"), data={"request_token": second_page}, follow_redirects=True
    )

    assert "already under way" in second.get_data(as_text=True)
    runs = db.session.scalars(select(ScheduleRun)).all()
    assert [(run.trigger, run.status) for run in runs] == [("manual", "queued")]
    assert _run_requests() == ["schedule.run_requested"]


def test_the_database_refuses_a_second_queued_or_running_manual_run_of_a_schedule(world):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member)

    def add_run(status: str, trigger: str, minutes_ago: int) -> None:
        db.session.add(
            ScheduleRun(
                workspace_id=schedule.workspace_id,
                schedule_id=schedule.id,
                occurrence_at=utcnow() - timedelta(minutes=minutes_ago),
                status=status,
                trigger=trigger,
            )
        )
        db.session.commit()

    add_run("running", "manual", 3)
    with pytest.raises(IntegrityError, match="schedule_runs_one_active_manual_uidx"):
        add_run("queued", "manual", 2)
    db.session.rollback()
    add_run("queued", "timetable", 1)
    add_run("succeeded", "manual", 0)


def test_two_presses_racing_past_the_lookup_admit_one_run(app, world, hold_lock):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member)
    schedule_id, workspace_id, person_id = schedule.id, world.workspace.id, world.member.id

    def press(token: str):
        def work() -> tuple[int, bool]:
            access = current_context(workspace_id, person_id)
            pressed = schedules.run_now(access, db.session.get(Schedule, schedule_id), request_key(token, {}))
            return pressed.run.id, pressed.admitted

        return work

    # Both presses look for a run, find none, and wait to insert theirs until the lock goes.
    inserts_wait = hold_lock(f"LOCK TABLE {ScheduleRun.__tablename__} IN EXCLUSIVE MODE")
    presses = [in_thread(app, press(new_request_token())) for _ in range(2)]
    wait_for(lambda: inserts_wait.waiters() == 2, timeout=30, what="both presses to insert their run")
    inserts_wait.release()
    for thread, outcome in presses:
        thread.join(timeout=30)
        assert outcome.error is None, outcome.error

    [only_run] = db.session.scalars(select(ScheduleRun.id)).all()
    assert sorted(outcome.value for _, outcome in presses) == [(only_run, False), (only_run, True)]


def test_run_now_with_a_damaged_token_says_so_and_admits_nothing(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member)
    auth.login(world.member.email)

    refused = client.post(schedules_url(world, f"{schedule.id}/run-now"), data={"request_token": "<script>"})

    assert refused.status_code == 400 and "The form was damaged" in refused.get_data(as_text=True)
    assert db.session.scalar(select(ScheduleRun.id)) is None


def test_run_now_on_a_paused_schedule_says_to_resume_first(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member, status="paused", pause_reason="user")
    auth.login(world.member.email)
    refused = client.post(schedules_url(world, f"{schedule.id}/run-now"))
    assert refused.status_code == 400 and "Resume it first" in refused.get_data(as_text=True)
    assert db.session.scalar(select(ScheduleRun.id)) is None


def _run(schedule, status, **values) -> ScheduleRun:
    run = ScheduleRun(
        workspace_id=schedule.workspace_id, schedule_id=schedule.id, occurrence_at=utcnow(), status=status, **values
    )
    db.session.add(run)
    db.session.commit()
    return run


def test_the_runs_fragment_polls_while_a_run_is_active_and_stops_with_286(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member)
    run = _run(schedule, "running", attempt_count=1)
    auth.login(world.member.email)
    active = client.get(schedules_url(world, f"{schedule.id}/runs"), headers=HTMX)
    assert active.status_code == 200 and 'hx-trigger="every 2s"' in active.get_data(as_text=True)
    run.status, run.failure_code = "failed", "internal"
    db.session.commit()
    settled = client.get(schedules_url(world, f"{schedule.id}/runs"), headers=HTMX)
    assert settled.status_code == 286 and "every 2s" not in settled.get_data(as_text=True)


def test_the_history_shows_attempts_the_file_and_recipient_rows(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member)
    export = factories.make_export(query, world.member)
    run = _run(schedule, "failed", attempt_count=2, failure_code="storage_error", export_id=export.id)
    db.session.add_all(
        [
            ScheduleRunAttempt(
                run_id=run.id,
                number=1,
                outcome="failed",
                error_code="storage_error",
                error_detail="Bucket unavailable",
                ended_at=utcnow(),
            ),
            RecipientDelivery(
                run_id=run.id,
                address_key=f"person:{world.member.id}",
                person_id=world.member.id,
                status="skipped",
                skip_reason="recipient_unsubscribed",
                link_nonce="n1",
            ),
            RecipientDelivery(
                run_id=run.id,
                address_key="x@elsewhere.example",
                email="x@elsewhere.example",
                status="submitted",
                submission_id="<abc@mail>",
                link_nonce="n2",
                download_count=3,
            ),
        ]
    )
    db.session.commit()
    auth.login(world.member.email)
    page = client.get(schedules_url(world, f"{schedule.id}")).get_data(as_text=True)
    assert "Bucket unavailable" in page
    assert "Not sent: this person unsubscribed from the schedule." in page and "recipient_unsubscribed" not in page
    # The mail server's Message-ID is for the log, not the page: "submitted" says it went.
    assert "&lt;abc@mail&gt;" not in page and '<td class="num">3</td>' in page
    assert f"/w/{world.workspace.id}/files/{export.id}" in page


def test_deleting_a_schedule_keeps_the_files_it_made(client, auth, world):
    from app.models import ExportFile

    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member)
    export = factories.make_export(query, world.member, schedule_id=schedule.id)
    _run(schedule, "succeeded", export_id=export.id, row_count=4)
    auth.login(world.member.email)
    assert client.post(schedules_url(world, f"{schedule.id}/delete")).status_code == 302
    db.session.expire_all()
    assert db.session.get(Schedule, schedule.id) is None
    kept = db.session.get(ExportFile, export.id)
    assert kept is not None and kept.schedule_id is None
    assert db.session.scalar(select(ScheduleRun.id)) is None


def test_a_schedule_whose_report_was_deleted_resumes_after_another_report_is_chosen(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    replacement = _report(world, query, world.member)
    schedule = factories.make_schedule(
        query,
        world.member,
        kind="report",
        format="pdf",
        source_query_id=None,
        query_definition=None,
        query_version=None,
        report_id=None,
        status="paused",
        pause_reason="source_removed",
    )
    auth.login(world.member.email)
    edited = client.post(
        schedules_url(world, f"{schedule.id}/edit"),
        data={
            "name": schedule.name,
            "source": f"report:{replacement.id}",
            "format": "pdf",
            "frequency": "daily",
            "time": "07:00",
            "zone": "Europe/London",
            "people": [str(world.member.id)],
            "version": str(schedule.version),
        },
    )
    assert edited.status_code == 302
    assert _fresh(schedule.id).report_id == replacement.id
    assert client.post(schedules_url(world, f"{schedule.id}/resume")).status_code == 302
    assert _fresh(schedule.id).status == "active"


def test_a_schedule_button_without_the_csrf_token_is_refused(csrf_app, world):
    """With CSRF protection on, pausing without the page's token answers 400 and the schedule runs on."""
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member)
    client = csrf_app.test_client()
    token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', client.get("/login").get_data(as_text=True))[1]
    client.post("/login", data={"email": world.member.email, "password": "password", "csrf_token": token})
    url = f"/w/{world.workspace.id}/schedules/{schedule.id}/pause"
    assert client.post(url).status_code == 400
    assert _fresh(schedule.id).status == "active"
    page = client.get(f"/w/{world.workspace.id}/schedules/{schedule.id}").get_data(as_text=True)
    token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page)[1]
    assert client.post(url, data={"csrf_token": token}).status_code == 302
    assert _fresh(schedule.id).status == "paused"


def test_the_history_says_what_the_system_did_in_words_not_codes(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member, status="paused", pause_reason="legacy_import")
    audit.record(
        workspace_id=world.workspace.id,
        actor_id=None,
        action="schedule.legacy_imported",
        subject_type="schedule",
        subject_id=schedule.id,
        details={"legacy_ref": "OLD-7"},
    )
    audit.record(
        workspace_id=world.workspace.id,
        actor_id=None,
        action="schedule.paused",
        subject_type="schedule",
        subject_id=schedule.id,
        reason="failure_streak",
    )
    db.session.commit()
    auth.login(world.member.email)

    page = client.get(schedules_url(world, f"{schedule.id}")).get_data(as_text=True)

    assert "The system · Schedule imported from the old scheduling system" in page
    assert "paused it (Paused after three failed runs in a row.)" in page
    assert "schedule.legacy_imported" not in page and "failure_streak" not in page
