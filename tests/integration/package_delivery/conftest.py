"""A stored package ready for delivery: execution, package row, complete volume rows, and their
bytes (and the manifest's) in this test's own storage folder."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import pytest

from app.communications import Mailer
from app.extensions import db
from app.models import Person, Workspace
from app.models.export_package import ExportPackage, ExportVolume
from app.storage import Storage
from tests import factories


@dataclass
class StoredPackage:
    workspace: Workspace
    admin: Person
    package: ExportPackage
    objects: dict[str, bytes]  # key under the package prefix → bytes, the manifest last

    def expected_at(self, top: str) -> dict[str, bytes]:
        """The files a delivery must leave under `top` (the destination's path), by relative path."""
        moment = self.package.created_at.strftime("%Y%m%dT%H%M%SZ")
        base = f"{top}/workspace-{self.workspace.id}/{moment}" if top else f"workspace-{self.workspace.id}/{moment}"
        return {f"{base}/{key}": data for key, data in self.objects.items()}


def _save(record):
    db.session.add(record)
    db.session.commit()
    return record


def store_package(workspace: Workspace, storage: Storage, volumes: dict[str, bytes]) -> ExportPackage:
    execution = factories.make_execution(workspace)
    package = factories.make_package(execution)
    for sequence, (name, data) in enumerate(volumes.items(), 1):
        key = package.prefix + name
        storage.put_bytes(key, data)
        _save(
            ExportVolume(
                execution_id=execution.id,
                attempt=execution.attempt_count,
                dataset=name.split("-")[0],
                sequence=sequence,
                key=key,
                status="complete",
                row_count=1,
                size_bytes=len(data),
                sha256=hashlib.sha256(data).hexdigest(),
            )
        )
    manifest = b'{"package": "test"}'
    storage.put_bytes(package.manifest_key, manifest)
    return package


@pytest.fixture
def stored_package(world, isolated_storage) -> StoredPackage:
    volumes = {
        "people-0001.csv.zip": b"P" * 150_000,  # larger than a part: a multipart upload
        "teams-0001.csv.zip": b"team data",
    }
    package = store_package(world.workspace, isolated_storage, volumes)
    # A volume of an earlier, discarded attempt: never delivered.
    _save(
        ExportVolume(
            execution_id=package.execution_id,
            attempt=0,
            dataset="people",
            sequence=1,
            key=f"packages/w{world.workspace.id}/e{package.execution_id}/a0/people-0001.csv.zip",
            status="discarded",
        )
    )
    objects = {**volumes, "manifest.json": b'{"package": "test"}'}
    return StoredPackage(world.workspace, world.admin, package, objects)


@pytest.fixture
def mail_to_smtp_server(app, smtp_settings):
    """This process's mailer sends to the test SMTP server."""
    previous = app.extensions.get("rhythm_mailer")
    app.extensions["rhythm_mailer"] = Mailer(smtp_settings)
    yield
    if previous is None:
        app.extensions.pop("rhythm_mailer", None)
    else:
        app.extensions["rhythm_mailer"] = previous
