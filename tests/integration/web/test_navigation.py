"""The header and breadcrumbs every workspace page shares: where am I, and where can I go."""

from __future__ import annotations

import re

import pytest

from app.extensions import db
from tests import factories


def _nav_links(html: str) -> list[tuple[str, bool]]:
    """The workspace navigation's entries: (label, marked current)."""
    nav = re.search(r'<nav class="main-nav" aria-label="Workspace">(.*?)</nav>', html, re.S)
    assert nav, "the page has no workspace navigation"
    return [
        (label, bool(current))
        for current, label in re.findall(r'<a href="[^"]*"( aria-current="page")?>([^<]+)</a>', nav.group(1))
    ]


def _breadcrumbs(html: str) -> list[str]:
    nav = re.search(r'<nav class="breadcrumbs" aria-label="Breadcrumb">(.*?)</nav>', html, re.S)
    assert nav, "the page has no breadcrumbs"
    return [re.sub(r"<[^>]+>", "", item).strip() for item in re.findall(r"<li[^>]*>(.*?)</li>", nav.group(1), re.S)]


def test_the_header_names_the_workspace(client, auth, world):
    auth.login(world.member.email)

    html = client.get(f"/w/{world.workspace.id}/queries/").get_data(as_text=True)

    assert '<span class="workspace-name">Northwind Care</span>' in html


def test_the_section_of_a_detail_page_is_marked_current(client, auth, world):
    """On a query's page the Queries entry, and only it, carries aria-current."""
    query = factories.make_query(world.workspace, world.member)
    auth.login(world.member.email)

    html = client.get(f"/w/{world.workspace.id}/queries/{query.id}").get_data(as_text=True)

    assert [label for label, current in _nav_links(html) if current] == ["Queries"]


@pytest.mark.parametrize(
    ("path", "section"),
    [
        ("", "Overview"),
        ("reports/", "Reports"),
        ("schedules/", "Schedules"),
        ("files/", "Files"),
        ("templates/", "Templates"),
    ],
)
def test_each_section_marks_its_own_entry(client, auth, world, path, section):
    auth.login(world.admin.email)

    html = client.get(f"/w/{world.workspace.id}/{path}").get_data(as_text=True)

    assert [label for label, current in _nav_links(html) if current] == [section]


def test_a_detail_page_has_breadcrumbs_ending_with_itself(client, auth, world):
    query = factories.make_query(world.workspace, world.member, name="Long days")
    report = factories.make_report(query, world.member, name="Weekly hours")
    auth.login(world.member.email)

    html = client.get(f"/w/{world.workspace.id}/reports/{report.id}/edit").get_data(as_text=True)

    assert _breadcrumbs(html) == ["Reports", "Weekly hours", "Edit"]
    assert '<li aria-current="page">Edit</li>' in html


def test_a_list_page_has_no_breadcrumbs(client, auth, world):
    auth.login(world.member.email)

    html = client.get(f"/w/{world.workspace.id}/queries/").get_data(as_text=True)

    assert 'class="breadcrumbs"' not in html


def test_a_member_of_one_workspace_gets_no_switcher(client, auth, world):
    auth.login(world.member.email)

    html = client.get(f"/w/{world.workspace.id}/").get_data(as_text=True)

    assert 'class="switcher"' not in html


def test_a_member_of_several_workspaces_can_switch_to_each_other_live_one(client, auth, world):
    factories.make_member(world.other_workspace, person=world.member)
    closed = factories.make_workspace(name="Initech Closed", status="closed")
    factories.make_member(closed, person=world.member)
    auth.login(world.member.email)

    html = client.get(f"/w/{world.workspace.id}/").get_data(as_text=True)

    menu = re.search(r'<ul class="switcher-menu"[^>]*>(.*?)</ul>', html, re.S).group(1)
    assert f'href="/w/{world.other_workspace.id}/">Globex Clinics</a>' in menu
    assert f'href="/w/{world.workspace.id}/" aria-current="page">Northwind Care</a>' in menu
    assert "Initech Closed" not in html


