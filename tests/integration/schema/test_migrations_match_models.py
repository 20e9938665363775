"""The migrations and the models describe the same schema: a model change without a migration fails here."""

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from app.extensions import db


def test_migrated_schema_has_no_differences_from_the_models(app_context):
    """Autogenerate against the migrated test database finds nothing to add, drop or alter."""
    with db.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        differences = compare_metadata(context, db.metadata)
    assert differences == []


def test_descriptions_row_is_refused_for_csv_by_the_database(world):
    """INV-03: the database CHECK refuses a CSV file with a descriptions row, whatever the code does."""
    import pytest
    from sqlalchemy.exc import IntegrityError

    from tests import factories

    query = factories.make_query(world.workspace, world.admin)
    with pytest.raises(IntegrityError):
        factories.make_export(query, world.admin, format="csv", include_descriptions=True)
    db.session.rollback()


def test_an_audit_log_file_is_csv_only_by_the_database(world):
    """INV-03 for the audit log's files: the source_shape CHECK refuses one in any other format."""
    import pytest
    from sqlalchemy.exc import IntegrityError

    from app.models import ExportFile

    def audit_file(file_format: str) -> ExportFile:
        return ExportFile(
            workspace_id=world.workspace.id,
            requester_id=world.admin.id,
            kind="audit",
            source_name="Audit log",
            source_version=1,
            request={},
            format=file_format,
            storage_key=f"files/w{world.workspace.id}/audit.{file_format}",
            file_name=f"audit-log.{file_format}",
        )

    db.session.add(audit_file("csv"))
    db.session.commit()
    db.session.add(audit_file("xlsx"))
    with pytest.raises(IntegrityError):
        db.session.commit()
    db.session.rollback()
