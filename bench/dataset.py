"""The benchmark database: a scratch PostgreSQL database with one workspace per dataset size.

Each workspace holds exactly `rows` timesheet entries, made in SQL with generate_series so a
million rows take seconds, not minutes. Text looks like real data: Unicode names, projects and
notes, with the hostile values every export must survive (formula-looking cells, quotes,
commas, line breaks) in about one row in ten. A workspace that already has the right number
of rows is reused as it is.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

import psycopg
from sqlalchemy import delete, func, select, text

if TYPE_CHECKING:
    from flask import Flask

DEFAULT_DATABASE_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/rhythm_bench"
DATASET = "timesheet_entries"
QUERY_NAME = "All timesheet entries"
ADMIN_EMAIL = "bench-admin@example.test"

# The benchmark's table report: eight columns of the timesheet entries, widths in percent of the page.
REPORT_COLUMNS = (
    ("id", 8),
    ("work_date", 10),
    ("person_name", 17),
    ("team_name", 15),
    ("project", 15),
    ("hours", 7),
    ("approved", 8),
    ("note", 20),
)
REPORT_QUERY_PREFIX = "Report rows: "

TEAMS = (
    ("NOR", "Nordlys Kitchen", "Tromsø"),
    ("ZUR", "Zürich Front Desk", "Zürich"),
    ("KRK", "Kraków Warehouse", "Kraków"),
    ("ATH", "Αθήνα Logistics", "Athens"),
    ("KYV", "Київ Support", "Kyiv"),
    ("OSA", "大阪 Retail", "Ōsaka"),
    ("SEO", "서울 Night Shift", "Seoul"),
    ("CAI", "القاهرة Call Centre", "Cairo"),
    ("LIS", "Lisboa Café", "Lisboa"),
    ("REY", "Reykjavík Harbour", "Reykjavík"),
    ("MTL", "Montréal Bakery", "Montréal"),
    ("SAO", "São Paulo Events", "São Paulo"),
)
FIRST_NAMES = (
    "Zoë",
    "Łukasz",
    "Siobhán",
    "José",
    "Ingrid",
    "Ελένη",
    "Олег",
    "美咲",
    "민준",
    "Nguyễn",
    "Amélie",
    "Søren",
    "Ömer",
    "Αλέξανδρος",
    "Марія",
    "Hannah",
    "Ravi",
    "Ayşe",
    "Þóra",
    "Chloé",
    "Mateus",
    "Ngozi",
    "Dvořák",
    "Fatima",
    "Kwame",
    "Renée",
    "Björn",
    "Iñaki",
    "Saoirse",
    "李",
)
LAST_NAMES = (
    "Ødegaard",
    "Łukasiewicz",
    "Ó Briain",
    "Núñez",
    "Müller",
    "Παπαδοπούλου",
    "Шевченко",
    "佐藤",
    "김",
    "Thị Minh Khai",
    "Lefèvre",
    "Kierkegaard",
    "Yılmaz",
    "Žižek",
    "Smith",
    "O'Connor",
    "García-Márquez",
    "Nakamura",
    "Sigurðardóttir",
    "Dubois",
    "Okonkwo",
    "Van der Berg",
    "Novák",
    "Al-Masri",
    "Mensah",
    "Château",
    "Andersson",
    "Etxeberria",
    "Murphy",
    "Chen",
)
JOB_TITLES = ("Cook", "Receptionist", "Picker", "Driver", "Agent", "Cashier", "Supervisor", "Baker")
PROJECTS = (
    "ACME Website",
    "Internal – Training",
    "Ærø Ferries",
    "Café Nord refit",
    "Night audit",
    "Stocktake Q3",
    "Client: Müller & Söhne",
    "Onboarding",
    "=Budget 2024",
    "+Overtime pool",
    "-Unassigned",
    "@Support rota",
    "Holiday cover",
    "Event: Fête de la Musique",
    "Deliveries",
    "Maintenance",
)
PLAIN_NOTES = (
    "",
    "",
    "",
    "Covered for a colleague",
    "Stayed late for the delivery",
    "Training session",
    "Inventory count, aisle 4",
    "Closed the till",
    "Short break only",
    "Morning shift, quiet",
    "Customer complaint handled",
    "Met the supplier, ordered flour",
    "Cleaned the cold room",
    "Worked from the Kraków site",
    "Überstunden genehmigt",
    "Réunion d'équipe à 9h",
    "Нічна зміна без пригод",
    "交代で休憩",
    "Fixed the printer (again)",
    "Half day, doctor's visit",
)


@dataclass(frozen=True)
class BenchWorkspace:
    workspace_id: int
    admin_id: int
    query_id: int
    rows: int


def database_url() -> str:
    return os.environ.get("BENCH_DATABASE_URL") or DEFAULT_DATABASE_URL


def libpq_url(url: str) -> str:
    """The same database as a plain libpq URL, for psycopg without SQLAlchemy."""
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


def ensure_database(url: str) -> None:
    """Create the benchmark database if it is missing (it is kept between runs)."""
    base, name = libpq_url(url).rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True, connect_timeout=5) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def bench_environment(storage_url: str) -> dict[str, str]:
    """Settings the app reads, pointed at the benchmark database and a scratch storage folder."""
    return {
        "DATABASE_URL": database_url(),
        "STORAGE_URL": storage_url,
        "SECRET_KEY": "bench-secret-key",
        "CREDENTIALS_KEY": "bench-credentials-key",
        "EXPORT_QUEUE": "bench-exports",
    }


def create_bench_app(storage_url: str) -> Flask:
    from app import create_app

    os.environ.update(bench_environment(storage_url))
    return create_app()


def create_job_app(storage_url: str) -> Flask:
    """The app a job runs in, as an RQ worker builds it before forking the job's work-horse
    (jobs/worker.py, `ready_to_fork`: no pages, the job modules loaded), so an export case holds
    what a worker's job holds."""
    from jobs.worker import ready_to_fork

    os.environ.update(bench_environment(storage_url))
    return ready_to_fork()


