"""the parquet package format: settings may choose it and packages carry it

Revision ID: 5a7c3e9d1f20
Revises: c2709f451408
Create Date: 2026-12-02 07:00:00

The format of the export settings and of packages is a CHECK constraint on each table; both are
dropped and made again with the new format (in a batch, which SQLite needs to change a
constraint). Going back, settings that chose Parquet return to CSV and Parquet packages are
removed from the list (their files stay in storage until an operator removes them: a downgrade
cannot reach the object store).
"""
from alembic import op

revision = '5a7c3e9d1f20'
down_revision = 'c2709f451408'
branch_labels = None
depends_on = None

FORMATS_BEFORE = ('csv', 'jsonl')
FORMATS_AFTER = (*FORMATS_BEFORE, 'parquet')
TABLES = ('data_export_definitions', 'data_export_artifacts')


def _formats(formats: tuple[str, ...]) -> str:
    return 'format IN (' + ', '.join(f"'{name}'" for name in formats) + ')'


def _replace_checks(formats: tuple[str, ...]) -> None:
    for table in TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_constraint(op.f(f'ck_{table}_format'), type_='check')
            batch_op.create_check_constraint(op.f(f'ck_{table}_format'), _formats(formats))


def upgrade():
    _replace_checks(FORMATS_AFTER)


def downgrade():
    op.execute("UPDATE data_export_definitions SET format = 'csv' WHERE format = 'parquet'")
    op.execute("DELETE FROM data_export_artifacts WHERE format = 'parquet'")
    _replace_checks(FORMATS_BEFORE)
