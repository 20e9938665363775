"""The page an export notice links a notification person who is not an administrator to opens
only for the person the notice was sent to, in its workspace."""

from __future__ import annotations

from sqlalchemy import select

from app.extensions import db
from app.models.export_notice import ExportNotice, NoticeKind
from app.services.workspace_export import export_notices
from tests import factories


def _member_notice(world) -> ExportNotice:
    snapshot = factories.settings_snapshot(notify_person_ids=[world.member.id])
    execution = factories.make_execution(world.workspace, settings_snapshot=snapshot)
    package = factories.make_package(execution)
    export_notices.notify(NoticeKind.PACKAGE_READY, "package", package.id, world.workspace.id)
    db.session.rollback()
    return db.session.scalars(select(ExportNotice).where(ExportNotice.person_id == world.member.id)).one()


def test_the_summary_opens_for_the_person_it_was_sent_to_and_nobody_else(client, auth, world):
    notice = _member_notice(world)
    url = f"/w/{world.workspace.id}/export/notices/{notice.id}"

    auth.login(world.member.email)
    assert client.get(url).status_code == 200
    auth.logout()
    auth.login(world.admin.email)
    assert client.get(url).status_code == 404
