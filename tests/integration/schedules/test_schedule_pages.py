"""The Schedules pages: list, create, edit, delete, the live timetable preview, and who sees what."""

from __future__ import annotations

import pytest
from markupsafe import escape
from sqlalchemy import func, select

from app.extensions import db
from app.models import AuditEvent
from app.models.schedule import Schedule, ScheduleRecipient
from tests import factories
from tests.integration.schedules.forms import schedule_form, schedules_url


def _count() -> int:
    return db.session.scalar(select(func.count()).select_from(Schedule))


def test_creating_a_daily_query_schedule_stores_snapshot_timetable_and_recipients(client, auth, world):
    query = factories.make_query(world.workspace, world.member, version=4)
    auth.login(world.member.email)
    response = client.post(
        schedules_url(world, "new"), data=schedule_form(query, people=[str(world.member.id), str(world.admin.id)])
    )
    assert response.status_code == 302
    schedule = db.session.scalar(select(Schedule))
    assert schedule.owner_id == world.member.id
    assert schedule.query_version == 4
    assert schedule.query_definition == query.definition()
    assert schedule.timetable == {"kind": "daily", "time": "07:30", "zone": "Europe/London"}
    assert schedule.next_occurrence_at is not None
    keys = [r.address_key for r in schedule.recipients]
    assert keys == [f"person:{world.member.id}", f"person:{world.admin.id}"]


def test_the_list_shows_name_source_owner_status_next_run_and_last_outcome(client, auth, world):
    query = factories.make_query(world.workspace, world.member, name="Hours of the week")
    factories.make_schedule(query, world.member, name="Weekly hours mail")
    paused = factories.make_schedule(query, world.member, name="Stopped mail", status="paused", pause_reason="user")
    auth.login(world.member.email)
    page = client.get(schedules_url(world)).get_data(as_text=True)
    assert "Weekly hours mail" in page and "Hours of the week" in page and world.member.name in page
    assert "Paused by hand." in page and paused.name in page
    assert "07:00" in page and "(UTC+" in page  # the next run on the schedule's own clock
    assert "none yet" in page


def test_the_navigation_links_to_schedules(client, auth, world):
    auth.login(world.member.email)
    page = client.get(f"/w/{world.workspace.id}/").get_data(as_text=True)
    assert f'href="/w/{world.workspace.id}/schedules/"' in page


def test_the_new_form_and_the_schedule_page_render(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member, custom_message="<b>hi</b>")
    auth.login(world.member.email)
    form = client.get(schedules_url(world, "new"))
    assert form.status_code == 200 and f'value="query:{query.id}"' in form.get_data(as_text=True)
    page = client.get(schedules_url(world, f"{schedule.id}"))
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert "Every day at 07:00 (Europe/London)" in html
    assert "&lt;b&gt;hi&lt;/b&gt;" in html
    assert "No runs yet." in html


def test_a_member_sees_only_their_own_schedules_and_gets_404_for_others(client, auth, world):
    query = factories.make_query(world.workspace, world.admin)
    theirs = factories.make_schedule(query, world.admin, name="Admin mail")
    auth.login(world.member.email)
    assert "Admin mail" not in client.get(schedules_url(world)).get_data(as_text=True)
    for tail in (f"{theirs.id}", f"{theirs.id}/edit", f"{theirs.id}/delete", f"{theirs.id}/runs"):
        assert client.get(schedules_url(world, tail)).status_code == 404
    for tail in ("pause", "resume", "run-now", "take-ownership", "refresh-source", "delete", "edit"):
        assert client.post(schedules_url(world, f"{theirs.id}/{tail}")).status_code == 404
    db.session.expire_all()
    assert db.session.get(Schedule, theirs.id).status == "active"


