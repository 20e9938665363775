"""The staff console's cross-workspace lists: every kind, the filters, and keyset pages (list_pages)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from sqlalchemy import update

from app.extensions import db
from app.models import ExportFile
from app.models.types import utcnow
from app.services.staff.staff_lists import LISTS, PAGE_SIZE
from tests import factories


def ids_on(page_html: str, prefix: str) -> list[int]:
    return [int(found) for found in re.findall(rf'href="/staff/{prefix}/(\d+)"', page_html)]


def next_page_url(page_html: str) -> str:
    """The pager's "Next page" link (templates/_lists.html)."""
    return re.search(r'rel="next" href="([^"]+)"', page_html).group(1).replace("&amp;", "&")


def make_files(world, count: int, **overrides) -> list[ExportFile]:
    query = factories.make_query(world.workspace, world.admin)
    return [factories.make_export(query, world.admin, **overrides) for _ in range(count)]


@pytest.mark.parametrize("kind", sorted(LISTS))
def test_every_list_shows_records_of_every_workspace(client, auth, world, staff, kind):
    query = factories.make_query(world.workspace, world.admin)
    export = factories.make_export(query, world.admin)
    schedule = factories.make_schedule(query, world.admin)
    factories.make_run(schedule, export)
    execution = factories.make_execution(world.other_workspace)
    package = factories.make_package(execution)
    factories.make_package_delivery(package, factories.make_destination(world.other_workspace))
    auth.login(staff.email)

    response = client.get(f"/staff/{kind}")

    assert response.status_code == 200
    page = response.get_data(as_text=True)
    workspace = world.other_workspace if kind in ("executions", "packages", "deliveries") else world.workspace
    assert workspace.name in page


def test_files_are_filtered_by_status_workspace_code_and_dates(client, auth, world, staff):
    failed = make_files(world, 2, status="failed", failure_code="storage_error")
    make_files(world, 2)
    old = make_files(world, 1, status="failed", failure_code="timeout")[0]
    db.session.execute(
        update(ExportFile).where(ExportFile.id == old.id).values(requested_at=utcnow() - timedelta(days=10))
    )
    db.session.commit()
    auth.login(staff.email)

    page = client.get("/staff/files", query_string={"status": "failed", "workspace": world.workspace.id}).text
    assert sorted(ids_on(page, "files")) == sorted([f.id for f in failed] + [old.id])
    page = client.get("/staff/files", query_string={"code": "storage_error"}).text
    assert sorted(ids_on(page, "files")) == sorted(f.id for f in failed)
    since = (utcnow() - timedelta(days=2)).date().isoformat()
    page = client.get("/staff/files", query_string={"status": "failed", "since": since}).text
    assert old.id not in ids_on(page, "files")
    until = (utcnow() - timedelta(days=5)).date().isoformat()
    assert ids_on(client.get("/staff/files", query_string={"until": until}).text, "files") == [old.id]


def test_pages_follow_each_other_without_gaps_or_repeats_while_rows_arrive(client, auth, world, staff):
    files = make_files(world, PAGE_SIZE + 7)
    auth.login(staff.email)
    first = client.get("/staff/files").text
    assert ids_on(first, "files") == sorted((f.id for f in files), reverse=True)[:PAGE_SIZE]
    make_files(world, 3)  # newer rows do not shift the next page
    second = client.get(next_page_url(first)).text
    assert ids_on(second, "files") == sorted((f.id for f in files), reverse=True)[PAGE_SIZE:]
    assert 'rel="next"' not in second


@pytest.mark.parametrize("cursor", ["garbage", "MjAyNi0xMi0wMVQwMDowMDowMHw=", "=" * 40, "x" * 500])
def test_a_forged_cursor_shows_the_first_page_and_says_so(client, auth, world, staff, cursor):
    files = make_files(world, 3)
    auth.login(staff.email)
    response = client.get("/staff/files", query_string={"after": cursor})
    assert response.status_code == 200
    assert ids_on(response.text, "files") == sorted((f.id for f in files), reverse=True)
    assert "That page link is not valid" in response.text


