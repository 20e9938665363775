"""`manifest.json`: what a package holds, written last, after every volume is stored.

Format version 1 (docs/workspace-export-packages.md describes it for readers):

    {"manifest_version": 1, "package_uid", "execution_id", "workspace_id", "cutoff_at",
     "created_at", "format": {"name": "csv" | "jsonl" | "parquet", "container", "conventions": {…}},
     "checksums": {"key": "SHA256SUMS", "format", "size_bytes", "sha256"},
     "datasets": [{"name", "schema_version", "content_hash", "row_count",
                   "columns": [{"name", "type"}],
                   "parquet_schema": [{"name", "physical_type", "logical_type", "arrow_type",
                                       "nullable", "precision", "scale"}],   (Parquet only)
                   "volumes": [{"key", "entry", "size_bytes", "row_count", "sha256"}]}],
     "totals": {"datasets", "rows", "volumes", "size_bytes"}}

Volume keys are relative to the package (the folder that holds manifest.json), so the package
reads the same wherever it is copied. Time stamps are ISO 8601 in UTC with offset.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from app.rendering.package.encoders import conventions, iso_timestamp
from app.rendering.package.parquet_settings import PARQUET_CONVENTIONS
from app.vocabulary import PackageFormat

MANIFEST_VERSION = 1


@dataclass(frozen=True)
class ManifestVolume:
    key: str  # relative to the package
    entry: str  # the one file inside the zip
    size_bytes: int
    row_count: int
    sha256: str


@dataclass(frozen=True)
class ManifestChecksums:
    key: str  # relative to the package
    size_bytes: int
    sha256: str


@dataclass(frozen=True)
class ManifestDataset:
    name: str
    schema_version: int
    content_hash: str
    columns: Sequence[tuple[str, str]]
    volumes: Sequence[ManifestVolume]
    parquet_schema: Sequence[dict] | None = None  # Parquet packages: the volumes' column types

    @property
    def row_count(self) -> int:
        return sum(volume.row_count for volume in self.volumes)


def build_manifest(
    *,
    package_uid: str,
    execution_id: int,
    workspace_id: int,
    cutoff_at: datetime,
    created_at: datetime,
    format: str,
    datasets: Sequence[ManifestDataset],
    registry_version: int,
    checksums: ManifestChecksums,
) -> bytes:
    """The manifest's bytes (UTF-8 JSON, indented for people who open it)."""
    volumes = [volume for dataset in datasets for volume in dataset.volumes]
    document = {
        "manifest_version": MANIFEST_VERSION,
        "package_uid": package_uid,
        "execution_id": execution_id,
        "workspace_id": workspace_id,
        "cutoff_at": iso_timestamp(cutoff_at),
        "created_at": iso_timestamp(created_at),
        "coverage_registry_version": registry_version,
        "format": _format(format),
        "checksums": {
            "key": checksums.key,
            "format": "sha256sum -c: a hex digest, two spaces, a path relative to the package folder",
            "size_bytes": checksums.size_bytes,
            "sha256": checksums.sha256,
        },
        "datasets": [
            {
                "name": dataset.name,
                "schema_version": dataset.schema_version,
                "content_hash": dataset.content_hash,
                "row_count": dataset.row_count,
                "columns": [{"name": name, "type": type_} for name, type_ in dataset.columns],
                **({"parquet_schema": list(dataset.parquet_schema)} if dataset.parquet_schema is not None else {}),
                "volumes": [
                    {
                        "key": v.key,
                        "entry": v.entry,
                        "size_bytes": v.size_bytes,
                        "row_count": v.row_count,
                        "sha256": v.sha256,
                    }
                    for v in dataset.volumes
                ],
            }
            for dataset in datasets
        ],
        "totals": {
            "datasets": len(datasets),
            "rows": sum(dataset.row_count for dataset in datasets),
            "volumes": len(volumes),
            "size_bytes": sum(volume.size_bytes for volume in volumes),
        },
    }
    return (json.dumps(document, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def _format(format: str) -> dict:
    if format == PackageFormat.PARQUET:
        return {
            "name": format,
            "container": "none (one Parquet file per volume, zstd-compressed row groups)",
            "conventions": PARQUET_CONVENTIONS,
        }
    return {"name": format, "container": "zip (one file per volume, deflated)", "conventions": conventions(format)}