def test_a_person_with_schedule_authority_sees_and_manages_every_schedule(client, auth, world):
    query = factories.make_query(world.workspace, world.admin)
    theirs = factories.make_schedule(query, world.admin, name="Admin mail")
    world.member_membership.grants = ["schedules.manage"]
    db.session.commit()
    auth.login(world.member.email)
    assert "Admin mail" in client.get(schedules_url(world)).get_data(as_text=True)
    assert client.post(schedules_url(world, f"{theirs.id}/pause")).status_code == 302
    db.session.expire_all()
    assert db.session.get(Schedule, theirs.id).pause_reason == "user"


def test_another_workspaces_schedule_is_not_found(client, auth, world):
    outsiders_query = factories.make_query(world.other_workspace, world.outsider)
    outsiders = factories.make_schedule(outsiders_query, world.outsider)
    auth.login(world.admin.email)
    assert client.get(schedules_url(world, f"{outsiders.id}")).status_code == 404
    assert client.post(schedules_url(world, f"{outsiders.id}/delete")).status_code == 404
    assert db.session.get(Schedule, outsiders.id) is not None


def test_editing_keeps_the_snapshot_even_when_the_saved_query_moved_on(client, auth, world):
    """INV-07: saving the message or timetable never re-pins the query definition."""
    query = factories.make_query(world.workspace, world.member, version=1)
    schedule = factories.make_schedule(query, world.member)
    snapshot = dict(schedule.query_definition)
    query.version, query.columns = 2, ["person_name"]
    db.session.commit()
    auth.login(world.member.email)
    response = client.post(
        schedules_url(world, f"{schedule.id}/edit"),
        data=schedule_form(
            query,
            name="Renamed",
            custom_message="New words",
            people=[str(world.member.id)],
            version=str(schedule.version),
        ),
    )
    assert response.status_code == 302
    db.session.expire_all()
    saved = db.session.get(Schedule, schedule.id)
    assert saved.name == "Renamed" and saved.custom_message == "New words"
    assert saved.query_version == 1 and saved.query_definition == snapshot


def test_the_page_says_when_the_query_moved_on_and_refresh_takes_the_new_version(client, auth, world):
    query = factories.make_query(world.workspace, world.member, version=1)
    schedule = factories.make_schedule(query, world.member)
    query.version, query.columns = 3, ["person_name"]
    db.session.commit()
    auth.login(world.member.email)
    page = client.get(schedules_url(world, f"{schedule.id}")).get_data(as_text=True)
    assert "moved on to version 3" in page and "Refresh from saved query" in page
    assert client.post(schedules_url(world, f"{schedule.id}/refresh-source")).status_code == 302
    db.session.expire_all()
    saved = db.session.get(Schedule, schedule.id)
    assert saved.query_version == 3 and saved.query_definition["columns"] == ["person_name"]
    assert "moved on" not in client.get(schedules_url(world, f"{schedule.id}")).get_data(as_text=True)


