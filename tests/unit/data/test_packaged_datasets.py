"""Only datasets the coverage registry declares active can be packaged."""

from __future__ import annotations

import dataclasses

import pytest

from app.data import package_snapshot
from app.data.package_snapshot import DatasetNotCovered, packaged_datasets
from app.domain.workspace_export.coverage import DECLARATIONS, CoverageStatus


def test_active_datasets_come_with_their_declaration_in_the_order_asked():
    chosen = packaged_datasets(["shifts", "teams"])
    assert [dataset.name for dataset in chosen] == ["shifts", "teams"]
    assert chosen[1].column_names == ["id", "code", "name", "location", "created_at"]
    assert chosen[1].declaration.schema_version == 1


def test_an_unknown_dataset_is_refused_by_name():
    with pytest.raises(DatasetNotCovered, match=r"'audit_events' \(not declared\)"):
        packaged_datasets(["teams", "audit_events"])


@pytest.mark.parametrize("status", [CoverageStatus.DEFERRED, CoverageStatus.RETIRED])
def test_a_dataset_that_is_not_active_is_refused_with_its_status(monkeypatch, status):
    declarations = tuple(dataclasses.replace(d, status=status) if d.dataset == "shifts" else d for d in DECLARATIONS)
    monkeypatch.setattr(package_snapshot, "DECLARATIONS", declarations)
    with pytest.raises(DatasetNotCovered, match=rf"'shifts' \({status}\)"):
        packaged_datasets(["teams", "shifts"])
