"""The coverage registry is enforced (INV-13): no package while the registry and the declarations in
code disagree, /readyz says so, and every manifest names the registry version it was made under."""

from __future__ import annotations

from sqlalchemy import delete, select, update

from app.domain.workspace_export.coverage import DECLARATIONS
from app.extensions import db
from app.models import ExportExecution
from app.models.coverage import CoverageDataset, CoverageVersion
from app.services.workspace_export.coverage import reconcile_coverage
from app.services.workspace_export.package_production import run_execution
from tests import factories
from tests.integration.packages.package_reading import ALL_DATASETS, fill_every_dataset, package_of, read_package


def _execution(workspace) -> ExportExecution:
    return factories.make_execution(workspace, settings_snapshot=factories.settings_snapshot(datasets=ALL_DATASETS))


def _forget_a_recorded_dataset() -> None:
    """As a deploy whose start-up reconcile did not run would leave it: one declaration unrecorded."""
    declaration = DECLARATIONS[0]
    db.session.execute(
        delete(CoverageDataset).where(
            CoverageDataset.dataset == declaration.dataset, CoverageDataset.schema_version == declaration.schema_version
        )
    )
    db.session.commit()


def test_a_package_is_refused_while_a_declared_dataset_is_not_recorded(app_context, isolated_storage):
    execution = _execution(factories.make_workspace())
    _forget_a_recorded_dataset()

    assert run_execution(execution.id) == "coverage_out_of_date"

    settled = db.session.get_one(ExportExecution, execution.id, populate_existing=True)
    assert settled.failure_code == "coverage_out_of_date"
    assert "contact support" in settled.failure_detail and "flask" not in settled.failure_detail
    assert isolated_storage.list_keys("") == []


def test_a_package_is_refused_while_a_recorded_status_differs_from_the_declaration(app_context, isolated_storage):
    execution = _execution(factories.make_workspace())
    db.session.execute(update(CoverageDataset).values(status="retired"))
    db.session.commit()

    assert run_execution(execution.id) == "coverage_out_of_date"

    assert db.session.get_one(ExportExecution, execution.id, populate_existing=True).failure_code == (
        "coverage_out_of_date"
    )


def test_readyz_names_what_disagrees_until_the_registry_is_reconciled(app_context, client):
    reconcile_coverage()
    _forget_a_recorded_dataset()

    response = client.get("/readyz")
    assert response.status_code == 503
    assert (
        f"{DECLARATIONS[0].dataset} v{DECLARATIONS[0].schema_version} is not recorded"
        in (response.json["checks"]["coverage"])
    )

    reconcile_coverage()
    assert client.get("/readyz").json["checks"]["coverage"] == "ok"


def test_the_manifest_names_the_registry_version_the_package_was_made_under(app_context, isolated_storage):
    workspace = factories.make_workspace()
    fill_every_dataset(workspace)
    execution = _execution(workspace)
    current = db.session.scalar(select(CoverageVersion.version).order_by(CoverageVersion.version.desc()).limit(1))

    assert run_execution(execution.id) == "succeeded"

    manifest = read_package(isolated_storage, package_of(execution.id)).manifest
    assert current is not None and manifest["coverage_registry_version"] == current