def prepare_schema(app: Flask) -> None:
    """Bring the schema up to date with the project's migrations."""
    from flask_migrate import upgrade

    with app.app_context():
        upgrade()


def prepare_workspace(app: Flask, rows: int) -> tuple[BenchWorkspace, bool]:
    """The workspace holding `rows` entries, and whether its rows had to be (re)built."""
    from app.domain.sources.catalog import get_dataset
    from app.extensions import db
    from app.models import ExportFile, Membership, Person, SavedQuery, TimesheetEntry, Workspace

    dataset = get_dataset(DATASET)
    assert dataset is not None
    with app.app_context():
        admin = db.session.execute(select(Person).where(Person.email == ADMIN_EMAIL)).scalar_one_or_none()
        if admin is None:
            # "!" is no password hash at all: nobody can sign in as the benchmark's admin.
            admin = Person(email=ADMIN_EMAIL, name="Benchmark Admin", password_hash="!")
            db.session.add(admin)
            db.session.flush()
        name = f"Benchmark: {rows:,} timesheet entries"
        workspace = db.session.execute(select(Workspace).where(Workspace.name == name)).scalar_one_or_none()
        if workspace is None:
            workspace = Workspace(name=name, status="live", sandbox=False)
            db.session.add(workspace)
            db.session.flush()
            db.session.add(
                Membership(
                    workspace_id=workspace.id,
                    person_id=admin.id,
                    role="admin",
                    grants=[],
                    dataset_grants=[DATASET],
                    team_scope=None,
                )
            )
        query = db.session.execute(
            select(SavedQuery).where(SavedQuery.workspace_id == workspace.id, SavedQuery.name == QUERY_NAME)
        ).scalar_one_or_none()
        if query is None:
            query = SavedQuery(
                workspace_id=workspace.id,
                owner_id=admin.id,
                name=QUERY_NAME,
                dataset=DATASET,
                columns=dataset.column_names,
                filters=[],
                sort=[],
                parameters=[],
                row_limit=None,
            )
            db.session.add(query)
        # Files left behind by an interrupted run; a finished run removes its own.
        db.session.execute(delete(ExportFile).where(ExportFile.workspace_id == workspace.id))
        db.session.commit()
        bench = BenchWorkspace(workspace.id, admin.id, query.id, rows)

        present = db.session.execute(
            select(func.count()).select_from(TimesheetEntry).where(TimesheetEntry.workspace_id == workspace.id)
        ).scalar_one()
        if present == rows:
            return bench, False
        _fill(db, workspace.id, rows)
        db.session.commit()
        with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            # Set hint bits and the visibility map now, so no measured run pays for them.
            conn.execute(text(f"VACUUM (FREEZE, ANALYZE) {dataset.table.name}"))
        return bench, True


