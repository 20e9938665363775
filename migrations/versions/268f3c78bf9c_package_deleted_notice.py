"""the package_deleted notice kind: the workspace is told when Rhythm staff delete a package early

Revision ID: 268f3c78bf9c
Revises: 012dde93e6d7
Create Date: 2026-12-02 03:00:00

The notice kinds are a CHECK constraint; it is dropped and made again with the new kind (in a
batch, which SQLite needs to change a constraint).
"""
from alembic import op

revision = '268f3c78bf9c'
down_revision = '012dde93e6d7'
branch_labels = None
depends_on = None

KINDS_BEFORE = ('package_ready', 'execution_failed', 'delivery_failed')
KINDS_AFTER = (*KINDS_BEFORE, 'package_deleted')


def _kinds(kinds: tuple[str, ...]) -> str:
    return 'kind IN (' + ', '.join(f"'{kind}'" for kind in kinds) + ')'


def _replace_check(kinds: tuple[str, ...]) -> None:
    with op.batch_alter_table('data_export_notices', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('ck_data_export_notices_kind'), type_='check')
        batch_op.create_check_constraint(op.f('ck_data_export_notices_kind'), _kinds(kinds))


def upgrade():
    _replace_check(KINDS_AFTER)


def downgrade():
    op.execute("DELETE FROM data_export_notices WHERE kind = 'package_deleted'")
    _replace_check(KINDS_BEFORE)
