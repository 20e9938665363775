"""The workspace overview: what needs attention, recent files with their outcome, reports and queries."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from app.models.export_file import FailureCode
from app.models.types import utcnow
from tests import factories


@pytest.fixture
def signed_in(client, auth, world):
    auth.login(world.member.email)
    return client


def _overview(client, world) -> str:
    response = client.get(f"/w/{world.workspace.id}/")
    assert response.status_code == 200
    return response.get_data(as_text=True)


def _section(page: str, section_id: str) -> str:
    match = re.search(rf'id="{section_id}".*?</(?:ul|section)>', page, re.S)
    assert match, f"no section {section_id}"
    return match.group(0)


def _succeeded(query, person, name, expires_in):
    now = utcnow()
    return factories.make_export(
        query,
        person,
        source_name=name,
        status="succeeded",
        completed_at=now,
        size_bytes=10,
        row_count=1,
        expires_at=now + expires_in,
    )


def test_failed_files_need_attention_with_a_link_but_cancelled_ones_do_not(signed_in, world):
    query = factories.make_query(world.workspace, world.member)
    failed = factories.make_export(
        query, world.member, source_name="Broken export", status="failed", failure_code=FailureCode.TIMEOUT
    )
    factories.make_export(
        query, world.member, source_name="Stopped export", status="failed", failure_code=FailureCode.CANCELLED
    )

    failed_list = _section(_overview(signed_in, world), "failed-files")

    assert f'href="/w/{world.workspace.id}/files/{failed.id}"' in failed_list
    assert "Broken export" in failed_list and "Stopped export" not in failed_list


def test_files_expiring_within_three_days_need_attention_soonest_first(signed_in, world):
    query = factories.make_query(world.workspace, world.member)
    _succeeded(query, world.member, "Tomorrow's", timedelta(days=1))
    _succeeded(query, world.member, "In two hours", timedelta(hours=2))
    _succeeded(query, world.member, "Next week", timedelta(days=7))
    _succeeded(query, world.member, "Already gone", -timedelta(hours=1))

    expiring = _section(_overview(signed_in, world), "expiring-files")

    assert re.findall(r">([^<]+)</a>\s*<span class=\"hint\">CSV", expiring) == ["In two hours", "Tomorrow&#39;s"]
    assert "Download" in expiring


def test_nothing_needs_attention_says_so(signed_in, world):
    assert "Nothing needs your attention" in _overview(signed_in, world)


def test_recent_files_show_their_outcome_and_only_the_persons_own(signed_in, world):
    query = factories.make_query(world.workspace, world.member)
    _succeeded(query, world.member, "Ready one", timedelta(days=10))
    factories.make_export(
        query, world.member, source_name="Stopped one", status="failed", failure_code=FailureCode.CANCELLED
    )
    factories.make_export(query, world.admin, source_name="The admin's file")

    recent = _section(_overview(signed_in, world), "recent-files")

    assert "Ready one" in recent and "succeeded" in recent
    assert "Stopped one" in recent and "cancelled" in recent
    assert "The admin&#39;s file" not in recent and "The admin's file" not in recent


def test_reports_are_listed_with_links(signed_in, world):
    query = factories.make_query(world.workspace, world.member)
    report = factories.make_report(query, world.member, name="Monthly hours")

    reports = _section(_overview(signed_in, world), "overview-reports")

    assert f'href="/w/{world.workspace.id}/reports/{report.id}"' in reports and "Monthly hours" in reports


def test_empty_workspace_says_what_to_do_next(signed_in, world):
    page = _overview(signed_in, world)

    assert "You have not requested a file here yet" in page
    assert "a report needs a saved query: build a query first" in page
    assert f'href="/w/{world.workspace.id}/queries/new"' in page