def _fill(db, workspace_id: int, rows: int) -> None:
    from app.seed_data import HOSTILE_VALUES

    params = {"w": workspace_id}
    for table in ("data_timesheet_entries", "data_people", "data_teams"):
        db.session.execute(text(f"DELETE FROM {table} WHERE workspace_id = :w"), params)
    for code, name, location in TEAMS:
        db.session.execute(
            text(
                "INSERT INTO data_teams (workspace_id, code, name, location, created_at)"
                " VALUES (:w, :code, :name, :location, TIMESTAMPTZ '2021-03-01 09:00:00+00')"
            ),
            {**params, "code": code, "name": name, "location": location},
        )
    db.session.execute(
        text(
            """
            INSERT INTO data_people (workspace_id, team_id, team_name, full_name, email, job_title,
                                     hourly_rate, started_on, active)
            SELECT :w, t.id, t.name,
                   (CAST(:first AS text[]))[1 + g % cardinality(CAST(:first AS text[]))] || ' '
                       || (CAST(:last AS text[]))[1 + (g / 7) % cardinality(CAST(:last AS text[]))],
                   'employee' || g || '@example.test',
                   (CAST(:titles AS text[]))[1 + g % cardinality(CAST(:titles AS text[]))],
                   12.50 + (g % 40) * 0.75,
                   DATE '2015-01-05' + (g * 3) % 3000,
                   g % 17 <> 0
            FROM generate_series(0, 1999) AS g
            JOIN (SELECT id, name, row_number() OVER (ORDER BY id) - 1 AS k
                  FROM data_teams WHERE workspace_id = :w) AS t
              ON t.k = g % :teams
            """
        ),
        {
            **params,
            "first": list(FIRST_NAMES),
            "last": list(LAST_NAMES),
            "titles": list(JOB_TITLES),
            "teams": len(TEAMS),
        },
    )
    db.session.execute(
        text(
            """
            INSERT INTO data_timesheet_entries (workspace_id, team_id, team_name, person_id, person_name,
                                                work_date, hours, project, approved, note, recorded_at)
            SELECT :w, p.team_id, p.team_name, p.id, p.full_name,
                   d.work_date,
                   0.25 * (1 + (g * 7) % 48),
                   (CAST(:projects AS text[]))[1 + (g * 31) % cardinality(CAST(:projects AS text[]))],
                   g % 5 <> 0,
                   CASE WHEN g % 10 = 0
                        THEN (CAST(:hostile AS text[]))[1 + (g / 10) % cardinality(CAST(:hostile AS text[]))]
                        ELSE (CAST(:notes AS text[]))[1 + (g * 17) % cardinality(CAST(:notes AS text[]))]
                   END,
                   (d.work_date + TIME '17:00') AT TIME ZONE 'UTC' + (g % 7200) * INTERVAL '1 second'
            FROM generate_series(0, :rows - 1) AS g
            CROSS JOIN LATERAL (
                SELECT DATE '2023-01-02' + CAST(CAST(g AS bigint) * 730 / :rows AS int) AS work_date
            ) AS d
            JOIN (SELECT id, team_id, team_name, full_name, row_number() OVER (ORDER BY id) - 1 AS k
                  FROM data_people WHERE workspace_id = :w) AS p
              ON p.k = g % 2000
            """
        ),
        {
            **params,
            "rows": rows,
            "projects": list(PROJECTS),
            "hostile": list(HOSTILE_VALUES),
            "notes": list(PLAIN_NOTES),
        },
    )


def prepare_reports(app: Flask, bench: BenchWorkspace, sizes: tuple[int, ...]) -> dict[int, int]:
    """The same `table` report over the workspace's first `size` entries, for each size: {size: report id}.

    Each size is a saved query of the report's eight columns with that row limit (rows in id
    order, as every export reads them) and a report created through the reports service, so it is
    validated as the Reports page would validate it. They are made afresh on every run, so they
    always match the definition here.
    """
    from app.domain.people.access import current_context
    from app.extensions import db
    from app.models import Report, SavedQuery
    from app.services.sources.reports import create_report

    names = [name for name, _ in REPORT_COLUMNS]
    with app.app_context():
        access = current_context(bench.workspace_id, bench.admin_id)
        assert access is not None, "benchmark workspace has no administrator"
        # Reports first: a saved query that a report presents cannot be deleted.
        db.session.execute(delete(Report).where(Report.workspace_id == bench.workspace_id))
        db.session.execute(
            delete(SavedQuery).where(
                SavedQuery.workspace_id == bench.workspace_id, SavedQuery.name.startswith(REPORT_QUERY_PREFIX)
            )
        )
        db.session.commit()
        reports = {}
        for size in sizes:
            query = SavedQuery(
                workspace_id=bench.workspace_id,
                owner_id=bench.admin_id,
                name=f"{REPORT_QUERY_PREFIX}first {size:,}",
                dataset=DATASET,
                columns=names,
                filters=[],
                sort=[],
                parameters=[],
                row_limit=size,
            )
            db.session.add(query)
            db.session.commit()
            report = create_report(
                access,
                {
                    "name": f"Timesheet table, {size:,} rows",
                    "kind": "table",
                    "source_query_id": query.id,
                    "columns": [{"name": name, "width": width} for name, width in REPORT_COLUMNS],
                    "title": "Timesheet entries",
                    "subtitle": "Hours booked per employee, day and project — all teams",
                    "page_size": "A4",
                    "orientation": "portrait",
                    "show_filters": True,
                    "show_generated_at": True,
                },
            )
            reports[size] = report.id
        return reports


def sign_in_as_member(workspace_id: int, email: str, name: str, role: str, password_hash: str) -> None:
    """A person of the workspace (made if missing) with `role`, who reads the benchmark dataset
    and signs in with the password `password_hash` was made from. In an app context; the caller commits."""
    from app.extensions import db
    from app.models import Membership, Person

    person = db.session.scalar(select(Person).where(Person.email == email))
    if person is None:
        person = Person(email=email, name=name, password_hash="!")
        db.session.add(person)
        db.session.flush()
    person.password_hash = password_hash
    db.session.execute(
        delete(Membership).where(Membership.person_id == person.id, Membership.workspace_id == workspace_id)
    )
    db.session.add(
        Membership(
            workspace_id=workspace_id,
            person_id=person.id,
            role=role,
            grants=[],
            dataset_grants=[DATASET],
            team_scope=None,
        )
    )
