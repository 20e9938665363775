"""The Reports pages: list, create, edit, delete, preview and request a file, with their access rules."""

from __future__ import annotations

import pytest
from markupsafe import escape
from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError

from app.domain.sources.report_spec import QueryInUse
from app.extensions import db
from app.models import AuditEvent, ExportFile, Report, SavedQuery, Workspace
from app.services.schedules import source_removal
from app.services.work.queue import WorkPriority, work_queue
from tests.fixtures.routes import HTMX


def _count(model) -> int:
    return db.session.scalar(select(func.count()).select_from(model))


def _url(world, tail: str = "") -> str:
    return f"/w/{world.workspace.id}/reports/{tail}"


def _form(query: SavedQuery, **overrides) -> dict:
    """A complete, valid report form as the page posts it; keyword arguments replace fields."""
    data = {
        "name": "Hours by team",
        "kind": "coded",
        "source_query_id": str(query.id),
        "columns": ["person_name", "work_date", "hours"],
        "width-person_name": "40",
        "width-work_date": "",
        "width-hours": "15",
        "code_column": "team_name",
        "code_descriptions": "Team A = Day ward\nTeam B = Night ward",
        "group_column": "",
        "figures-0-function": "count",
        "title": "Hours by team",
        "subtitle": "",
        "page_size": "A4",
        "orientation": "landscape",
        "show_filters": "y",
        "action": "save",
    }
    data.update(overrides)
    return {key: value for key, value in data.items() if value is not None}


def test_list_shows_the_reports_with_kind_query_and_version(client, auth, kit):
    """The list names each report with its kind, saved query, version and owner."""
    report = kit.report(kind="coded", version=4)
    auth.login(kit.world.member.email)
    page = client.get(_url(kit.world)).get_data(as_text=True)
    assert report.name in page and "coded" in page and "Timesheet hours" in page
    assert '<td class="num">4</td>' in page


def test_a_member_without_the_dataset_grant_does_not_see_the_report(client, auth, kit):
    """Reports on datasets a person cannot read are not listed and answer 404."""
    report = kit.report(kind="table")
    kit.world.member_membership.dataset_grants = ["teams"]
    db.session.commit()
    auth.login(kit.world.member.email)
    assert report.name not in client.get(_url(kit.world)).get_data(as_text=True)
    assert client.get(_url(kit.world, f"{report.id}")).status_code == 404
    assert client.get(_url(kit.world, f"{report.id}/preview")).status_code == 404


def test_a_person_of_another_workspace_gets_404(client, auth, kit):
    """The report, its preview and its file request do not exist for outsiders."""
    report = kit.report(kind="table")
    auth.login(kit.world.outsider.email)
    assert client.get(_url(kit.world, f"{report.id}")).status_code == 404
    other = f"/w/{kit.world.other_workspace.id}/reports/{report.id}"
    assert client.get(other).status_code == 404
    assert client.post(other + "/files", data={"format": "pdf"}).status_code == 404
    assert _count(ExportFile) == 0


def test_creating_a_report_saves_version_one_and_shows_it(client, auth, kit):
    """A valid form saves the report and redirects to its page."""
    query = kit.query()
    auth.login(kit.world.member.email)
    response = client.post(_url(kit.world, "new"), data=_form(query))
    assert response.status_code == 302
    report = db.session.execute(select(Report)).scalar_one()
    assert (report.kind, report.version, report.owner_id) == ("coded", 1, kit.world.member.id)
    assert report.columns == [
        {"name": "person_name", "width": 40},
        {"name": "work_date", "width": None},
        {"name": "hours", "width": 15},
    ]
    assert report.code_descriptions == {"Team A": "Day ward", "Team B": "Night ward"}
    assert report.orientation == "landscape" and report.show_filters and not report.show_generated_at
    page = client.get(response.headers["Location"]).get_data(as_text=True)
    assert "Hours by team" in page and "Day ward" in page


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"name": ""}, "Enter a name"),
        ({"columns": ["recorded_at"]}, "is not a column of the report"),
        ({"width-person_name": "90"}, "more than the page"),
        ({"width-hours": "a lot"}, "whole percentage"),
        ({"code_column": ""}, "code column"),
        ({"code_descriptions": "no equals sign here"}, "code = description"),
        ({"kind": "pie"}, "table, coded or summary"),
        ({"page_size": "A0"}, "A4 or Letter"),
        ({"source_query_id": "999999"}, "saved query"),
        ({"kind": "summary", "figures-0-function": "sum", "figures-0-column": "note"}, "is not a"),
    ],
)
def test_bad_input_shows_a_message_and_saves_nothing(client, auth, kit, overrides, message):
    """Each refused form answers 400 with the reason on the page; no report row is written."""
    query = kit.query()
    auth.login(kit.world.member.email)
    response = client.post(_url(kit.world, "new"), data=_form(query, **overrides))
    assert response.status_code == 400
    assert str(escape(message)) in response.get_data(as_text=True)
    assert _count(Report) == 0


