"""The coverage registry page: every declared dataset beside what the registry holds."""

from __future__ import annotations

from app.domain.workspace_export.coverage import DECLARATIONS
from app.services.workspace_export.coverage import reconcile_coverage


def test_before_a_reconcile_every_dataset_is_not_recorded_yet(client, auth, staff):
    auth.login(staff.email)
    page = client.get("/staff/coverage").text
    assert "none yet (run flask coverage reconcile)" in page
    assert page.count("not recorded yet") == len(DECLARATIONS)


def test_after_a_reconcile_every_dataset_is_in_step_at_version_1(client, auth, staff):
    reconcile_coverage()
    auth.login(staff.email)
    page = client.get("/staff/coverage").text
    assert "Registry version: <strong>1</strong>" in page
    assert page.count("in step") == len(DECLARATIONS)
    for declaration in DECLARATIONS:
        assert f"<td>{declaration.dataset}</td>" in page
        assert declaration.content_hash[:16] in page
    assert "audit_events" in page  # the excluded tables, with their reasons
