"""Admission, the cadence and the retention sweep on SQLite, the embedded default of `make run`."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.extensions import db
from app.models.export_execution import ExportExecution
from app.models.export_package import ExportPackage
from app.models.types import utcnow
from app.services.workspace_export.execution_admission import AdmissionRefused, admit
from app.services.workspace_export.export_cadence import admit_due_cadences
from app.services.workspace_export.package_retention import sweep_expired_packages
from tests import factories


def test_admission_cadence_and_sweep_work_on_sqlite(sqlite_app, test_environment):
    application = sqlite_app()
    with application.app_context():
        db.create_all()
        workspace = factories.make_workspace()
        admin = factories.make_member(workspace, role="admin").person
        due = utcnow() - timedelta(minutes=1)
        factories.make_export_settings(workspace, cadence="daily", cadence_time=f"{due:%H:%M}", next_cadence_at=due)

        assert admit_due_cadences(dispatch=False) == 1
        [cadence] = db.session.query(ExportExecution).all()
        assert cadence.trigger == "cadence" and cadence.cadence_key.startswith("daily:")
        with pytest.raises(AdmissionRefused) as refusal:
            admit(workspace.id, admin, "manual")
        assert refusal.value.running_execution_id == cadence.id

        package = factories.make_package(cadence, expires_at=utcnow() - timedelta(seconds=1))
        assert sweep_expired_packages() == 2  # expired, then its (absent) bytes recorded removed
        db.session.expire_all()
        assert db.session.get(ExportPackage, package.id).status == "expired"
        db.session.remove()
