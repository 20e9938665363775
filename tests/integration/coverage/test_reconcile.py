"""`flask coverage reconcile` on PostgreSQL: new versions recorded, changed content refused, versions advanced."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import func, select

from app.domain.workspace_export.coverage import DECLARATIONS, CoverageStatus
from app.extensions import db
from app.models.coverage import CoverageDataset, CoverageVersion
from app.services.workspace_export.coverage import CoverageConflict, reconcile_coverage, registry_disagreement
from tests.fixtures.workers import table_lock_waiters


def _recorded() -> set[tuple[str, int, str, str]]:
    return {
        (row.dataset, row.schema_version, row.status, row.content_hash)
        for row in db.session.scalars(select(CoverageDataset))
    }


def _registry_versions() -> list[int]:
    return list(db.session.scalars(select(CoverageVersion.version).order_by(CoverageVersion.version)))


def _with(dataset: str, **changes):
    return tuple(replace(d, **changes) if d.dataset == dataset else d for d in DECLARATIONS)


def test_first_reconcile_records_every_declaration_as_registry_version_1(app_context):
    outcome = reconcile_coverage()

    assert _recorded() == {(d.dataset, d.schema_version, d.status.value, d.content_hash) for d in DECLARATIONS}
    assert _registry_versions() == [1]
    assert outcome.registry_version == 1 and outcome.advanced


def test_second_reconcile_without_changes_writes_nothing(app_context):
    reconcile_coverage()
    before = _recorded()

    outcome = reconcile_coverage()

    assert not outcome.advanced and outcome.changes == []
    assert outcome.registry_version == 1
    assert _recorded() == before
    assert _registry_versions() == [1]


def test_new_schema_version_is_inserted_beside_the_old_and_advances_the_registry(app_context):
    reconcile_coverage()
    shifts = next(d for d in DECLARATIONS if d.dataset == "shifts")
    changed_columns = (*shifts.columns, ("overtime_minutes", "integer"))

    outcome = reconcile_coverage(_with("shifts", schema_version=2, columns=changed_columns))

    versions = db.session.execute(
        select(CoverageDataset.schema_version, CoverageDataset.content_hash)
        .where(CoverageDataset.dataset == "shifts")
        .order_by(CoverageDataset.schema_version)
    ).all()
    new_hash = replace(shifts, columns=changed_columns).content_hash
    assert [tuple(v) for v in versions] == [(1, shifts.content_hash), (2, new_hash)]
    assert _registry_versions() == [1, 2]
    assert outcome.inserted == ["shifts v2 recorded (active)"]


def _active_versions(dataset: str) -> list[int]:
    return list(
        db.session.scalars(
            select(CoverageDataset.schema_version)
            .where(CoverageDataset.dataset == dataset, CoverageDataset.status == "active")
            .order_by(CoverageDataset.schema_version)
        )
    )


def test_a_new_schema_version_retires_the_old_one_so_one_stays_active(app_context):
    reconcile_coverage()
    shifts = next(d for d in DECLARATIONS if d.dataset == "shifts")

    outcome = reconcile_coverage(_with("shifts", schema_version=2, columns=(*shifts.columns, ("note", "text"))))

    assert _active_versions("shifts") == [2]
    assert outcome.status_changes == ["shifts v1 active → retired (no longer declared)"]
    assert "shifts v1 active → retired (no longer declared)" in db.session.get(CoverageVersion, 2).summary


def test_a_removed_declaration_is_retired_and_reported(app_context):
    reconcile_coverage()

    outcome = reconcile_coverage(tuple(d for d in DECLARATIONS if d.dataset != "timesheet_entries"))

    status = db.session.scalar(select(CoverageDataset.status).where(CoverageDataset.dataset == "timesheet_entries"))
    assert status == "retired"
    assert outcome.status_changes == ["timesheet_entries v1 active → retired (no longer declared)"]
    assert _registry_versions() == [1, 2]


def test_a_removed_declaration_is_noticed_until_reconciled(app_context):
    reconcile_coverage()
    declarations = tuple(d for d in DECLARATIONS if d.dataset != "timesheet_entries")

    before = registry_disagreement(declarations)
    reconcile_coverage(declarations)

    assert before is not None and "timesheet_entries v1 is recorded active but no longer declared" in before
    assert registry_disagreement(declarations) is None


def test_two_active_versions_of_one_dataset_are_refused_and_nothing_is_written(app_context):
    reconcile_coverage()
    before = _recorded()
    shifts = next(d for d in DECLARATIONS if d.dataset == "shifts")
    second = replace(shifts, schema_version=2, columns=(*shifts.columns, ("note", "text")))

    with pytest.raises(CoverageConflict) as refusal:
        reconcile_coverage((*DECLARATIONS, second))

    message = str(refusal.value)
    assert "'shifts' is declared active at schema versions 1, 2" in message and "Nothing was changed" in message
    assert _recorded() == before
    assert _registry_versions() == [1]
    assert "'shifts' is declared active at schema versions 1, 2" in registry_disagreement((*DECLARATIONS, second))


def test_changed_columns_under_a_recorded_version_are_refused_and_nothing_is_written(app_context):
    reconcile_coverage()
    before = _recorded()
    people = next(d for d in DECLARATIONS if d.dataset == "people")
    renamed = tuple(("mail", t) if name == "email" else (name, t) for name, t in people.columns)
    # A status change and a new dataset in the same run must not be written either.
    declarations = (*_with("people", columns=renamed), replace(people, dataset="rosters"))
    declarations = tuple(replace(d, status=CoverageStatus.RETIRED) if d.dataset == "teams" else d for d in declarations)

    with pytest.raises(CoverageConflict) as refusal:
        reconcile_coverage(declarations)

    message = str(refusal.value)
    assert "'people' schema version 1" in message and "new schema version" in message
    assert _recorded() == before
    assert _registry_versions() == [1]


def test_status_change_updates_the_row_and_advances_the_registry(app_context):
    reconcile_coverage()

    outcome = reconcile_coverage(_with("time_off_requests", status=CoverageStatus.DEFERRED))

    status = db.session.scalar(select(CoverageDataset.status).where(CoverageDataset.dataset == "time_off_requests"))
    assert status == "deferred"
    assert outcome.status_changes == ["time_off_requests v1 active → deferred"]
    assert _registry_versions() == [1, 2]
    assert "time_off_requests v1 active → deferred" in db.session.get(CoverageVersion, 2).summary


def test_cli_reconcile_prints_what_it_did_then_that_nothing_changed(app):
    runner = app.test_cli_runner()

    first = runner.invoke(args=["coverage", "reconcile"])
    second = runner.invoke(args=["coverage", "reconcile"])

    assert first.exit_code == 0 and second.exit_code == 0
    assert "timesheet_entries v1 recorded (active)" in first.output
    assert "now version 1" in first.output
    assert "nothing changed" in second.output
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(CoverageVersion)) == 1


def test_cli_reconcile_refusal_exits_non_zero_with_the_message(app):
    """A version recorded earlier with other columns (here: another hash) is refused by the command."""
    with app.app_context():
        db.session.add(CoverageDataset(dataset="teams", schema_version=1, status="active", content_hash="0" * 64))
        db.session.commit()

    refused = app.test_cli_runner().invoke(args=["coverage", "reconcile"])

    assert refused.exit_code == 1
    assert "'teams' schema version 1" in refused.output and "Nothing was changed" in refused.output
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(CoverageDataset)) == 1
        assert db.session.scalar(select(func.count()).select_from(CoverageVersion)) == 0


def test_a_reconcile_waits_for_a_concurrent_one_and_then_finds_nothing_to_do(app):
    """Two start-ups at once: the second reconcile waits on the registry lock and adds no second version."""
    import threading

    from sqlalchemy import insert, text

    from app.models.types import utcnow

    outcomes = []

    def reconcile_in_another_session():
        with app.app_context():
            outcomes.append(reconcile_coverage())

    with app.app_context():
        with db.engine.connect() as first:
            first.execute(text("LOCK TABLE export_coverage_versions IN SHARE ROW EXCLUSIVE MODE"))
            second = threading.Thread(target=reconcile_in_another_session)
            second.start()
            with db.engine.connect() as observer:
                # Until the other session waits on the lock (or has finished without taking it).
                while second.is_alive() and not table_lock_waiters("export_coverage_versions", observer):
                    observer.rollback()
            first.execute(
                insert(CoverageDataset.__table__),
                [
                    {
                        "dataset": d.dataset,
                        "schema_version": d.schema_version,
                        "status": d.status.value,
                        "content_hash": d.content_hash,
                        "recorded_at": utcnow(),
                    }
                    for d in DECLARATIONS
                ],
            )
            first.execute(insert(CoverageVersion.__table__).values(version=1, summary="first", created_at=utcnow()))
            first.commit()
        second.join()

        assert len(outcomes) == 1 and not outcomes[0].advanced
        assert outcomes[0].registry_version == 1
        assert _registry_versions() == [1]
