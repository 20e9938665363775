"""The uploading phase of producing a workspace-export package: SHA256SUMS (every volume's checksum,
for `sha256sum -c`), then the manifest, last; then the package becomes `available`, fenced on the
attempt (app/domain/workspace_export/export_package.py).
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime

from app.domain.workspace_export import export_execution, export_package
from app.models.export_execution import ExecutionPhase
from app.models.types import database_clock
from app.rendering.package.checksums import build_checksums
from app.rendering.package.manifest import ManifestChecksums, ManifestDataset, build_manifest
from app.services.workspace_export.package_keys import checksums_key, manifest_key, relative_to_package
from app.services.workspace_export.production_attempt import ProductionAttempt


def publish(
    attempt: ProductionAttempt, cutoff_at: datetime, datasets: list[ManifestDataset], registry_version: int
) -> int:
    """Store the package's SHA256SUMS and manifest and make it available; return its id."""
    attempt.phase = ExecutionPhase.UPLOADING
    with attempt.fenced():
        export_execution.enter_phase(attempt.execution_id, attempt.number, ExecutionPhase.UPLOADING)
    uid = str(uuid.uuid4())
    checksums = build_checksums((volume.key, volume.sha256) for dataset in datasets for volume in dataset.volumes)
    sums_key = checksums_key(attempt.prefix)
    attempt.ensure_current()
    attempt.storage.put_bytes(sums_key, checksums)
    manifest = build_manifest(
        package_uid=uid,
        execution_id=attempt.execution_id,
        workspace_id=attempt.workspace_id,
        cutoff_at=cutoff_at,
        created_at=database_clock(),
        format=attempt.format,
        datasets=datasets,
        registry_version=registry_version,
        checksums=ManifestChecksums(
            relative_to_package(sums_key, attempt.prefix), len(checksums), hashlib.sha256(checksums).hexdigest()
        ),
    )
    key = manifest_key(attempt.prefix)
    attempt.ensure_current()
    attempt.storage.put_bytes(key, manifest)
    counts = attempt.counts
    with attempt.fenced():
        package = export_package.make_available(
            execution_id=attempt.execution_id,
            attempt=attempt.number,
            uid=uid,
            workspace_id=attempt.workspace_id,
            format=attempt.format,
            cutoff_at=cutoff_at,
            prefix=attempt.prefix,
            manifest_key=key,
            manifest_size=len(manifest),
            manifest_sha256=hashlib.sha256(manifest).hexdigest(),
            datasets_count=len(datasets),
            row_count=counts.rows,
            size_bytes=counts.bytes,
            volumes_count=counts.volumes,
            retention_days=int(attempt.snapshot_settings["retention_days"]),
        )
        package_id = package.id
        export_execution.finish_phase(
            attempt.execution_id,
            attempt.number,
            ExecutionPhase.UPLOADING,
            f"Manifest stored; package {uid} is available.",
            details={"package_id": package_id, "manifest_bytes": len(manifest)},
        )
    return package_id
