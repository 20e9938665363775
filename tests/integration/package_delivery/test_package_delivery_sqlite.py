"""Package delivery on SQLite, the embedded default of `make run`: deliveries are made, a
directory destination receives the package, a disabled one is withheld, a refused one fails for
good and its notice is written to the outbox folder; staff supersede it."""

from __future__ import annotations

from sqlalchemy import select

from app.extensions import db
from app.models.export_notice import ExportNotice
from app.models.package_delivery import DeliveryStatus, ExportDelivery
from app.services.workspace_export import package_delivery, package_delivery_actions
from app.storage import get_storage
from tests import factories
from tests.integration.package_delivery.conftest import store_package


def test_package_delivery_works_on_sqlite(sqlite_app, tmp_path, test_environment):
    root = tmp_path / "destinations"
    root.mkdir()
    application = sqlite_app(destinations_root=str(root), storage_url=(tmp_path / "storage").as_uri())
    outbox = application.config["SETTINGS"].mail.outbox
    mailed_before = set(outbox.glob("*.eml")) if outbox.exists() else set()
    with application.app_context():
        db.create_all()
        workspace = factories.make_workspace()
        factories.make_member(workspace, role="admin")
        package = store_package(workspace, get_storage(), {"people-0001.csv.zip": b"people"})
        enabled = factories.make_destination(workspace, path="drop")
        disabled = factories.make_destination(workspace, enabled=False)
        refused = factories.make_destination(workspace, path="../outside")

        package_delivery.deliver_package(package.id)
        package_delivery.deliver_package(package.id)  # a repeated phase changes nothing

        statuses = dict(db.session.execute(select(ExportDelivery.destination_id, ExportDelivery.status)).all())
        assert statuses == {
            enabled.id: DeliveryStatus.DELIVERED,
            disabled.id: DeliveryStatus.WITHHELD,
            refused.id: DeliveryStatus.FAILED,
        }
        assert sorted(p.name for p in root.rglob("*") if p.is_file()) == ["manifest.json", "people-0001.csv.zip"]
        assert db.session.scalar(select(ExportNotice.status)) == "sent"
        assert len(set(outbox.glob("*.eml")) - mailed_before) == 1

        failed_id = db.session.scalar(select(ExportDelivery.id).where(ExportDelivery.destination_id == refused.id))
        staff = factories.make_person(is_staff=True, staff_permissions=["staff.execute"])
        replacement_id = package_delivery_actions.supersede_and_replace(failed_id, staff, "path corrected")
        assert db.session.get(ExportDelivery, replacement_id).replaces_id == failed_id
        db.session.remove()
