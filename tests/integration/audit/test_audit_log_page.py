"""The workspace's audit log page: who did what, when and why; filters and pages; admins only."""

from __future__ import annotations

import re
from datetime import timedelta

from app.extensions import db
from app.models import AuditEvent
from app.models.types import utcnow
from app.services.accounts import audit
from app.services.workspace.audit_log import AUDIT_LIST
from tests import factories


def record(workspace, actor, action="schedule.paused", reason=None, days_ago=0, subject_id=1):
    event = audit.record(
        workspace_id=workspace.id,
        actor_id=actor.id if actor else None,
        action=action,
        subject_type="schedule",
        subject_id=subject_id,
        reason=reason,
    )
    event.created_at = utcnow() - timedelta(days=days_ago)
    db.session.commit()
    return event


def rows(page: str) -> list[str]:
    return re.findall(r"<tr>\s*<td>(.*?)</tr>", page, flags=re.S)


def test_an_administrator_reads_who_did_what_when_and_why(client, auth, world):
    staff = factories.make_person(name="Sam Okafor", is_staff=True, staff_permissions=["staff.execute"])
    record(world.workspace, world.admin, "schedule.ownership_taken")
    record(world.workspace, staff, "export.suspended", reason="Unpaid invoice")
    record(world.workspace, None, "schedule.paused")
    record(world.other_workspace, world.outsider, "schedule.deleted", reason="Not ours")
    auth.login(world.admin.email)

    page = client.get(f"/w/{world.workspace.id}/audit/").text

    assert len(rows(page)) == 3
    assert "Schedule ownership taken" in page and world.admin.name in page
    assert "Workspace export suspended by Rhythm staff" in page and "Unpaid invoice" in page
    assert "Rhythm staff</span>" in page
    assert "the product itself" in page
    assert "Not ours" not in page


def test_a_plain_member_gets_404(client, auth, world):
    auth.login(world.member.email)
    assert client.get(f"/w/{world.workspace.id}/audit/").status_code == 404


def test_events_are_filtered_by_action_person_and_date(client, auth, world):
    record(world.workspace, world.admin, "schedule.paused", reason="mine-paused")
    record(world.workspace, world.member, "schedule.paused", reason="theirs-paused")
    record(world.workspace, world.admin, "schedule.deleted", reason="mine-deleted", days_ago=9)
    auth.login(world.admin.email)
    url = f"/w/{world.workspace.id}/audit/"

    page = client.get(url, query_string={"action": "schedule.paused", "actor": world.admin.id}).text
    assert "mine-paused" in page and "theirs-paused" not in page and "mine-deleted" not in page
    since = (utcnow() - timedelta(days=2)).date().isoformat()
    page = client.get(url, query_string={"since": since}).text
    assert "mine-deleted" not in page and "theirs-paused" in page
    until = (utcnow() - timedelta(days=5)).date().isoformat()
    page = client.get(url, query_string={"until": until}).text
    assert "mine-deleted" in page and "mine-paused" not in page


def test_unreadable_filters_are_named_and_dropped(client, auth, world):
    record(world.workspace, world.admin)
    auth.login(world.admin.email)
    page = client.get(f"/w/{world.workspace.id}/audit/", query_string={"since": "soon", "actor": "x"}).text
    assert "is not a date" in page and "is not an id" in page
    assert len(rows(page)) == 1


def test_pages_of_the_log_follow_each_other(client, auth, world):
    page_size = AUDIT_LIST.page_size
    for number in range(page_size + 5):
        record(world.workspace, world.admin, reason=f"reason-{number:03d}")
    auth.login(world.admin.email)
    first = client.get(f"/w/{world.workspace.id}/audit/").text
    assert len(rows(first)) == page_size
    older = re.search(r'rel="next" href="([^"]+)"', first).group(1).replace("&amp;", "&")
    second = client.get(older).text
    seen = re.findall(r"reason-\d{3}", first + second)
    assert sorted(seen) == sorted(f"reason-{n:03d}" for n in range(page_size + 5))


def test_hostile_reasons_show_as_text(client, auth, world):
    for value in factories.hostile_values():
        record(world.workspace, world.admin, reason=value)
    auth.login(world.admin.email)
    page = client.get(f"/w/{world.workspace.id}/audit/").text
    assert "<script>" not in page
    assert db.session.query(AuditEvent).count() == len(factories.hostile_values())


def test_every_entry_reads_as_a_sentence_with_its_reason_in_words_and_what_changed(client, auth, world):
    audit.record(
        workspace_id=world.workspace.id,
        actor_id=world.admin.id,
        action="export_settings.changed",
        subject_type="export_settings",
        subject_id=1,
        details={"changed": {"retention_days": {"from": 30, "to": 7}}},
    )
    record(world.workspace, world.admin, "export_destination.added")
    record(world.workspace, world.admin, "export_delivery.retried")
    record(world.workspace, world.admin, "schedule.paused", reason="user")
    auth.login(world.admin.email)

    page = client.get(f"/w/{world.workspace.id}/audit/").text
    shown = "".join(rows(page))

    assert "Workspace export settings changed" in shown and "retention days: 30 → 7" in shown
    assert "Export destination added" in shown and "Failed package delivery tried again" in shown
    assert "Paused by hand." in shown
    for code in ("export_settings.changed", "export_destination.added", "export_delivery.retried", ">user<"):
        assert code not in shown