def test_a_hostile_workspace_name_is_shown_as_text(client, auth, world):
    world.workspace.name = '<script>alert("ws")</script>'
    db.session.commit()
    factories.make_member(world.other_workspace, person=world.member)
    auth.login(world.member.email)

    html = client.get(f"/w/{world.workspace.id}/").get_data(as_text=True)

    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&#34;ws&#34;)&lt;/script&gt;" in html


def test_the_file_page_announces_its_status_to_screen_readers(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    export = factories.make_export(query, world.member)
    auth.login(world.member.email)

    html = client.get(f"/w/{world.workspace.id}/files/{export.id}").get_data(as_text=True)

    line = re.search(r'<p class="status-line" id="status-line" role="status" tabindex="-1">(.*?)</p>', html, re.S)
    assert line, "the file's status is not in a live region"
    assert line.group(1) == "The file is queued, waiting for a worker."


ADMINISTRATORS_SECTIONS = (("Workspace export", "export/"), ("Activity", "activity/"), ("Audit log", "audit/"))


@pytest.mark.parametrize(("label", "path"), ADMINISTRATORS_SECTIONS)
def test_the_administrators_sections_are_shown_to_admins_and_marked_on_their_pages(client, auth, world, label, path):
    auth.login(world.admin.email)

    html = client.get(f"/w/{world.workspace.id}/{path}").get_data(as_text=True)

    assert (label, True) in _nav_links(html)


def test_the_administrators_sections_are_hidden_from_members(client, auth, world):
    auth.login(world.member.email)

    html = client.get(f"/w/{world.workspace.id}/").get_data(as_text=True)

    for label, _ in ADMINISTRATORS_SECTIONS:
        assert label not in html


def test_staff_see_the_way_to_their_console_and_members_do_not(client, auth, world):
    staff = factories.make_person(is_staff=True, staff_permissions=["staff.view"])
    auth.login(staff.email)
    assert 'href="/staff/">Staff console</a>' in client.get("/account/password").get_data(as_text=True)
    auth.logout()
    auth.login(world.admin.email)
    assert "Staff console" not in client.get(f"/w/{world.workspace.id}/").get_data(as_text=True)


def test_an_error_page_names_no_workspace(client, auth, world):
    """A 404 inside one's own workspace (someone else's file) shows the plain header, no workspace name."""
    query = factories.make_query(world.workspace, world.admin)
    export = factories.make_export(query, world.admin)
    auth.login(world.member.email)

    response = client.get(f"/w/{world.workspace.id}/files/{export.id}")

    assert response.status_code == 404
    assert "Northwind Care" not in response.get_data(as_text=True)


def test_the_workspace_export_pages_below_the_overview_have_breadcrumbs(client, auth, world):
    """Package list, package, deletion, execution and the settings pages lead back to Workspace export."""
    factories.make_export_settings(world.workspace)
    execution = factories.make_execution(world.workspace, world.admin)
    package = factories.make_package(execution)
    auth.login(world.admin.email)
    base = f"/w/{world.workspace.id}/export"

    crumbs = {
        path: _breadcrumbs(client.get(f"{base}/{path}").get_data(as_text=True))
        for path in (
            "packages/",
            f"packages/{package.id}",
            f"packages/{package.id}/delete",
            f"executions/{execution.id}",
            "settings",
            "destinations",
        )
    }

    assert crumbs == {
        "packages/": ["Workspace export", "Packages"],
        f"packages/{package.id}": ["Workspace export", "Packages", f"Package {package.id}"],
        f"packages/{package.id}/delete": ["Workspace export", "Packages", f"Package {package.id}", "Delete"],
        f"executions/{execution.id}": ["Workspace export", f"Export {execution.id}"],
        "settings": ["Workspace export", "Export settings"],
        "destinations": ["Workspace export", "Destinations"],
    }