def test_a_name_used_by_another_report_is_refused(client, auth, kit):
    """Report names are unique in a workspace, whatever their case."""
    kit.report(kind="table", name="Weekly hours")
    auth.login(kit.world.member.email)
    response = client.post(_url(kit.world, "new"), data=_form(kit.query(name="Other"), name="weekly HOURS"))
    assert response.status_code == 400 and "already has that name" in response.get_data(as_text=True)
    assert _count(Report) == 1


def test_editing_bumps_the_version(client, auth, kit):
    """Every saved edit adds one to the version and stores the new layout."""
    query = kit.query()
    auth.login(kit.world.admin.email)
    client.post(_url(kit.world, "new"), data=_form(query))
    report = db.session.execute(select(Report)).scalar_one()
    response = client.post(
        _url(kit.world, f"{report.id}/edit"), data=_form(query, kind="table", title="Renamed", version="1")
    )
    assert response.status_code == 302
    db.session.refresh(report)
    assert (report.version, report.kind, report.title, report.code_column) == (2, "table", "Renamed", None)


def test_saving_over_someone_elses_change_is_a_conflict_that_keeps_the_typing(client, auth, kit):
    """Two saves from the same opened version: the second would undo the first, so it answers 409
    with the typing kept and a link to the report as it is now, and writes nothing."""
    report = kit.report(kind="table")
    query = kit.default_query
    opened, edit_url = str(report.version), _url(kit.world, f"{report.id}/edit")
    auth.login(kit.world.admin.email)
    assert client.post(edit_url, data=_form(query, name="First", version=opened)).status_code == 302

    second = client.post(edit_url, data=_form(query, name="Second", version=opened))

    page = second.get_data(as_text=True)
    assert second.status_code == 409
    assert (
        "Someone else changed this report after you opened it. Reload it to see their changes, then make yours again."
        in page
    )
    assert f'<a href="{edit_url}">Reload the report</a>' in page
    assert 'value="Second"' in page
    db.session.refresh(report)
    assert (report.name, report.version) == ("First", int(opened) + 1)
    assert db.session.scalar(select(func.count()).where(AuditEvent.action == "report.changed")) == 1


def test_only_the_owner_or_an_administrator_changes_a_report(client, auth, kit):
    """Another member sees the report, but its edit and delete answer 404 to them: they may not change it."""
    report = kit.report(kind="table")
    auth.login(kit.world.member.email)
    assert client.get(_url(kit.world, f"{report.id}")).status_code == 200
    assert client.get(_url(kit.world, f"{report.id}/edit")).status_code == 404
    assert client.post(_url(kit.world, f"{report.id}/edit"), data={"name": "Taken over"}).status_code == 404
    assert client.post(_url(kit.world, f"{report.id}/delete")).status_code == 404
    assert _count(Report) == 1


