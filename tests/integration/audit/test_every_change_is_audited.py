"""Every request that changes what a workspace sends or keeps writes an audit event with it.

The routes come from the app's url_map (every POST, PUT and DELETE), so a route added later is
checked too. Each is sent the valid form the form fuzz uses (tests/integration/web/test_form_fuzz.py),
signed in as the person it is for; when the request changed any row, an audit event must have
been written with it. NOT_AUDITED lists the routes that may change rows without one, and why.
"""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import AuditEvent
from tests import factories
from tests.integration.web.test_form_fuzz import (  # noqa: F401 (member_with_data is a fixture)
    ROUTES,
    _path,
    _row_snapshot,
    _sign_in_for,
    _valid_form,
    _valid_ids,
    member_with_data,
)

MUTATING = [route for route in ROUTES if route.method in {"POST", "PUT", "DELETE", "PATCH"}]

# Routes that change rows which are not the workspace's: what the rows are, and why no event.
NOT_AUDITED = {
    # The person's own sign-in state (failed attempts, lockout, session token), not the workspace's.
    "auth.login": "counts sign-in attempts and issues the person's session token",
    "auth.logout": "replaces the person's session token",
    "auth.password": "changes the person's own password hash and session token",
    # Work a person asks for, recorded in its own table (who asked, when, with what), not a change
    # to the workspace's definitions: the file's row is its own record.
    "queries.request_file": "queues a file; the file's row records who asked and when",
    "reports.request_file": "queues a file; the file's row records who asked and when",
    "audit.request_file": "queues the audit log's file; the file's row records who asked and when",
    "files.cancel": "stops the person's own file; the file's row records the cancellation",
    # Written by a recipient of a message, who is not a person of the workspace; the unsubscribe
    # row, with its time and address, is the record.
    "public_links.unsubscribe": "records a recipient's unsubscribe in schedule_unsubscribes",
}

# The audit trail itself is what is counted, not watched.
_UNWATCHED = frozenset({"audit_events"})


def _snapshot() -> dict[str, str]:
    return _row_snapshot(_UNWATCHED)


def _audit_count() -> int:
    count = db.session.scalar(select(func.count()).select_from(AuditEvent)) or 0
    db.session.rollback()
    return count


def test_the_exclusions_name_routes_that_exist():
    endpoints = {route.endpoint for route in MUTATING}
    assert set(NOT_AUDITED) <= endpoints, set(NOT_AUDITED) - endpoints


@pytest.mark.parametrize(
    "route", [pytest.param(r, id=f"{r.method} {r.rule}") for r in MUTATING if r.endpoint not in NOT_AUDITED]
)
def test_a_request_that_changes_the_workspace_writes_an_audit_event(client, auth, member_with_data, route):  # noqa: F811
    world, query, report, _, _ = member_with_data
    _sign_in_for(route, auth, world)
    ids = _valid_ids(route, member_with_data)
    form = _valid_form(route.endpoint, query, report, factories.make_person().email)
    before, events_before = _snapshot(), _audit_count()

    response = client.open(_path(route, ids), method=route.method, data=form)

    changed = sorted(table for table, digest in _snapshot().items() if before[table] != digest)
    assert response.status_code < 500
    if changed:
        assert _audit_count() > events_before, f"{route.endpoint} changed {changed} and wrote no audit event"
