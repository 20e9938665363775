"""package delivery attempts are append-only in PostgreSQL (seed 000): a trigger refuses any change
to an ended attempt and any deletion while its delivery exists

Revision ID: 012dde93e6d7
Revises: e4b9d2a7c1f6
Create Date: 2026-12-02 02:30:00

What the application may still do, and why:
- UPDATE: end an open attempt once (`ended_at` set from NULL, with its outcome and failure
  fields; `export_delivery._end_attempt`). Its identity (id, delivery, number, start) never
  changes, and an ended attempt never changes again.
- DELETE: only as part of deleting its delivery (the foreign key's ON DELETE CASCADE, when a
  workspace or a package row is removed: the delivery is gone by then), or in a session that set
  `rhythm.purging_history = 'on'` (the test suite's table cleanup, an operator's purge).
  TRUNCATE fires no row trigger; it needs the table owner's rights.

PostgreSQL only: SQLite (`make run` for development) keeps the rule in the code alone.
"""
from alembic import op

revision = '012dde93e6d7'
down_revision = 'e4b9d2a7c1f6'
branch_labels = None
depends_on = None

FUNCTION = 'data_export_delivery_attempts_append_only'

CREATE_FUNCTION = f"""
CREATE FUNCTION {FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF OLD.ended_at IS NULL AND NEW.ended_at IS NOT NULL
           AND NEW.id = OLD.id AND NEW.delivery_id = OLD.delivery_id
           AND NEW.number = OLD.number AND NEW.started_at = OLD.started_at THEN
            RETURN NEW;
        END IF;
        RAISE EXCEPTION 'attempt % of package delivery % is history: it cannot be changed',
            OLD.number, OLD.delivery_id USING ERRCODE = 'restrict_violation';
    END IF;
    IF current_setting('rhythm.purging_history', true) = 'on'
       OR NOT EXISTS (SELECT 1 FROM data_export_deliveries WHERE id = OLD.delivery_id) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'attempt % of package delivery % is history: it cannot be deleted',
        OLD.number, OLD.delivery_id USING ERRCODE = 'restrict_violation';
END
$$
"""

CREATE_TRIGGER = f"""
CREATE TRIGGER {FUNCTION} BEFORE UPDATE OR DELETE ON data_export_delivery_attempts
FOR EACH ROW EXECUTE FUNCTION {FUNCTION}()
"""


def upgrade():
    if op.get_bind().dialect.name != 'postgresql':
        return
    op.execute(CREATE_FUNCTION)
    op.execute(CREATE_TRIGGER)


def downgrade():
    if op.get_bind().dialect.name != 'postgresql':
        return
    op.execute(f'DROP TRIGGER IF EXISTS {FUNCTION} ON data_export_delivery_attempts')
    op.execute(f'DROP FUNCTION IF EXISTS {FUNCTION}()')