def test_deleting_a_report_from_its_page_keeps_its_files(client, auth, kit):
    """The confirmation page, then the delete: the report goes, its files stay with report_id NULL."""
    report = kit.report(kind="coded")
    export = kit.request(report, "xlsx")
    auth.login(kit.world.admin.email)
    assert "Delete report" in client.get(_url(kit.world, f"{report.id}/delete")).get_data(as_text=True)
    assert client.post(_url(kit.world, f"{report.id}/delete")).status_code == 302
    db.session.expire_all()
    assert _count(Report) == 0
    kept = db.session.get(ExportFile, export.id)
    assert kept.report_id is None and kept.source_name == report.name


def test_the_request_form_offers_only_pdf_for_a_summary(client, auth, kit):
    """Summary reports offer PDF alone; table reports offer PDF and XLSX."""
    summary = kit.report(kind="summary", summary={"group_column": None, "figures": [{"function": "count"}]})
    table = kit.report(kind="table")
    auth.login(kit.world.member.email)
    summary_page = client.get(_url(kit.world, f"{summary.id}")).get_data(as_text=True)
    table_page = client.get(_url(kit.world, f"{table.id}")).get_data(as_text=True)
    assert 'value="pdf"' in summary_page and 'value="xlsx"' not in summary_page
    assert 'value="pdf"' in table_page and 'value="xlsx"' in table_page


def test_requesting_xlsx_of_a_summary_by_hand_is_refused(client, auth, kit):
    """A posted XLSX request for a summary answers 400 with a message and admits nothing."""
    summary = kit.report(kind="summary", summary={"group_column": None, "figures": [{"function": "count"}]})
    auth.login(kit.world.member.email)
    response = client.post(_url(kit.world, f"{summary.id}/files"), data={"format": "xlsx"})
    assert response.status_code == 400 and "PDF" in response.get_data(as_text=True)
    assert _count(ExportFile) == 0


def test_requesting_a_file_queues_it_and_opens_its_page(client, auth, kit):
    """The request admits a queued report file for the person and redirects to the file's page."""
    report = kit.report(kind="coded")
    auth.login(kit.world.member.email)
    response = client.post(_url(kit.world, f"{report.id}/files"), data={"format": "pdf"})
    export = db.session.execute(select(ExportFile)).scalar_one()
    assert response.status_code == 302
    assert response.headers["Location"].endswith(f"/w/{kit.world.workspace.id}/files/{export.id}")
    assert (export.requester_id, export.report_id, export.status) == (kit.world.member.id, report.id, "queued")


def test_requesting_a_report_file_dispatches_it_before_the_response(client, auth, kit):
    """By the time the request returns, the file's outbox row is claimed and its job is on the queue."""
    report = kit.report(kind="coded")
    auth.login(kit.world.member.email)
    client.post(_url(kit.world, f"{report.id}/files"), data={"format": "pdf"})
    export = db.session.execute(select(ExportFile)).scalar_one()
    assert export.outbox.dispatch_count == 1
    assert work_queue(WorkPriority.INTERACTIVE).get_job_ids() == [export.outbox.job_id]


def test_preview_shows_dates_and_times_as_the_pdf_prints_them(client, auth, kit):
    """The workspace's date format, and times on its zone's clocks with the zone named."""
    db.session.execute(
        update(Workspace)
        .where(Workspace.id == kit.world.workspace.id)
        .values(date_format="%d.%m.%Y", time_zone="America/New_York")
    )
    db.session.commit()
    query = kit.query(columns=["id", "work_date", "recorded_at"])
    columns = [{"name": "id", "width": 10}, {"name": "work_date", "width": 20}, {"name": "recorded_at", "width": 30}]
    report = kit.report(query, kind="table", columns=columns)
    auth.login(kit.world.member.email)
    fragment = client.get(_url(kit.world, f"{report.id}/preview"), headers=HTMX).get_data(as_text=True)
    assert "<td>02.11.2026</td>" in fragment
    assert "<td>02.11.2026 13:00 America/New_York</td>" in fragment
    assert "2026-11-02" not in fragment


