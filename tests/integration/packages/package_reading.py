"""Helpers for package tests: a workspace with rows in every dataset, and reading a package back.

`read_package` opens the manifest, checks every volume's size and SHA-256 against it, unzips
every volume (zipfile's CRC check included) and returns each dataset's rows as text, the way a
data tool reads them. `database_rows` gives the same text from the database, so the two compare
row for row.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import zipfile
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from sqlalchemy import select, text

from app.domain.sources.catalog import DATASETS
from app.extensions import db
from app.models import ExportPackage, TeamMember, Workspace
from app.storage import Storage
from tests import factories

ALL_DATASETS = ["teams", "people", "shifts", "time_off_requests", "timesheet_entries"]


def fill_every_dataset(workspace: Workspace, timesheet_rows: int = 0) -> None:
    """Rows in every dataset, the hostile values in every text column that takes free text."""
    hostile = factories.hostile_values()
    teams = [factories.make_team(workspace, name=hostile[16]), factories.make_team(workspace, name=hostile[0])]
    people = [
        factories.make_team_member(
            teams[i % 2], full_name=value, job_title=hostile[(i + 7) % len(hostile)], hourly_rate=Decimal("21.50") + i
        )
        for i, value in enumerate(hostile[:6])
    ]
    start = datetime(2026, 11, 2, 7, 0, tzinfo=UTC)
    for i, value in enumerate(hostile):
        person = people[i % len(people)]
        factories.make_shift(
            person,
            notes=value,
            starts_at=start + timedelta(days=i),
            ends_at=start + timedelta(days=i, hours=8, minutes=i),
        )
        factories.make_timesheet_entry(
            person,
            note=value,
            hours=Decimal(i % 40) / 4,
            approved=i % 2 == 0,
            work_date=date(2026, 1, 1) + timedelta(days=i),
        )
        if i % 3 == 0:
            factories.make_time_off(person, reason=value)
    if timesheet_rows:
        add_timesheet_rows(workspace, people[0], timesheet_rows)


def add_timesheet_rows(workspace: Workspace, employee: TeamMember, count: int) -> None:
    """`count` generated timesheet entries in one INSERT … SELECT."""
    db.session.execute(
        text(
            "INSERT INTO data_timesheet_entries (workspace_id, team_id, team_name, person_id, person_name, work_date,"
            " hours, project, approved, note, recorded_at)"
            " SELECT :workspace_id, :team_id, :team_name, :person_id, :person_name, :first_day + (g % 365),"
            " (g % 40) * 0.25, 'Ward ' || (g % 7), g % 2 = 0, 'note ' || md5(g::text), :recorded_at"
            " FROM generate_series(1, :count) AS g"
        ),
        {
            "workspace_id": workspace.id,
            "team_id": employee.team_id,
            "team_name": employee.team_name,
            "person_id": employee.id,
            "person_name": employee.full_name,
            "first_day": date(2026, 1, 1),
            "recorded_at": datetime(2026, 11, 2, 18, 0, tzinfo=UTC),
            "count": count,
        },
    )
    db.session.commit()


def _text(value, type_: str) -> str:
    if type_ == "datetime":
        return value.astimezone(UTC).isoformat(timespec="microseconds")
    if type_ == "boolean":
        return "true" if value else "false"
    if type_ == "date":
        return value.isoformat()
    if type_ == "decimal":
        return format(value, "f")
    return str(value)


def database_rows(workspace_id: int, dataset: str) -> list[list[str]]:
    """The dataset's rows of the workspace as the CSV volumes write them, in id order."""
    spec = DATASETS[dataset]
    table = spec.table
    rows = db.session.execute(
        select(*(table.c[c.name] for c in spec.columns))
        .where(table.c.workspace_id == workspace_id)
        .order_by(table.c.id)
    ).all()
    db.session.rollback()
    return [[_text(value, column.type) for value, column in zip(row, spec.columns, strict=True)] for row in rows]


@dataclass
class ReadPackage:
    manifest: dict
    volumes: dict[str, list[bytes]]  # dataset → each volume's uncompressed file

    def csv_rows(self, dataset: str) -> list[list[str]]:
        rows = []
        for data in self.volumes[dataset]:
            records = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
            assert records[0] == [c["name"] for c in self.dataset(dataset)["columns"]]
            rows.extend(records[1:])
        return rows

    def json_rows(self, dataset: str) -> list[dict]:
        return [
            json.loads(line, parse_float=Decimal)
            for data in self.volumes[dataset]
            for line in data.decode("utf-8").splitlines()
        ]

    def dataset(self, name: str) -> dict:
        return next(d for d in self.manifest["datasets"] if d["name"] == name)


def read_package(storage: Storage, package: ExportPackage) -> ReadPackage:
    manifest_bytes = b"".join(storage.read_chunks(package.manifest_key))
    assert hashlib.sha256(manifest_bytes).hexdigest() == package.manifest_sha256
    assert len(manifest_bytes) == package.manifest_size
    manifest = json.loads(manifest_bytes)
    volumes: dict[str, list[bytes]] = {}
    for dataset in manifest["datasets"]:
        files = []
        for volume in dataset["volumes"]:
            data = b"".join(storage.read_chunks(package.prefix + volume["key"]))
            assert len(data) == volume["size_bytes"], volume["key"]
            assert hashlib.sha256(data).hexdigest() == volume["sha256"], volume["key"]
            archive = zipfile.ZipFile(io.BytesIO(data))
            assert archive.testzip() is None
            assert archive.namelist() == [volume["entry"]]
            files.append(archive.read(volume["entry"]))
        volumes[dataset["name"]] = files
    return ReadPackage(manifest, volumes)


def package_of(execution_id: int) -> ExportPackage | None:
    db.session.rollback()
    return db.session.scalar(select(ExportPackage).where(ExportPackage.execution_id == execution_id))