def test_deleting_removes_the_schedule_and_its_recipients(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    schedule = factories.make_schedule(query, world.member)
    auth.login(world.member.email)
    assert client.get(schedules_url(world, f"{schedule.id}/delete")).status_code == 200
    assert client.post(schedules_url(world, f"{schedule.id}/delete")).status_code == 302
    assert _count() == 0
    assert db.session.scalar(select(func.count()).select_from(ScheduleRecipient)) == 0


def test_the_upcoming_fragment_shows_five_runs_in_the_schedules_zone_and_the_viewers(client, auth, world):
    auth.login(world.member.email)
    response = client.post(
        schedules_url(world, "upcoming"),
        data={
            "frequency": "weekly",
            "days": ["mon", "thu"],
            "time": "09:15",
            "zone": "America/New_York",
            "viewer_zone": "Asia/Tokyo",
        },
    )
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "Every Monday and Thursday at 09:15 (America/New_York)" in html
    assert html.count("<tr><td>") == 5
    assert html.count(", 09:15 E") == 5  # EST or EDT on the schedule's clock
    assert html.count("JST (UTC+09:00)") == 5


def test_the_upcoming_fragment_explains_a_timetable_that_would_fire_too_often(client, auth, world):
    auth.login(world.member.email)
    response = client.post(schedules_url(world, "upcoming"), data={"frequency": "cron", "expression": "*/5 * * * *"})
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "at most once an hour" in html


def test_the_upcoming_fragment_shows_every_mistake_in_the_timetable_at_once(client, auth, world):
    auth.login(world.member.email)
    response = client.post(
        schedules_url(world, "upcoming"),
        data={"frequency": "weekly", "time": "25:99", "days": [], "zone": "Mars/Olympus_Mons"},
    )
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert html.count('<p class="field-error">') == 3
    assert "Enter the time as hours and minutes on the 24-hour clock" in html
    assert "Choose at least one day of the week." in html
    assert "“Mars/Olympus_Mons” is not a time zone" in html


def test_the_upcoming_fragment_says_a_date_no_chosen_month_has_never_occurs(client, auth, world):
    """`0 9 31 4 *` is well formed field by field; the form says April has no 31st, not that the field is bad."""
    auth.login(world.member.email)
    response = client.post(schedules_url(world, "upcoming"), data={"frequency": "cron", "expression": "0 9 31 4 *"})
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "names a date that never occurs: April has no 31st day." in html


def test_a_report_schedule_offers_pdf_and_keeps_the_report_version(client, auth, world):
    from app.models import Report

    query = factories.make_query(world.workspace, world.member)
    report = Report(
        workspace_id=world.workspace.id,
        owner_id=world.member.id,
        name="Hours report",
        kind="table",
        source_query_id=query.id,
        columns=[{"name": "hours", "width": None}],
        title="Hours",
        version=2,
    )
    db.session.add(report)
    db.session.commit()
    auth.login(world.member.email)
    response = client.post(
        schedules_url(world, "new"),
        data=schedule_form(query, source=f"report:{report.id}", format="pdf", people=[str(world.member.id)]),
    )
    assert response.status_code == 302
    schedule = db.session.scalar(select(Schedule))
    assert (schedule.kind, schedule.report_id, schedule.report_version_seen, schedule.format) == (
        "report",
        report.id,
        2,
        "pdf",
    )
    assert schedule.query_definition is None
    page = client.get(schedules_url(world, f"{schedule.id}")).get_data(as_text=True)
    assert "this schedule last read it at its version 2" in page and "last seen" not in page


def test_saving_records_an_audit_event(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    auth.login(world.member.email)
    client.post(schedules_url(world, "new"), data=schedule_form(query, people=[str(world.member.id)]))
    actions = db.session.scalars(select(AuditEvent.action)).all()
    assert actions == ["schedule.created"]


@pytest.mark.parametrize("value", factories.hostile_values())
def test_hostile_names_and_messages_are_saved_as_typed_and_shown_escaped(client, auth, world, value):
    query = factories.make_query(world.workspace, world.member)
    auth.login(world.member.email)
    # A name is one line (test_a_name_with_a_line_break_is_refused); the message may have several.
    name = " ".join(f"S {value}".splitlines())[:200]
    response = client.post(
        schedules_url(world, "new"),
        data=schedule_form(query, name=name, custom_message=value, people=[str(world.member.id)]),
    )
    assert response.status_code == 302
    schedule = db.session.scalar(select(Schedule))
    assert schedule.name == name.strip() and schedule.custom_message == value.strip()
    page = client.get(schedules_url(world, f"{schedule.id}")).get_data(as_text=True)
    assert str(escape(name.strip())) in page
    assert "<img src" not in page and "<pdf:nextpage" not in page


@pytest.mark.parametrize("line_break", ["\r", "\n", "\r\n", "\u2028", "\u2029", "\x85", "\v", "\f"])
def test_a_name_with_a_line_break_is_refused(client, auth, world, line_break):
    query = factories.make_query(world.workspace, world.member)
    auth.login(world.member.email)
    response = client.post(
        schedules_url(world, "new"),
        data=schedule_form(query, name=f"Weekly{line_break}hours", people=[str(world.member.id)]),
    )
    assert response.status_code == 400
    assert "The name must be a single line. Remove the line break." in response.get_data(as_text=True)
    assert db.session.scalar(select(Schedule)) is None
