"""The execution page read at a glance (issue 18, item 11): a settled execution names no current
phase, a cancelled one uses none of the allowance, the event log reads to the second, and a
running one shows its pace and the time left."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from sqlalchemy import update

from app.domain.workspace_export import export_execution
from app.extensions import db
from app.models.export_execution import ExportExecution, ExportJobEvent
from app.models.types import utcnow
from tests import factories
from tests.fixtures.routes import HTMX
from tests.integration.packages.failure_codes import FAILED_BY_THE_SETTINGS, FAILED_ON_OUR_SIDE


def _page(client, export_world, execution: ExportExecution, live: bool = False) -> str:
    tail = "/live" if live else ""
    url = f"/w/{export_world.workspace.id}/export/executions/{execution.id}{tail}"
    return client.get(url, headers=HTMX if live else None).get_data(as_text=True)


@pytest.fixture
def admin_client(client, auth, export_world):
    auth.login(export_world.admin.email)
    return client


def test_a_succeeded_execution_names_no_current_phase(admin_client, export_world):
    """Its last phase was notifying; finished, it reads as succeeded, not as notifying."""
    execution = factories.make_execution(
        export_world.workspace, export_world.admin, status="succeeded", phase="notifying"
    )

    page = _page(admin_client, export_world, execution)

    assert 'aria-current="step"' not in page
    assert "phase <strong>" not in page
    assert '<span class="status status-succeeded">succeeded</span>' in page


def test_a_failed_execution_says_in_which_phase_it_stopped(admin_client, export_world):
    execution = factories.make_execution(
        export_world.workspace, export_world.admin, status="failed", phase="uploading", failure_code="storage_error"
    )

    page = _page(admin_client, export_world, execution)

    assert "<dt>Stopped in</dt><dd>the uploading phase</dd>" in page
    assert 'aria-current="step"' not in page


def test_a_cancelled_execution_is_not_counted_as_one_of_the_allowance(admin_client, export_world):
    execution = factories.make_execution(
        export_world.workspace, export_world.admin, status="cancelled", allowance_used=2, allowance_limit=10
    )

    page = _page(admin_client, export_world, execution)

    assert "export 2 of 10" not in page
    assert "<dt>Allowance</dt><dd>not counted: it was cancelled before it started</dd>" in page


def test_a_counted_execution_says_which_of_the_allowance_it_is(admin_client, export_world):
    execution = factories.make_execution(
        export_world.workspace, export_world.admin, allowance_used=2, allowance_limit=10
    )

    assert "export 2 of 10 in its 30 days" in _page(admin_client, export_world, execution)


def _failed_page(admin_client, export_world, code: str) -> str:
    """The page of an execution that failed with `code`, export 2 of the allowance of 10."""
    execution = factories.make_execution(
        export_world.workspace,
        export_world.admin,
        status="failed",
        failure_code=code,
        allowance_used=2,
        allowance_limit=10,
    )
    return _page(admin_client, export_world, execution)


@pytest.mark.parametrize("code", FAILED_ON_OUR_SIDE)
def test_an_execution_that_failed_on_our_side_says_it_uses_none_of_the_allowance(admin_client, export_world, code):
    page = _failed_page(admin_client, export_world, code)

    assert "<dt>Allowance</dt><dd>not counted: it failed on our side</dd>" in page
    assert "The failure was ours: it does not count against the export allowance" in page


@pytest.mark.parametrize("code", FAILED_BY_THE_SETTINGS)
def test_an_execution_its_settings_failed_says_it_counts_against_the_allowance(admin_client, export_world, code):
    page = _failed_page(admin_client, export_world, code)

    assert "export 2 of 10 in its 30 days" in page
    assert "It counts against the export allowance" in page
    assert "does not count" not in page


def test_the_event_log_shows_each_event_to_the_second(admin_client, export_world):
    execution = factories.make_execution(export_world.workspace, export_world.admin)
    at = utcnow().replace(hour=9, minute=14, second=37, microsecond=0)
    db.session.add(ExportJobEvent(execution_id=execution.id, kind="admitted", message="Admitted.", created_at=at))
    db.session.commit()

    page = _page(admin_client, export_world, execution, live=True)

    assert f"{at:%Y-%m-%d} 09:14:37 UTC · " in page


def test_a_running_execution_shows_rows_per_second_and_the_time_left(admin_client, export_world):
    """1,000 of 3,000 rows in 100 seconds: 10 rows a second, about 200 seconds to go."""
    execution = factories.make_execution(export_world.workspace, export_world.admin)
    attempt = export_execution.start_attempt(execution.id, "worker-1", utcnow() + timedelta(minutes=5))
    export_execution.record_progress(execution.id, attempt, rows_expected=3000, rows_written=1000)
    db.session.execute(
        update(ExportExecution)
        .where(ExportExecution.id == execution.id)
        .values(started_at=utcnow() - timedelta(seconds=100))
    )
    db.session.commit()

    page = _page(admin_client, export_world, execution, live=True)

    assert re.search(r"1,000 of 3,000 rows written \(33%\) · 10 rows per second · about 3 min \d+ s left", page)


def test_the_overview_gives_a_phase_only_to_a_running_or_failed_export(admin_client, export_world):
    factories.make_execution(export_world.workspace, export_world.admin, status="succeeded", phase="notifying")
    factories.make_execution(
        export_world.workspace, export_world.admin, status="failed", phase="uploading", failure_code="storage_error"
    )

    page = admin_client.get(f"/w/{export_world.workspace.id}/export/").get_data(as_text=True)

    assert "notifying" not in page
    assert "<td>stopped in uploading</td>" in page