def test_table_preview_shows_title_block_headers_and_first_rows_escaped(client, auth, kit):
    """The preview fragment prints the title, the headers and the first 30 rows, markup escaped."""
    kit.add_rows(50)
    report = kit.report(kind="table")
    auth.login(kit.world.member.email)
    fragment = client.get(_url(kit.world, f"{report.id}/preview"), headers=HTMX).get_data(as_text=True)
    assert "Hours worked — Северный корпус" in fragment and "Printed for the ward managers" in fragment
    assert "Filters: none, all rows" in fragment and "Generated" in fragment
    for heading in ("Entry ID", "Employee", "Date", "Hours", "Note"):
        assert heading in fragment
    assert fragment.split("<tbody>", 1)[1].count("<tr>") == 30
    assert str(escape("<b>bold</b> & <i>italic</i>")) in fragment
    assert "<b>bold</b>" not in fragment
    assert "02/11/2026" in fragment


def test_coded_preview_shows_group_headings_and_subtotals(client, auth, kit):
    """Groups with their descriptions and counts; a group shown whole has its subtotal."""
    report = kit.report(kind="coded")
    auth.login(kit.world.member.email)
    fragment = client.get(_url(kit.world, f"{report.id}/preview"), headers=HTMX).get_data(as_text=True)
    assert "Team A — Day ward · " in fragment
    assert "Subtotal Team A · " in fragment


def test_summary_preview_shows_figures_and_bars(client, auth, kit):
    """The summary preview prints the figures and one bar per group."""
    summary = {"group_column": "team_name", "figures": [{"function": "sum", "column": "hours", "label": "Hours"}]}
    report = kit.report(kind="summary", summary=summary)
    auth.login(kit.world.member.email)
    fragment = client.get(_url(kit.world, f"{report.id}/preview"), headers=HTMX).get_data(as_text=True)
    assert "Hours by Team" in fragment
    assert fragment.count('class="bar"') == 2


def test_draft_preview_explains_an_invalid_form(client, auth, kit):
    """Previewing an invalid form shows the reason, not an error page."""
    query = kit.query()
    auth.login(kit.world.member.email)
    response = client.post(_url(kit.world, "preview"), data=_form(query, columns=["nope"]))
    assert response.status_code == 200 and "No preview." in response.get_data(as_text=True)


def test_form_fields_follow_the_chosen_kind(client, auth, kit):
    """The htmx fragment shows code fields for coded, figure fields for summary."""
    query = kit.query()
    auth.login(kit.world.member.email)
    coded = client.post(_url(kit.world, "form"), data=_form(query)).get_data(as_text=True)
    summary = client.post(_url(kit.world, "form"), data=_form(query, kind="summary")).get_data(as_text=True)
    assert '<textarea name="code_descriptions"' in coded and '<select name="figures-0-function"' not in coded
    assert '<select name="figures-0-function"' in summary and "<textarea" not in summary


def test_a_query_used_by_reports_cannot_be_deleted(kit):
    """The guard names every report that presents the query; the foreign key refuses it too."""
    query = kit.query()
    kit.report(query, kind="table", name="Weekly hours")
    kit.report(query, kind="coded", name="Hours by team")
    with pytest.raises(QueryInUse) as caught:
        source_removal.refuse_if_query_in_use(kit.world.workspace.id, query.id)
    assert caught.value.report_names == ["Hours by team", "Weekly hours"]
    with pytest.raises(IntegrityError):
        db.session.execute(delete(SavedQuery).where(SavedQuery.id == query.id))
        db.session.commit()
    db.session.rollback()
    source_removal.refuse_if_query_in_use(kit.world.workspace.id, kit.query(name="Unused").id)


def test_the_query_delete_page_refuses_a_query_that_reports_present(client, auth, kit):
    """Deleting a query a report uses answers 409 naming the report, and both stay."""
    query = kit.query()
    kit.report(query, kind="table", name="Weekly hours")
    auth.login(kit.world.admin.email)
    response = client.post(f"/w/{kit.world.workspace.id}/queries/{query.id}/delete")
    assert response.status_code == 409
    assert "Weekly hours" in response.get_data(as_text=True)
    assert _count(SavedQuery) == 1 and _count(Report) == 1
