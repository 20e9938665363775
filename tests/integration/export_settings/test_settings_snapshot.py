"""The copy of the settings an execution keeps, in the shape every part of workspace export reads."""

from __future__ import annotations

from app.services.workspace_export.export_settings import get_or_default, snapshot
from tests import factories


def test_the_snapshot_has_the_fixed_shape_with_volume_size_in_bytes(world):
    settings = factories.make_export_settings(
        world.workspace,
        datasets=["teams", "shifts"],
        format="jsonl",
        volume_size_mb=64,
        retention_days=3,
        notify_person_ids=[world.member.id],
        version=4,
    )
    assert snapshot(settings) == {
        "datasets": ["teams", "shifts"],
        "format": "jsonl",
        "volume_size_bytes": 64 * 1024 * 1024,
        "retention_days": 3,
        "notify_person_ids": [world.member.id],
        "settings_version": 4,
    }


def test_the_snapshot_is_a_copy_later_edits_do_not_touch(world):
    settings = factories.make_export_settings(world.workspace)
    copied = snapshot(settings)
    settings.datasets.append("extra")
    assert "extra" not in copied["datasets"]


def test_a_workspace_without_settings_gets_unsaved_defaults_of_every_active_dataset(world):
    defaults = get_or_default(world.workspace.id)
    assert defaults.id is None and defaults.version == 0
    assert defaults.datasets == ["teams", "people", "shifts", "time_off_requests", "timesheet_entries"]
    assert (defaults.format, defaults.volume_size_mb, defaults.cadence) == ("csv", 256, "off")
