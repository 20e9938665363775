"""SHA256SUMS: a produced package, delivered to a directory, verifies with `sha256sum -c` as a
customer runs it, and a tampered volume fails the check."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from sqlalchemy import select

from app.destinations.directory import ROOT_NAME
from app.extensions import db
from app.models.package_delivery import DeliveryStatus, ExportDelivery
from app.services.workspace_export import package_delivery
from app.services.workspace_export.package_production import run_execution
from tests import factories
from tests.integration.packages.package_reading import ALL_DATASETS, fill_every_dataset, package_of


def _sha256sum(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=folder, capture_output=True, text=True, timeout=60)


def _delivered(world, destinations_root: Path, format: str) -> tuple[Path, list[str]]:
    """A package of every dataset produced and delivered to a directory destination: its folder
    there, and the keys the manifest names for the volumes."""
    fill_every_dataset(world.workspace, timesheet_rows=2000)
    destination = factories.make_destination(world.workspace)
    execution = factories.make_execution(
        world.workspace,
        settings_snapshot=factories.settings_snapshot(
            datasets=ALL_DATASETS, format=format, volume_size_bytes=256 * 1024
        ),
    )
    assert run_execution(execution.id) == "succeeded"
    package = package_of(execution.id)
    delivery = db.session.scalars(select(ExportDelivery).where(ExportDelivery.destination_id == destination.id)).one()
    assert delivery.status == DeliveryStatus.DELIVERED
    keys = [key[len(package.prefix) :] for key in package_delivery.package_keys(package)]
    # The location names the folder under the destinations root, as people see it.
    return destinations_root / delivery.location.removeprefix(f"{ROOT_NAME}/"), keys


@pytest.mark.parametrize("format", ["csv", "jsonl", "parquet"])
def test_a_delivered_package_verifies_with_sha256sum(world, isolated_storage, destinations_root, format):
    folder, keys = _delivered(world, destinations_root, format)

    checked = _sha256sum(folder)

    assert checked.returncode == 0, checked.stdout + checked.stderr
    volumes = keys[:-2]
    assert sorted(checked.stdout.splitlines()) == sorted(f"{key}: OK" for key in volumes)
    assert (folder / "SHA256SUMS").read_text().count("\n") == len(volumes)


def test_a_tampered_volume_fails_the_check_by_name(world, isolated_storage, destinations_root):
    folder, keys = _delivered(world, destinations_root, "parquet")
    tampered = folder / keys[0]
    data = bytearray(tampered.read_bytes())
    data[len(data) // 2] ^= 0xFF
    tampered.write_bytes(bytes(data))

    checked = _sha256sum(folder)

    assert checked.returncode != 0
    assert f"{keys[0]}: FAILED" in checked.stdout.splitlines()


def test_the_checksums_are_copied_after_the_volumes_and_before_the_manifest(world, isolated_storage, destinations_root):
    _, keys = _delivered(world, destinations_root, "csv")

    assert keys[-2:] == ["SHA256SUMS", "manifest.json"]
    assert all(key.endswith(".csv.zip") for key in keys[:-2])
