"""The manifest names the package, its cutoff, its conventions, and every dataset and volume."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from app.rendering.package.manifest import ManifestChecksums, ManifestDataset, ManifestVolume, build_manifest

PARQUET_SCHEMA = [{"name": "id", "physical_type": "INT32", "logical_type": "None", "arrow_type": "int32"}]


def _manifest(format: str = "csv") -> dict:
    datasets = [
        ManifestDataset(
            "teams",
            1,
            "ab" * 32,
            [("id", "integer"), ("name", "text")],
            [ManifestVolume("teams/teams-00001.csv.zip", "teams-00001.csv", 120, 3, "cd" * 32)],
            parquet_schema=PARQUET_SCHEMA if format == "parquet" else None,
        ),
        ManifestDataset(
            "shifts",
            2,
            "ef" * 32,
            [("id", "integer"), ("starts_at", "datetime")],
            [
                ManifestVolume("shifts/shifts-00001.csv.zip", "shifts-00001.csv", 1000, 10, "01" * 32),
                ManifestVolume("shifts/shifts-00002.csv.zip", "shifts-00002.csv", 500, 4, "23" * 32),
            ],
        ),
    ]
    data = build_manifest(
        package_uid="u-1",
        execution_id=5,
        workspace_id=9,
        cutoff_at=datetime(2026, 12, 1, 2, 0, tzinfo=UTC),
        created_at=datetime(2026, 12, 1, 2, 5, tzinfo=UTC),
        format=format,
        datasets=datasets,
        registry_version=3,
        checksums=ManifestChecksums("SHA256SUMS", 240, "9a" * 32),
    )
    return json.loads(data.decode("utf-8"))


def test_the_manifest_names_the_coverage_registry_version_it_was_made_under():
    assert _manifest()["coverage_registry_version"] == 3


def test_the_manifest_identifies_the_package_and_its_cutoff():
    manifest = _manifest()
    assert (
        manifest["manifest_version"],
        manifest["package_uid"],
        manifest["execution_id"],
        manifest["workspace_id"],
    ) == (1, "u-1", 5, 9)
    assert manifest["cutoff_at"] == "2026-12-01T02:00:00.000000+00:00"


def test_the_manifest_lists_every_dataset_with_schema_columns_rows_and_volumes():
    shifts = _manifest()["datasets"][1]
    assert (shifts["name"], shifts["schema_version"], shifts["content_hash"], shifts["row_count"]) == (
        "shifts",
        2,
        "ef" * 32,
        14,
    )
    assert shifts["columns"] == [{"name": "id", "type": "integer"}, {"name": "starts_at", "type": "datetime"}]
    assert shifts["volumes"][1] == {
        "key": "shifts/shifts-00002.csv.zip",
        "entry": "shifts-00002.csv",
        "size_bytes": 500,
        "row_count": 4,
        "sha256": "23" * 32,
    }


def test_the_manifest_totals_add_up():
    assert _manifest()["totals"] == {"datasets": 2, "rows": 17, "volumes": 3, "size_bytes": 1620}


def test_the_manifest_states_the_format_conventions():
    csv_format = _manifest("csv")["format"]
    assert csv_format["name"] == "csv"
    assert csv_format["conventions"]["null"] == "empty unquoted field"
    assert csv_format["conventions"]["empty_text"] == '""'
    assert "UTF-8" in csv_format["conventions"]["encoding"]
    assert "ISO 8601" in csv_format["conventions"]["timestamps"]
    assert _manifest("jsonl")["format"]["conventions"]["null"] == "null"


def test_the_manifest_names_the_checksums_file_with_its_size_and_sha256():
    checksums = _manifest()["checksums"]
    assert (checksums["key"], checksums["size_bytes"], checksums["sha256"]) == ("SHA256SUMS", 240, "9a" * 32)
    assert "sha256sum -c" in checksums["format"]


def test_a_parquet_manifest_describes_each_dataset_parquet_schema_and_no_zip():
    manifest = _manifest("parquet")
    assert manifest["format"]["name"] == "parquet"
    assert "zip" not in manifest["format"]["container"]
    assert "decimal128" in manifest["format"]["conventions"]["decimals"]
    assert manifest["datasets"][0]["parquet_schema"] == PARQUET_SCHEMA


def test_a_csv_manifest_has_no_parquet_schema():
    assert all("parquet_schema" not in dataset for dataset in _manifest("csv")["datasets"])