def test_a_cursor_of_another_staff_list_is_refused(client, auth, world, staff):
    make_files(world, PAGE_SIZE + 1)
    query = factories.make_query(world.workspace, world.admin)
    schedule = factories.make_schedule(query, world.admin)
    for _ in range(PAGE_SIZE + 1):
        factories.make_run(schedule, factories.make_export(query, world.admin))
    auth.login(staff.email)
    runs_cursor = re.search(r"after=([^&\"]+)", next_page_url(client.get("/staff/runs").text)).group(1)

    page = client.get("/staff/files", query_string={"after": runs_cursor}).text

    assert "That page link is not valid" in page
    assert len(ids_on(page, "files")) == PAGE_SIZE


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"status": "exploded"}, "Status: that choice does not exist"),
        ({"workspace": "1 OR 1=1"}, "is not an id"),
        ({"workspace": "99999999999"}, "is not an id"),
        ({"since": "yesterday"}, "is not a date"),
        ({"until": "2026-02-30"}, "is not a date"),
    ],
)
def test_filters_that_cannot_be_read_are_named_and_dropped(client, auth, world, staff, arguments, message):
    make_files(world, 1)
    auth.login(staff.email)
    response = client.get("/staff/files", query_string=arguments)
    assert response.status_code == 200
    assert message in response.text


def test_hostile_values_show_as_text(client, auth, world, staff):
    query = factories.make_query(world.workspace, world.admin)
    for value in factories.hostile_values():
        factories.make_export(query, world.admin, source_name=value[:200])
    auth.login(staff.email)
    page = client.get("/staff/files").text
    assert "<script>alert" not in page


def test_the_attention_page_counts_what_failed_and_links_to_it(client, auth, world, staff):
    make_files(world, 2, status="failed", failure_code="internal")
    auth.login(staff.email)
    page = client.get("/staff/").text
    row = re.search(
        r'<a href="(/staff/files\?[^"]+)">Files failed in the last day</a></td>\s*<td class="num">(\d+)', page
    )
    assert row.group(2) == "2"
    assert len(ids_on(client.get(row.group(1).replace("&amp;", "&")).text, "files")) == 2


def test_staff_without_a_workspace_land_on_the_staff_console(client, auth, staff):
    auth.login(staff.email)
    response = client.get("/")
    assert response.status_code == 302
    assert response.headers["Location"].endswith("/staff/")


def test_a_run_s_skipped_recipient_shows_why_in_words(client, auth, world, staff):
    query = factories.make_query(world.workspace, world.admin)
    run = factories.make_run(factories.make_schedule(query, world.admin), factories.make_export(query, world.admin))
    factories.make_delivery(
        run, world.member, status="skipped", skip_reason="recipient_unsubscribed", submission_id=None
    )
    auth.login(staff.email)

    page = client.get(f"/staff/runs/{run.id}").text

    assert "Not sent: this person unsubscribed from the schedule." in page
    assert "recipient_unsubscribed" not in page


def test_record_pages_link_the_ids_of_the_records_they_refer_to(client, auth, world, staff):
    """A run links its file and workspace; a package its execution; a delivery its package, from the list too."""
    query = factories.make_query(world.workspace, world.admin)
    export = factories.make_export(query, world.admin)
    run = factories.make_run(factories.make_schedule(query, world.admin), export)
    execution = factories.make_execution(world.workspace)
    package = factories.make_package(execution)
    delivery = factories.make_package_delivery(package, factories.make_destination(world.workspace))
    auth.login(staff.email)

    run_page = client.get(f"/staff/runs/{run.id}").get_data(as_text=True)
    package_page = client.get(f"/staff/packages/{package.id}").get_data(as_text=True)
    file_page = client.get(f"/staff/files/{export.id}").get_data(as_text=True)
    delivery_page = client.get(f"/staff/deliveries/{delivery.id}").get_data(as_text=True)
    deliveries = client.get("/staff/deliveries").get_data(as_text=True)

    assert f'<a href="/staff/files/{export.id}">{export.id}</a>' in run_page
    assert f'<a href="/staff/workspaces/{world.workspace.id}">{world.workspace.id}</a>' in run_page
    assert f'<a href="/staff/executions/{execution.id}">{execution.id}</a>' in package_page
    assert f'<a href="/staff/runs/{run.id}">' not in file_page  # a file names its schedule, not its run
    assert f'<a href="/staff/files/{export.id}">{export.id}</a>' in file_page  # its dispatch row's export_id
    assert f'<a href="/staff/packages/{package.id}">{package.id}</a>' in delivery_page
    assert f'<a href="/staff/workspaces/{world.workspace.id}">{world.workspace.name}</a>' in delivery_page
    assert f'<a href="/staff/packages/{package.id}">package #{package.id}</a>' in deliveries
