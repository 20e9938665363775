"""Files a schedule produced (issue 9, item 12): readable by the owner and by schedule authority (INV-04),
with their schedule on the file page; every other file stays its requester's alone."""

from __future__ import annotations

import pytest
from markupsafe import escape
from sqlalchemy import select

from app.domain.files import export_file
from app.extensions import db
from app.models import ExportFile
from app.storage import get_storage
from tests import factories

CONTENT = b"id,hours\r\n1,7.5\r\n"
# The progress URL answers htmx's polls; asked for plainly it leads to the file's page.
HTMX = {"HX-Request": "true"}


@pytest.fixture
def scheduled_file(world):
    """The member's schedule (with a hostile name) produced a succeeded file; a manager holds the grant."""
    query = factories.make_query(world.workspace, world.member)
    export = factories.make_export(query, world.member)
    attempt = export_file.start(export.id)
    get_storage().put_bytes(export.storage_key, CONTENT)
    export_file.succeed(export.id, attempt, size_bytes=len(CONTENT), row_count=1, retention_days=30)
    schedule = factories.make_schedule(query, world.member, name='Hours <b>"weekly"</b>')
    factories.make_run(schedule, export)
    db.session.commit()
    manager = factories.make_member(world.workspace, grants=["schedules.manage"]).person
    return world, schedule, export, manager


def _file_urls(world, export) -> list[str]:
    base = f"/w/{world.workspace.id}/files/{export.id}"
    return [base, f"{base}/progress", f"{base}/download"]


@pytest.mark.parametrize("reader", ["owner", "manager", "admin"])
def test_the_owner_and_schedule_authority_read_a_schedules_file(client, auth, scheduled_file, reader):
    world, schedule, export, manager = scheduled_file
    auth.login({"owner": world.member, "manager": manager, "admin": world.admin}[reader].email)
    for url in _file_urls(world, export):
        # 286: a settled file stops the polling
        assert client.get(url, headers=HTMX).status_code in (200, 286), url
    assert client.get(f"/w/{world.workspace.id}/files/{export.id}/download").data == CONTENT


def test_the_file_page_names_and_links_its_schedule(client, auth, scheduled_file):
    world, schedule, export, manager = scheduled_file
    auth.login(manager.email)
    page = client.get(f"/w/{world.workspace.id}/files/{export.id}").get_data(as_text=True)
    link = f'<a href="/w/{world.workspace.id}/schedules/{schedule.id}">{escape(schedule.name)}</a>'
    assert link in page


def test_a_plain_member_cannot_read_a_schedules_file(client, auth, scheduled_file):
    world, schedule, export, manager = scheduled_file
    auth.login(world.scoped.email)
    for url in _file_urls(world, export):
        assert client.get(url, headers=HTMX).status_code == 404, url


def test_schedule_authority_does_not_open_a_persons_own_file(client, auth, scheduled_file):
    """A file someone asked for by hand stays theirs alone, whatever grant the reader holds."""
    world, schedule, export, manager = scheduled_file
    own = factories.make_export(factories.make_query(world.workspace, world.member), world.member)
    auth.login(manager.email)
    for url in _file_urls(world, own):
        assert client.get(url, headers=HTMX).status_code == 404, url


def test_authority_in_another_workspace_does_not_reach_the_file(client, auth, scheduled_file):
    world, schedule, export, manager = scheduled_file
    elsewhere = factories.make_member(world.other_workspace, grants=["schedules.manage"]).person
    auth.login(elsewhere.email)
    response = client.get(f"/w/{world.other_workspace.id}/files/{export.id}")
    assert response.status_code == 404


def test_a_schedules_file_says_its_source_is_the_schedule_and_names_its_query_as_it_is(client, auth, world):
    """The file is named after the schedule; its page names the schedule as the source and the query by its own name."""
    query = factories.make_query(world.workspace, world.member, name="Hours by team")
    schedule = factories.make_schedule(query, world.member, name="Monday hours")
    factories.make_run(schedule, factories.make_export(query, world.member, source_name=schedule.name))
    db.session.commit()
    auth.login(world.member.email)

    export_id = db.session.scalar(select(ExportFile.id))
    page = client.get(f"/w/{world.workspace.id}/files/{export_id}").get_data(as_text=True)

    schedule_link = f'<a href="/w/{world.workspace.id}/schedules/{schedule.id}">Monday hours</a>'
    assert f"<dt>Source</dt><dd>Schedule: {schedule_link}</dd>" in page
    query_link = f'<a href="/w/{world.workspace.id}/queries/{query.id}">Hours by team</a>'
    assert "<dt>Query</dt>" in page and query_link in page
    assert f'/queries/{query.id}">Monday hours</a>' not in page


def test_the_files_list_marks_a_schedules_file_and_shows_every_files_choices(client, auth, world):
    query = factories.make_query(world.workspace, world.member, name="Hours by team")
    schedule = factories.make_schedule(query, world.member, name="Monday hours")
    factories.make_run(schedule, factories.make_export(query, world.member, source_name=schedule.name))
    factories.make_export(
        query, world.member, source_name="By hand", format="xlsx", heading="labels", time_zone="Europe/Paris"
    )
    factories.make_export(query, world.member, source_name="For pandas", exact_values=True, heading="none")
    db.session.commit()
    auth.login(world.member.email)

    page = client.get(f"/w/{world.workspace.id}/files/").get_data(as_text=True)

    schedule_link = f'<a href="/w/{world.workspace.id}/schedules/{schedule.id}">Monday hours</a>'
    assert page.count('class="file-origin"') == 1
    assert f'<span class="file-origin">Schedule: {schedule_link}</span>' in page
    assert "Column labels · times in Europe/Paris" in page
    assert "No heading row · exact values · times in UTC" in page
    assert "Column names · spreadsheet-safe text · times in UTC" in page
    assert '<select id="list-filter-schedule" name="schedule">' in page
