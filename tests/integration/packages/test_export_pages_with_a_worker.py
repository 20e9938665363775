"""Export now on the page, through a real rq worker, to the package page: the live part settles,
the volumes download with the checksums the page shows, and early deletion removes them."""

from __future__ import annotations

import hashlib
import re

from sqlalchemy import select

from app.extensions import db
from app.models.export_execution import ExportExecution
from app.models.export_package import ExportPackage, ExportVolume
from tests.fixtures.routes import HTMX
from tests.fixtures.workers import wait_for


def _settled(execution_id: int) -> ExportExecution | None:
    execution = db.session.get(ExportExecution, execution_id, populate_existing=True)
    return execution if execution.status in ("succeeded", "failed") else None


def test_export_now_runs_on_a_worker_and_its_package_downloads_and_deletes(
    client, auth, export_world, isolated_storage, rq_worker
):
    auth.login(export_world.admin.email)
    base = f"/w/{export_world.workspace.id}/export"

    started = client.post(f"{base}/executions")
    execution_id = int(started.headers["Location"].rsplit("/", 1)[1])
    execution = wait_for(lambda: _settled(execution_id), timeout=120, what="the export to settle")
    assert execution.status == "succeeded", (execution.failure_code, execution.failure_detail)

    live = client.get(f"{base}/executions/{execution_id}/live", headers=HTMX)
    package = db.session.scalars(select(ExportPackage).where(ExportPackage.execution_id == execution_id)).one()
    assert live.status_code == 286
    assert f'href="{base}/packages/{package.id}"' in live.get_data(as_text=True)
    assert "Phase notifying started." in live.get_data(as_text=True)

    page = client.get(f"{base}/packages/{package.id}").get_data(as_text=True)
    volumes = db.session.scalars(select(ExportVolume).where(ExportVolume.key.startswith(package.prefix))).all()
    assert volumes and len(volumes) == package.volumes_count
    for volume in volumes:
        assert volume.sha256 in page
        download = client.get(f"{base}/packages/{package.id}/volume?volume={volume.id}")
        assert download.status_code == 200
        assert hashlib.sha256(download.data).hexdigest() == volume.sha256
    manifest = client.get(f"{base}/packages/{package.id}/manifest")
    assert hashlib.sha256(manifest.data).hexdigest() == package.manifest_sha256
    assert re.search(rb'"execution_id":\s*%d' % execution_id, manifest.data)

    deleted = client.post(f"{base}/packages/{package.id}/delete", data={"confirm": "y"})
    assert deleted.status_code == 302
    assert isolated_storage.list_keys(package.prefix) == []
    assert client.get(f"{base}/packages/{package.id}/manifest").status_code == 410
