"""A folder under DESTINATIONS_ROOT as a destination: confinement, atomic writes, the probe."""

from __future__ import annotations

import os

import pytest

from app import destinations
from app.destinations import DestinationRefused
from app.models.package_delivery import FailureClass
from app.storage.base import InvalidKey
from tests import factories


def test_probe_succeeds_and_leaves_nothing_behind(world, destinations_root):
    destination = factories.make_destination(world.workspace, path="exports/rhythm")

    result = destinations.test_connection(destination)

    assert result.ok, result.message
    assert os.listdir(destinations_root / "exports" / "rhythm") == []


def test_a_stream_lands_whole_under_the_destination_path(world, destinations_root):
    destination = factories.make_destination(world.workspace, path="exports")
    store = destinations.open_destination(destination)

    size = store.put_stream("workspace-1/20261201T020000Z/people-0001.csv.zip", iter([b"ab", b"cd"]))

    target = destinations_root / "exports" / "workspace-1" / "20261201T020000Z" / "people-0001.csv.zip"
    assert (size, target.read_bytes()) == (4, b"abcd")
    assert sorted(p.name for p in target.parent.iterdir()) == ["people-0001.csv.zip"]  # no temporary left


def test_a_failed_stream_leaves_no_file_and_no_temporary(world, destinations_root):
    store = destinations.open_destination(factories.make_destination(world.workspace, path="exports"))

    def failing():
        yield b"partial"
        raise OSError("source read failed")

    with pytest.raises(OSError):
        store.put_stream("a/file.bin", failing())
    assert list((destinations_root / "exports" / "a").iterdir()) == []


def test_directory_destinations_are_refused_when_no_root_is_configured(world, app):
    destination = factories.make_destination(world.workspace)

    with pytest.raises(DestinationRefused) as refused:
        destinations.open_destination(destination)

    assert refused.value.code == "directory_not_configured"
    failure = destinations.classify_error(refused.value)
    assert (failure.failure_class, failure.code) == (FailureClass.PERMANENT, "directory_not_configured")


def test_a_path_through_a_symbolic_link_out_of_the_root_is_refused(world, destinations_root, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (destinations_root / "escape").symlink_to(outside)
    destination = factories.make_destination(world.workspace, path="escape/deeper")

    result = destinations.test_connection(destination)

    assert not result.ok
    assert "outside" in result.message
    assert list(outside.iterdir()) == []


def test_an_object_whose_folder_is_a_symbolic_link_out_of_the_root_is_refused(world, destinations_root, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (destinations_root / "exports").mkdir()
    (destinations_root / "exports" / "workspace-1").symlink_to(outside)
    store = destinations.open_destination(factories.make_destination(world.workspace, path="exports"))

    with pytest.raises(DestinationRefused):
        store.put_bytes("workspace-1/manifest.json", b"{}")
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("path", ["../outside", "a/../../outside", "/etc", "a//b"])
def test_a_hostile_stored_path_never_writes_outside_the_root(world, destinations_root, tmp_path, path):
    destination = factories.make_destination(world.workspace, path=path)

    result = destinations.test_connection(destination)

    assert not result.ok
    written = [p for p in tmp_path.rglob("*.rhythm-probe-*")]
    assert written == []


@pytest.mark.parametrize("key", ["../x", "/abs", "a/../../b", "a//b", "with space"])
def test_keys_that_are_not_plain_relative_paths_are_refused(world, destinations_root, key):
    store = destinations.open_destination(factories.make_destination(world.workspace, path="exports"))

    with pytest.raises(InvalidKey):
        store.put_bytes(key, b"x")


def test_the_probe_names_the_folder_under_the_root_never_the_servers_own_path(world, destinations_root):
    destination = factories.make_destination(world.workspace, path="exports/rhythm")

    result = destinations.test_connection(destination)

    assert result.message == "Wrote, read back and deleted a test object in DESTINATIONS_ROOT/exports/rhythm."
    assert str(destinations_root) not in result.message


def test_a_write_the_system_refuses_names_its_file_under_the_root(world, destinations_root):
    """A file stands where the object's folder should be: the system's reason, and the folder under the root."""
    (destinations_root / "exports").mkdir()
    (destinations_root / "exports" / "a").write_bytes(b"in the way")
    store = destinations.open_destination(factories.make_destination(world.workspace, path="exports"))

    with pytest.raises(FileExistsError) as refused:
        store.put_stream("a/file.bin", iter([b"data"]))

    assert destinations.describe_error(refused.value) == "File exists: DESTINATIONS_ROOT/exports/a"
