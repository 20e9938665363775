"""Package keys (INV-14): built from ids only, every one inside its package prefix, hostile input refused."""

from __future__ import annotations

import pytest

from app.services.workspace_export.package_keys import manifest_key, package_prefix, relative_to_package, volume_key
from app.storage import InvalidKey, check_key_under

HOSTILE_IDS = [0, -1, True, "1", "1/../2", 1.0, None, "../../etc"]
HOSTILE_DATASETS = [
    "../people",
    "people/../../x",
    "",
    "People",
    "a b",
    "teams\n",
    "/abs",
    "x" * 100,
    ".",
    "..",
    "teams/evil",
    "tëams",
    "teams\x00",
]


def test_the_prefix_names_workspace_execution_and_attempt():
    assert package_prefix(12, 345, 2) == "packages/w12/e345/a2/"


def test_volume_and_manifest_keys_lie_under_the_prefix():
    prefix = package_prefix(1, 2, 3)
    key = volume_key(prefix, "timesheet_entries", 7, "jsonl")
    assert key == "packages/w1/e2/a3/timesheet_entries/timesheet_entries-00007.jsonl.zip"
    assert check_key_under(key, prefix) == key
    assert manifest_key(prefix) == "packages/w1/e2/a3/manifest.json"
    assert relative_to_package(key, prefix) == "timesheet_entries/timesheet_entries-00007.jsonl.zip"


@pytest.mark.parametrize("bad", HOSTILE_IDS, ids=repr)
@pytest.mark.parametrize("position", range(3))
def test_a_prefix_refuses_anything_but_positive_integer_ids(bad, position):
    ids = [1, 2, 3]
    ids[position] = bad
    with pytest.raises(InvalidKey):
        package_prefix(*ids)


@pytest.mark.parametrize("dataset", HOSTILE_DATASETS, ids=repr)
def test_a_volume_key_refuses_a_hostile_dataset_name(dataset):
    with pytest.raises(InvalidKey):
        volume_key(package_prefix(1, 2, 3), dataset, 1, "csv")


@pytest.mark.parametrize("fmt", ["zip", "../csv", "csv/x", ""], ids=repr)
def test_a_volume_key_refuses_an_unknown_format(fmt):
    with pytest.raises(InvalidKey):
        volume_key(package_prefix(1, 2, 3), "teams", 1, fmt)


@pytest.mark.parametrize("sequence", [0, -3, True, "1"], ids=repr)
def test_a_volume_key_refuses_a_bad_sequence(sequence):
    with pytest.raises(InvalidKey):
        volume_key(package_prefix(1, 2, 3), "teams", sequence, "csv")


@pytest.mark.parametrize(
    "prefix",
    ["packages/w1/e2/a3", "../packages/", "/packages/w1/", "packages/w1/../../", "", "packages//w1/"],
    ids=repr,
)
def test_keys_refuse_a_prefix_that_is_not_a_clean_folder(prefix):
    with pytest.raises(InvalidKey):
        volume_key(prefix, "teams", 1, "csv")
    with pytest.raises(InvalidKey):
        manifest_key(prefix)


def test_a_key_outside_the_prefix_is_not_made_relative():
    with pytest.raises(InvalidKey):
        relative_to_package("packages/w1/e2/a4/manifest.json", package_prefix(1, 2, 3))
