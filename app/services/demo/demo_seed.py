"""The demo seed: two workspaces, the people who sign in, and every product-wide dataset filled.

The Northwind administrator also owns a few starter saved queries and sample reports (one of
each kind) over them, validated exactly as the query builder and the Reports form validate, a
message template (a published version and a draft), and four schedules that show every state a
newcomer meets: an active daily query schedule to three recipients (two people and an outside
address), a weekly report schedule, one paused by a legacy import, and one whose last run failed
after two attempts, with its recipient rows failed and skipped (docs/schedules.md, "Demo data").

`flask seed-demo` and `flask serve-all` call `seed_demo`. Everything is written in one
transaction, so a seed that fails leaves nothing behind and a later run starts clean; once the
demo workspace exists, a run changes nothing. Choices come from a seeded random generator, so
the same rows come out on every machine for a given day; dates are relative to today so that
"last 7 days" filters always find data.

Hostile values (app/seed_data/hostile-values.txt) are in the data, where they test something,
but not where a newcomer looks first. Those that read as someone's name (Cyrillic, Hangul,
Devanagari…) are ordinary employees. The rest (formula-looking, padded, emoji, control
characters) belong to "test records": the employees of a team of their own, "Test records (edge
cases)", named with them, and one timesheet entry, shift and time-off request per hostile value
in the text columns. Its name sorts after every real team's, and its rows lie before what the
starter queries open with (the last 7 days, this week, pending requests), so lists and first
previews show ordinary data; the saved query and report "Test records (edge cases)" show them on
purpose, and the workspace export packages them with everything else.

The timesheet entries are the large dataset (`rows` of them, millions with SEED_ROWS). They are
generated in batches and streamed with COPY on PostgreSQL, or inserted with executemany
elsewhere (SQLite), so memory stays flat whatever the row count.
"""

from __future__ import annotations

import itertools
import random
import secrets
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

from flask import current_app
from psycopg import sql
from sqlalchemy import Table, insert, select

from app.domain.catalog import DATASETS
from app.domain.query_spec import validate_definition
from app.domain.report_spec import validate_report
from app.domain.timetable import Timetable, next_occurrence, next_occurrences
from app.extensions import db
from app.models import (
    CommunicationTemplate,
    CommunicationTemplateVersion,
    Membership,
    Person,
    Report,
    SavedQuery,
    Schedule,
    ScheduleRecipient,
    ScheduleRun,
    ScheduleRunAttempt,
    ScheduleUnsubscribe,
    Shift,
    Team,
    TeamMember,
    TimeOffRequest,
    TimesheetEntry,
    Workspace,
)
from app.models.schedule import (
    DeliveryStatus,
    PauseReason,
    RecipientDelivery,
    RunStatus,
    RunTrigger,
    ScheduleStatus,
    SkipReason,
    TemplateStatus,
)
from app.seed_data import HOSTILE_VALUES, reads_as_a_name
from app.services.platform import audit
from app.services.platform.authentication import hash_password
from app.services.schedules.legacy_import import IMPORT_ACTION
from app.services.sources.reports import STORED_FIELDS

DEMO_WORKSPACE = "Northwind Care"
OTHER_WORKSPACE = "Globex Clinics"
ALL_DATASETS = tuple(DATASETS)
# The scoped member is also kept away from the people dataset (pay rates, emails).
SCOPED_MEMBER_DATASETS = tuple(d for d in ALL_DATASETS if d != "people")
SCOPED_TEAM_CODE = "ICU"
# Real employees; the main workspace also has its test records (module docstring).
EMPLOYEES_PER_WORKSPACE = 60
# The second workspace gets a tenth of the main workspace's timesheet entries.
OTHER_WORKSPACE_ROW_DIVISOR = 10
TIMESHEET_DAYS = 90
BATCH_SIZE = 10_000
RANDOM_SEED = 20240611


@dataclass(frozen=True)
class _Login:
    email: str
    password: str
    name: str
    description: str


_ADMIN = _Login(
    "admin@northwind.example",
    "demo-admin",
    "Amira Haddad",
    "Northwind Care administrator: every dataset, manages schedules, may add external recipients",
)
_MEMBER = _Login(
    "member@northwind.example",
    "demo-member",
    "Kenji Watanabe",
    "Northwind Care member: every dataset, every team's rows",
)
_SCOPED = _Login(
    "scoped@northwind.example",
    "demo-scoped",
    "Olivia Bennett",
    "Northwind Care member: Intensive Care Unit rows only; every dataset except People",
)
_GLOBEX = _Login(
    "member@globex.example",
    "demo-globex",
    "Mateo García",
    "Globex Clinics member (other workspace): every dataset, every team's rows",
)
_STAFF = _Login(
    "staff@rhythm.example",
    "demo-staff",
    "Sam Okafor",
    "Rhythm staff (staff.view, staff.execute); member of no workspace",
)
_LOGINS = (_ADMIN, _MEMBER, _SCOPED, _GLOBEX, _STAFF)

DEMO_LOGINS: list[tuple[str, str, str]] = [(login.email, login.password, login.description) for login in _LOGINS]
DEMO_ADMIN_EMAIL = _ADMIN.email
DEMO_MEMBER_EMAIL = _MEMBER.email


@dataclass(frozen=True)
class _WorkspacePlan:
    name: str
    email_domain: str
    # (code, name, location, relative size)
    teams: tuple[tuple[str, str, str, int], ...]
    # (job title, lowest hourly rate, highest hourly rate, relative frequency)
    jobs: tuple[tuple[str, float, float, int], ...]
    projects: tuple[str, ...]
    # (code, name, location) of the team of test records, which only the main workspace has.
    test_team: tuple[str, str, str] | None = None


# The team, saved query and report of the test records (module docstring).
TEST_RECORDS_NAME = "Test records (edge cases)"
_TEST_TEAM = ("TEST", TEST_RECORDS_NAME, "Not a place: values every export must carry intact")
# The test records' query and report were made this long before the starter ones, so a list in
# "recently changed" order shows them last.
_TEST_RECORDS_AGE = timedelta(days=30)

_NORTHWIND = _WorkspacePlan(
    name=DEMO_WORKSPACE,
    email_domain="northwind.example",
    teams=(
        ("ICU", "Intensive Care Unit", "Leeds General Infirmary", 3),
        ("ED", "Emergency Department", "Leeds General Infirmary", 4),
        ("MAT", "Maternity", "St James's Hospital", 2),
        ("ORTH", "Orthopaedics & Trauma", "Harrogate District Hospital", 2),
        ("PAED", "Paediatrics", "St James's Hospital", 2),
        ("COMM", "Community Nursing", "Wakefield", 2),
    ),
    jobs=(
        ("Staff nurse", 19.5, 24.0, 10),
        ("Senior staff nurse", 24.0, 29.0, 4),
        ("Charge nurse", 27.0, 32.0, 2),
        ("Healthcare assistant", 12.5, 15.0, 6),
        ("Midwife", 22.0, 28.0, 2),
        ("Junior doctor", 20.0, 27.0, 3),
        ("Consultant", 55.0, 85.0, 1),
        ("Paramedic", 20.0, 25.0, 2),
        ("Ward clerk", 12.0, 13.5, 1),
    ),
    projects=(
        "Ward cover",
        "Patient transport",
        "Night cover",
        "Bank shift",
        "Training: manual handling",
        "Training: basic life support",
        "Clinical audit 2025",
        "Discharge planning",
        "Cost centre 4410",
        "Cost centre 4420",
        "Vaccination clinic",
        "Home visits",
        "On-call",
    ),
    test_team=_TEST_TEAM,
)

_GLOBEX_PLAN = _WorkspacePlan(
    name=OTHER_WORKSPACE,
    email_domain="globex.example",
    teams=(
        ("DEN", "Dental Surgery", "Lyon Part-Dieu", 3),
        ("PHYS", "Physiotherapy", "Lyon Confluence", 2),
        ("RAD", "Radiology", "Villeurbanne", 2),
        ("ADM", "Reception & Admin", "Lyon Part-Dieu", 1),
    ),
    jobs=(
        ("Dentist", 38.0, 60.0, 2),
        ("Dental nurse", 14.0, 17.0, 4),
        ("Physiotherapist", 23.0, 30.0, 3),
        ("Radiographer", 23.0, 29.0, 3),
        ("Receptionist", 12.0, 14.0, 2),
        ("Practice manager", 26.0, 33.0, 1),
    ),
    projects=(
        "Clinic session",
        "Emergency appointments",
        "Sterilisation",
        "Imaging backlog",
        "Cost centre 7100",
        "Training: radiation safety",
        "Front desk",
        "Home exercise programmes",
    ),
)

# (full name, romanised email local part): many cultures and scripts, as people really write them.
_NAME_POOL: tuple[tuple[str, str], ...] = (
    ("Olivia Thompson", "olivia.thompson"),
    ("James O'Connor", "james.oconnor"),
    ("Siobhán Ní Bhriain", "siobhan.nibhriain"),
    ("Callum MacLeod", "callum.macleod"),
    ("Élodie Marchand", "elodie.marchand"),
    ("François Lefèvre", "francois.lefevre"),
    ("Jürgen Weiß", "juergen.weiss"),
    ("Anja Müller", "anja.mueller"),
    ("María José Fernández", "mariajose.fernandez"),
    ("José Ángel Núñez", "joseangel.nunez"),
    ("João Gonçalves", "joao.goncalves"),
    ("Giulia Rossi", "giulia.rossi"),
    ("Małgorzata Wiśniewska", "malgorzata.wisniewska"),
    ("Søren Jørgensen", "soren.jorgensen"),
    ("Åsa Lindqvist", "asa.lindqvist"),
    ("Aino Mäkinen", "aino.makinen"),
    ("Zsófia Kovács", "zsofia.kovacs"),
    ("Jiří Dvořák", "jiri.dvorak"),
    ("Ayşe Yılmaz", "ayse.yilmaz"),
    ("Guðrún Þórsdóttir", "gudrun.thorsdottir"),
    ("Daan van der Berg", "daan.vanderberg"),
    ("Mary-Kate O'Sullivan-Smith", "marykate.osullivan"),
    ("Maximiliano Alejandro de la Santísima Trinidad Rodríguez", "maximiliano.rodriguez"),
    ("Анна Петрова", "anna.petrova"),
    ("Сергей Иванов", "sergei.ivanov"),
    ("Оксана Шевченко", "oksana.shevchenko"),
    ("Батбаяр Дорж", "batbayar.dorj"),
    ("Ελένη Νικολάου", "eleni.nikolaou"),
    ("Γιάννης Οικονόμου", "giannis.oikonomou"),
    ("王秀英", "wang.xiuying"),
    ("李伟", "li.wei"),
    ("陳美玲", "chen.meiling"),
    ("佐藤 花子", "sato.hanako"),
    ("鈴木 一郎", "suzuki.ichiro"),
    ("이서연", "lee.seoyeon"),
    ("박지훈", "park.jihoon"),
    ("فاطمة الزهراء", "fatima.alzahra"),
    ("يوسف العلي", "yousef.alali"),
    ("نگار رضایی", "negar.rezaei"),
    ("דוד לוי", "david.levi"),
    ("מרים אברהם", "miriam.avraham"),
    ("Trần Văn Hùng", "tran.vanhung"),
    ("Phạm Thu Hà", "pham.thuha"),
    ("प्रिया शर्मा", "priya.sharma"),
    ("Arjun Patel", "arjun.patel"),
    ("கவிதா ராஜன்", "kavitha.rajan"),
    ("สมชาย ใจดี", "somchai.jaidee"),
    ("ნინო ბერიძე", "nino.beridze"),
    ("Արամ Խաչատրյան", "aram.khachatryan"),
    ("Chidinma Okonkwo", "chidinma.okonkwo"),
    ("Oluwaseun Adeyemi", "oluwaseun.adeyemi"),
    ("Ngozi Eze", "ngozi.eze"),
    ("Wanjiru Kamau", "wanjiru.kamau"),
    ("Kwame Mensah", "kwame.mensah"),
    ("Aroha Ngata", "aroha.ngata"),
    ("Tāne Parata", "tane.parata"),
    ("Kalani Akana", "kalani.akana"),
    ("Lakshmi Narayanan", "lakshmi.narayanan"),
    ("Nurul Huda binti Ahmad", "nurulhuda.ahmad"),
    ("Sione Tupou", "sione.tupou"),
    ("Alex 🌈 Rivera", "alex.rivera"),
    ("Grace Thompson", "grace.thompson"),
    ("Liam Walsh", "liam.walsh"),
    ("Emma Clarke", "emma.clarke"),
    ("Noah Schmidt", "noah.schmidt"),
    ("Chloé Dubois", "chloe.dubois"),
    ("Lucas Martin", "lucas.martin"),
    ("Ingrid Hansen", "ingrid.hansen"),
    ("Pedro Alves", "pedro.alves"),
    ("Hana Novák", "hana.novak"),
    ("Tomás Ó Briain", "tomas.obriain"),
    ("Freya Campbell", "freya.campbell"),
)

# Hostile values someone could really be called: ordinary employees of the main workspace.
_HOSTILE_PERSON_NAMES = tuple(value for value in HOSTILE_VALUES if reads_as_a_name(value))
# Hostile values someone could have typed as a name but no one is called (formula-looking, padded,
# emoji): the test records' names. The ones with control characters are only in their rows' text.
_TEST_RECORD_NAMES = tuple(
    value
    for value in HOSTILE_VALUES
    if not reads_as_a_name(value)
    and not any(c in value for c in "\t\r\n")
    and (value[:1] in "=+-@'" or not value.isascii() or value != value.strip())
)

# Free text, mostly empty: an empty string's share of the list is the share of rows without a note.
_TIMESHEET_NOTES = ("",) * 16 + (
    "Covered for a colleague",
    "Overtime agreed with the ward manager",
    "Stayed late for handover",
    "Nachtdienst übernommen",
    "交代勤務",
    "Remplacement de dernière minute",
    "Badge reader was down",
    "Training day, no patients",
)
_SHIFT_NOTES = ("",) * 12 + (
    "Handover at 07:00 sharp",
    "Bank staff requested",
    "Covering sickness",
    "Fire warden on duty",
    "Nuit calme",
    "Bitte Schlüssel abgeben",
)
_TIME_OFF_REASONS = {
    "annual": (
        "",
        "",
        "Family wedding in Kraków",
        "School half-term",
        "Moving house",
        "春节 with family",
        "Eid al-Fitr",
        "Hiking in the Alps",
        "Diwali",
    ),
    "sick": ("", "", "Flu", "Migraine", "Back pain", "Child is ill"),
    "parental": ("Parental leave", "Adoption leave", "Shared parental leave"),
    "unpaid": ("", "Personal reasons", "Caring for a relative", "Visa appointment abroad"),
}
_TIME_OFF_KINDS = ("annual", "sick", "parental", "unpaid")
_TIME_OFF_KIND_WEIGHTS = (60, 25, 4, 11)
# (name, start, length in minutes, unpaid break in minutes)
_SHIFT_PATTERNS = (
    ("Early", time(7, 0), 8 * 60, 30),
    ("Late", time(14, 0), 8 * 60, 30),
    ("Long day", time(7, 30), 12 * 60 + 30, 60),
    ("Night", time(20, 45), 10 * 60, 45),
)
# Hours to the quarter hour, weighted towards ordinary shift lengths.
_HOURS = tuple(Decimal(h) for h in ("7.50", "8.00", "12.00", "4.00", "6.25", "10.00", "11.50", "2.75", "0.25"))
_HOURS_CUM_WEIGHTS = tuple(itertools.accumulate((30, 25, 15, 10, 6, 6, 5, 2, 1)))
# How long after the end of the work day an entry is typically recorded.
_ONE_DAY = timedelta(days=1)
_RECORD_DELAYS = tuple(timedelta(hours=17, minutes=m) for m in range(0, 24 * 60, 7))


@dataclass(frozen=True)
class _Worker:
    """An employee as the dataset rows carry them: ids with their denormalised names."""

    team_id: int
    team_name: str
    person_id: int
    person_name: str
    job_title: str


def seed_demo(rows: int) -> bool:
    """Create the demo workspaces with `rows` timesheet entries in the main one; False if already there."""
    if rows < 0:
        raise ValueError("rows must not be negative")
    if db.session.execute(select(Workspace.id).where(Workspace.name == DEMO_WORKSPACE)).first() is not None:
        return False
    try:
        _seed_everything(rows)
        db.session.commit()
    except BaseException:
        db.session.rollback()
        raise
    return True


def _seed_everything(rows: int) -> None:
    now = datetime.now(UTC)
    # UTC, the same day file admission substitutes relative date ranges on.
    today = now.date()
    rng = random.Random(RANDOM_SEED)

    northwind = Workspace(
        name=DEMO_WORKSPACE, status="live", time_zone="Europe/London", created_at=now - timedelta(days=900)
    )
    globex = Workspace(name=OTHER_WORKSPACE, status="live", created_at=now - timedelta(days=400))
    people = {login: _person(login) for login in _LOGINS}
    people[_STAFF].is_staff = True
    people[_STAFF].staff_permissions = ["staff.view", "staff.execute"]
    db.session.add_all([northwind, globex, *people.values()])
    db.session.flush()

    northwind_teams, test_team = _add_teams(northwind, _NORTHWIND, now)
    globex_teams, _ = _add_teams(globex, _GLOBEX_PLAN, now)
    scoped_team = next(team for team in northwind_teams if team.code == SCOPED_TEAM_CODE)
    db.session.add_all(
        [
            Membership(
                workspace_id=northwind.id,
                person_id=people[_ADMIN].id,
                role="admin",
                grants=["schedules.manage", "schedules.external_recipients"],
                dataset_grants=list(ALL_DATASETS),
            ),
            Membership(
                workspace_id=northwind.id,
                person_id=people[_MEMBER].id,
                role="member",
                grants=[],
                dataset_grants=list(ALL_DATASETS),
                team_scope=None,
            ),
            Membership(
                workspace_id=northwind.id,
                person_id=people[_SCOPED].id,
                role="member",
                grants=[],
                dataset_grants=list(SCOPED_MEMBER_DATASETS),
                team_scope=[scoped_team.id],
            ),
            Membership(
                workspace_id=globex.id,
                person_id=people[_GLOBEX].id,
                role="member",
                grants=[],
                dataset_grants=list(ALL_DATASETS),
                team_scope=None,
            ),
        ]
    )
    sampled = _sample_names(rng, EMPLOYEES_PER_WORKSPACE - len(_HOSTILE_PERSON_NAMES), taken=_HOSTILE_PERSON_NAMES)
    northwind_names = [*_HOSTILE_PERSON_NAMES, *sampled]
    globex_names = _sample_names(rng, EMPLOYEES_PER_WORKSPACE)
    northwind_workers = _add_employees(rng, northwind, _NORTHWIND, northwind_teams, northwind_names, today)
    globex_workers = _add_employees(rng, globex, _GLOBEX_PLAN, globex_teams, globex_names, today)
    test_records = _add_test_records(northwind, _NORTHWIND, test_team, today)
    queries = _add_saved_queries(northwind, people[_ADMIN], now)
    db.session.flush()
    reports = _add_sample_reports(northwind, people[_ADMIN], queries, now)
    db.session.flush()
    template_version = _add_template(northwind, people[_ADMIN], now)
    _add_schedules(northwind, people, queries, reports, template_version, now)

    # The test records' entries count towards the main workspace's `rows` (all of them, if fewer).
    test_entries = min(rows, len(HOSTILE_VALUES))
    for workspace, plan, workers, entries, edge_cases in (
        (northwind, _NORTHWIND, northwind_workers, rows - test_entries, test_records),
        (globex, _GLOBEX_PLAN, globex_workers, rows // OTHER_WORKSPACE_ROW_DIVISOR, []),
    ):
        _insert_rows(
            Shift.__table__,
            _SHIFT_COLUMNS,
            [_shift_rows(rng, workspace.id, workers, today), _test_shift_rows(workspace.id, edge_cases, today)],
        )
        _insert_rows(
            TimeOffRequest.__table__,
            _TIME_OFF_COLUMNS,
            [
                _time_off_rows(rng, workspace.id, workers, today, now),
                _test_time_off_rows(workspace.id, edge_cases, today),
            ],
        )
        _insert_rows(
            TimesheetEntry.__table__,
            _TIMESHEET_COLUMNS,
            itertools.chain(
                _timesheet_batches(rng, workspace.id, workers, plan.projects, entries, now),
                [_test_timesheet_rows(workspace.id, edge_cases, test_entries, now)],
            ),
        )


def _person(login: _Login) -> Person:
    return Person(email=login.email, name=login.name, password_hash=hash_password(login.password))


def _sample_names(rng: random.Random, count: int, taken: Sequence[str] = ()) -> list[str]:
    """`count` different names of the pool, none of them `taken` already."""
    return [name for name, _ in rng.sample([entry for entry in _NAME_POOL if entry[0] not in taken], count)]


def _add_teams(workspace: Workspace, plan: _WorkspacePlan, now: datetime) -> tuple[list[Team], Team | None]:
    """The plan's teams, and its team of test records if it has one (apart: no real employee joins it)."""
    places = [(code, name, location) for code, name, location, _size in plan.teams]
    teams = [
        Team(
            workspace_id=workspace.id,
            code=code,
            name=name,
            location=location,
            created_at=(now - timedelta(days=800 - 37 * i)).replace(microsecond=0),
        )
        for i, (code, name, location) in enumerate([*places, *filter(None, [plan.test_team])])
    ]
    db.session.add_all(teams)
    db.session.flush()
    if plan.test_team is None:
        return teams, None
    return teams[:-1], teams[-1]


def _add_employees(
    rng: random.Random, workspace: Workspace, plan: _WorkspacePlan, teams: list[Team], names: list[str], today: date
) -> list[_Worker]:
    """The workspace's employees (every team gets at least three); returns the active ones."""
    emails = dict(_NAME_POOL)
    sizes = [size for *_rest, size in plan.teams]
    job_weights = [weight for *_rest, weight in plan.jobs]
    employees: list[TeamMember] = []
    for i, full_name in enumerate(names):
        team = teams[i % len(teams)] if i < 3 * len(teams) else rng.choices(teams, weights=sizes)[0]
        title, low, high, _weight = rng.choices(plan.jobs, weights=job_weights)[0]
        local = emails.get(full_name) or f"employee.{len(employees) + 1:03d}"
        employees.append(
            TeamMember(
                workspace_id=workspace.id,
                team_id=team.id,
                team_name=team.name,
                full_name=full_name,
                email=f"{local}@{plan.email_domain}",
                job_title=title,
                hourly_rate=Decimal(str(round(rng.uniform(low, high) * 4) / 4)).quantize(Decimal("0.01")),
                started_on=today - timedelta(days=rng.randrange(30, 15 * 365)),
                active=rng.random() >= 0.05,
            )
        )
    db.session.add_all(employees)
    db.session.flush()
    return [_Worker(e.team_id, e.team_name, e.id, e.full_name, e.job_title) for e in employees if e.active]


def _add_test_records(workspace: Workspace, plan: _WorkspacePlan, team: Team | None, today: date) -> list[_Worker]:
    """The test records: one active employee of the test team per hostile value no one is called."""
    if team is None:
        return []
    records = [
        TeamMember(
            workspace_id=workspace.id,
            team_id=team.id,
            team_name=team.name,
            full_name=name,
            email=f"test.record.{number:02d}@{plan.email_domain}",
            job_title="Test record",
            hourly_rate=Decimal("10.00"),
            started_on=today - timedelta(days=365),
            active=True,
        )
        for number, name in enumerate(_TEST_RECORD_NAMES, start=1)
    ]
    db.session.add_all(records)
    db.session.flush()
    return [_Worker(r.team_id, r.team_name, r.id, r.full_name, r.job_title) for r in records]


_SAVED_QUERIES: tuple[tuple[str, dict], ...] = (
    (
        "Approved hours last 7 days",
        {
            "dataset": "timesheet_entries",
            "columns": ["work_date", "person_name", "team_name", "project", "hours", "note"],
            "filters": [{"column": "approved", "op": "is_true"}],
            "sort": [{"column": "work_date", "direction": "desc"}, {"column": "person_name", "direction": "asc"}],
            "parameters": [{"column": "work_date", "range": "last_7_days"}],
        },
    ),
    (
        "Team roster",
        {
            "dataset": "people",
            "columns": ["team_name", "full_name", "job_title", "email", "started_on"],
            "filters": [{"column": "active", "op": "is_true"}],
            "sort": [{"column": "team_name", "direction": "asc"}, {"column": "full_name", "direction": "asc"}],
        },
    ),
    (
        "Pending time off",
        {
            "dataset": "time_off_requests",
            "columns": ["person_name", "team_name", "kind", "starts_on", "ends_on", "days", "reason", "submitted_at"],
            "filters": [{"column": "status", "op": "eq", "value": "pending"}],
            "sort": [{"column": "starts_on", "direction": "asc"}],
        },
    ),
    (
        "Shifts this week",
        {
            "dataset": "shifts",
            "columns": ["starts_at", "ends_at", "person_name", "team_name", "role", "break_minutes", "notes"],
            "sort": [{"column": "starts_at", "direction": "asc"}],
            "parameters": [{"column": "starts_at", "range": "this_week"}],
        },
    ),
    (
        TEST_RECORDS_NAME,
        {
            "dataset": "timesheet_entries",
            "columns": ["work_date", "person_name", "project", "hours", "note"],
            "filters": [{"column": "team_name", "op": "eq", "value": TEST_RECORDS_NAME}],
            "sort": [{"column": "work_date", "direction": "asc"}],
        },
    ),
)


def _add_saved_queries(workspace: Workspace, owner: Person, now: datetime) -> dict[str, SavedQuery]:
    """The administrator's starter queries, in the normal form the query builder saves; by name."""
    max_rows = current_app.config["SETTINGS"].max_export_rows
    queries = {}
    for name, definition in _SAVED_QUERIES:
        normal = validate_definition(definition, max_rows)
        changed = now - _TEST_RECORDS_AGE if name == TEST_RECORDS_NAME else now
        queries[name] = SavedQuery(
            workspace_id=workspace.id,
            owner_id=owner.id,
            name=name,
            dataset=normal["dataset"],
            columns=normal["columns"],
            filters=normal["filters"],
            sort=normal["sort"],
            parameters=normal["parameters"],
            row_limit=normal["row_limit"],
            created_at=changed,
            updated_at=changed,
        )
    db.session.add_all(queries.values())
    return queries


# (saved query presented, report definition as the Reports form would post it): one of each kind.
_SAMPLE_REPORTS: tuple[tuple[str, dict], ...] = (
    (
        "Approved hours last 7 days",
        {
            "name": "Hours by team",
            "kind": "coded",
            "columns": [
                {"name": "work_date", "width": 14},
                {"name": "person_name", "width": 34},
                {"name": "project", "width": None},
                {"name": "hours", "width": 12},
            ],
            "code_column": "team_name",
            # The code as the report prints it (the team's name), described by where the team works.
            "code_descriptions": {name: location for _code, name, location, *_size in (*_NORTHWIND.teams, _TEST_TEAM)},
            "title": "Approved hours by team",
            "subtitle": "The last 7 days, with each team's subtotal",
            "page_size": "A4",
            "orientation": "portrait",
            "show_filters": True,
            "show_generated_at": True,
        },
    ),
    (
        "Team roster",
        {
            "name": "Team roster",
            "kind": "table",
            "columns": [
                {"name": "team_name", "width": 22},
                {"name": "full_name", "width": 28},
                {"name": "job_title", "width": 20},
                {"name": "email", "width": None},
                {"name": "started_on", "width": 12},
            ],
            "title": "Team roster",
            "subtitle": "Active employees by team",
            "page_size": "A4",
            "orientation": "landscape",
            "show_filters": False,
            "show_generated_at": True,
        },
    ),
    (
        "Pending time off",
        {
            "name": "Pending time off by team",
            "kind": "summary",
            "summary": {
                "group_column": "team_name",
                "figures": [
                    {"function": "count", "label": "Requests waiting"},
                    {"function": "sum", "column": "days", "label": "Days asked for"},
                    {"function": "avg", "column": "days", "label": "Average request (days)"},
                ],
            },
            "title": "Pending time off by team",
            "subtitle": "Requests waiting for a decision",
            "page_size": "A4",
            "orientation": "portrait",
            "show_filters": True,
            "show_generated_at": True,
        },
    ),
    (
        TEST_RECORDS_NAME,
        {
            "name": TEST_RECORDS_NAME,
            "kind": "table",
            "columns": [
                {"name": "work_date", "width": 14},
                {"name": "person_name", "width": 30},
                {"name": "project", "width": None},
                {"name": "hours", "width": 10},
                {"name": "note", "width": None},
            ],
            "title": TEST_RECORDS_NAME,
            "subtitle": "Every hostile value, as each file must carry it",
            "page_size": "A4",
            "orientation": "landscape",
            "show_filters": True,
            "show_generated_at": True,
        },
    ),
)


def _add_sample_reports(
    workspace: Workspace, owner: Person, queries: dict[str, SavedQuery], now: datetime
) -> dict[str, Report]:
    """The administrator's sample reports, in the normal form the Reports form saves; by name."""
    reports = {}
    for query_name, definition in _SAMPLE_REPORTS:
        query = queries[query_name]
        checked = validate_report(definition, query.dataset, list(query.columns))
        changed = now - _TEST_RECORDS_AGE if query_name == TEST_RECORDS_NAME else now
        reports[checked["name"]] = Report(
            workspace_id=workspace.id,
            owner_id=owner.id,
            source_query_id=query.id,
            version=1,
            created_at=changed,
            updated_at=changed,
            **{key: checked[key] for key in STORED_FIELDS},
        )
    db.session.add_all(reports.values())
    return reports


TEMPLATE_NAME = "Scheduled file"
_TEMPLATE_VERSIONS = (
    (
        "Your scheduled file from Northwind Care",
        "Hello,\n\nThe file below was produced on its schedule. The download link works for 30 days.\n\n"
        "Northwind Care workforce office",
    ),
    (
        "Your Northwind Care file is ready",
        "Hello,\n\nYour regular file is ready. Download it within 30 days; after that, ask the schedule's "
        "owner for a new one.\n\nNorthwind Care workforce office",
    ),
)


def _add_template(workspace: Workspace, author: Person, now: datetime) -> CommunicationTemplateVersion:
    """The workspace's message template: version 1 published, version 2 a draft. Returns version 1."""
    template = CommunicationTemplate(
        workspace_id=workspace.id, name=TEMPLATE_NAME, created_by_id=author.id, created_at=now - timedelta(days=60)
    )
    published_on = now - timedelta(days=59)
    (subject_1, body_1), (subject_2, body_2) = _TEMPLATE_VERSIONS
    template.versions = [
        CommunicationTemplateVersion(
            number=1,
            status=TemplateStatus.PUBLISHED,
            subject=subject_1,
            body=body_1,
            created_by_id=author.id,
            created_at=published_on,
            published_at=published_on,
        ),
        CommunicationTemplateVersion(
            number=2,
            status=TemplateStatus.DRAFT,
            subject=subject_2,
            body=body_2,
            created_by_id=author.id,
            created_at=now - timedelta(days=2),
        ),
    ]
    db.session.add(template)
    db.session.flush()
    return template.versions[0]


# Outside addresses (the administrator holds the external-recipients grant); contoso.example is
# a reserved domain, so nothing is ever delivered there.
PAYROLL_ADDRESS = "payroll@contoso.example"
HR_ARCHIVE_ADDRESS = "hr-archive@contoso.example"
HR_RECORDS_ADDRESS = "hr-records@contoso.example"
LEGACY_REF = "LEGACY-0042"


def _add_schedules(
    workspace: Workspace,
    people: dict[_Login, Person],
    queries: dict[str, SavedQuery],
    reports: dict[str, Report],
    template_version: CommunicationTemplateVersion,
    now: datetime,
) -> None:
    """Four schedules of the administrator, one per state a newcomer should see (module docstring)."""
    admin, member, scoped = people[_ADMIN], people[_MEMBER], people[_SCOPED]
    max_rows = current_app.config["SETTINGS"].max_export_rows
    created = now - timedelta(days=30)

    def schedule(name: str, timetable: dict, recipients: list[Person | str], **fields) -> Schedule:
        checked = Timetable.from_json(timetable, workspace.time_zone)
        row = Schedule(
            workspace_id=workspace.id,
            name=name,
            owner_id=admin.id,
            timetable=checked.to_json(),
            next_occurrence_at=next_occurrence(checked, now),
            created_at=created,
            updated_at=created,
            **{"template_version_id": template_version.id, **fields},
        )
        row.recipients = [
            ScheduleRecipient(position=position, person_id=recipient.id, address_key=f"person:{recipient.id}")
            if isinstance(recipient, Person)
            else ScheduleRecipient(position=position, email=recipient, address_key=recipient.lower())
            for position, recipient in enumerate(recipients)
        ]
        db.session.add(row)
        return row

    def query_source(name: str) -> dict:
        query = queries[name]
        return {
            "kind": "query",
            "source_query_id": query.id,
            "query_version": query.version,
            "query_definition": validate_definition(query.definition(), max_rows),
            "heading": "names",
        }

    def report_source(name: str) -> dict:
        report = reports[name]
        return {"kind": "report", "report_id": report.id, "report_version_seen": report.version, "heading": "labels"}

    schedule(
        "Approved hours, every morning",
        {"kind": "daily", "time": "07:00"},
        [member, scoped, PAYROLL_ADDRESS],
        format="csv",
        custom_message="Yesterday's approved hours are in the file; payroll closes on the 25th.",
        **query_source("Approved hours last 7 days"),
    )
    schedule(
        "Hours by team, Monday PDF",
        {"kind": "weekly", "days": ["mon"], "time": "08:00"},
        [admin, member],
        format="pdf",
        custom_message="The weekly hours by team, for the Monday huddle.",
        **report_source("Hours by team"),
    )
    imported = schedule(
        "Pending time off (old system)",
        {"kind": "monthly", "day": 1, "time": "09:00"},
        [admin, HR_RECORDS_ADDRESS],
        format="xlsx",
        status=ScheduleStatus.PAUSED,
        pause_reason=PauseReason.LEGACY_IMPORT,
        paused_at=now - timedelta(days=1),
        legacy_ref=LEGACY_REF,
        template_version_id=None,
        custom_message="Pending requests, as the old scheduling system sent them on the 1st.",
        **query_source("Pending time off"),
    )
    failing = schedule(
        "Team roster for HR, Fridays",
        {"kind": "weekly", "days": ["fri"], "time": "16:00"},
        [member, HR_ARCHIVE_ADDRESS],
        format="xlsx",
        failure_streak=1,
        custom_message="The roster as it stands at the end of the week.",
        **report_source("Team roster"),
    )
    db.session.flush()
    audit.record(
        workspace_id=workspace.id,
        actor_id=None,
        action=IMPORT_ACTION,
        subject_type="schedule",
        subject_id=imported.id,
        reason="Imported from the old scheduling system; paused until the old delivery is switched off.",
        details={"legacy_ref": LEGACY_REF, "entry": 1, "file": "demo seed"},
    )
    _add_failed_run(workspace, failing, member, now)


def _add_failed_run(workspace: Workspace, schedule: Schedule, member: Person, now: datetime) -> None:
    """The schedule's last occurrence: a transient failure, a retry that failed for good, and its
    recipient rows (one failed for want of a file, one skipped because it unsubscribed)."""
    timetable = Timetable.from_json(schedule.timetable, workspace.time_zone)
    occurrence = max(
        instant
        for instant in next_occurrences(timetable, now - timedelta(days=8), 8)
        if instant <= now - timedelta(hours=1)
    )
    schedule.last_occurrence_at = occurrence
    first_end = occurrence + timedelta(seconds=38)
    retry_start = first_end + timedelta(minutes=2)
    settled = retry_start + timedelta(seconds=3)
    detail = (
        "The report named a column its saved query no longer had; the report has been corrected since, "
        "and the next run uses it."
    )
    run = ScheduleRun(
        workspace_id=workspace.id,
        schedule_id=schedule.id,
        occurrence_at=occurrence,
        trigger=RunTrigger.TIMETABLE,
        skipped_occurrences=[],
        status=RunStatus.FAILED,
        attempt_count=2,
        created_at=occurrence,
        dispatched_at=occurrence + timedelta(seconds=1),
        started_at=occurrence + timedelta(seconds=2),
        completed_at=settled,
        failure_code="invalid_request",
        failure_detail=detail,
    )
    run.attempts = [
        ScheduleRunAttempt(
            number=1,
            started_at=occurrence + timedelta(seconds=2),
            ended_at=first_end,
            outcome="failed",
            error_code="storage_error",
            error_detail="The file store did not answer in time; retried.",
        ),
        ScheduleRunAttempt(
            number=2,
            started_at=retry_start,
            ended_at=settled,
            outcome="failed",
            error_code="invalid_request",
            error_detail=detail,
        ),
    ]
    run.deliveries = [
        RecipientDelivery(
            address_key=f"person:{member.id}",
            person_id=member.id,
            status=DeliveryStatus.FAILED,
            last_error="Not sent: the run failed, so there was no file to link to.",
            link_nonce=secrets.token_urlsafe(32),
            created_at=settled,
        ),
        RecipientDelivery(
            address_key=HR_ARCHIVE_ADDRESS,
            email=HR_ARCHIVE_ADDRESS,
            status=DeliveryStatus.SKIPPED,
            skip_reason=SkipReason.RECIPIENT_UNSUBSCRIBED,
            link_nonce=secrets.token_urlsafe(32),
            created_at=settled,
        ),
    ]
    db.session.add_all(
        [
            ScheduleUnsubscribe(
                schedule_id=schedule.id, address_key=HR_ARCHIVE_ADDRESS, created_at=occurrence - timedelta(days=3)
            ),
            run,
        ]
    )


_SHIFT_COLUMNS = (
    "workspace_id",
    "team_id",
    "team_name",
    "person_id",
    "person_name",
    "role",
    "starts_at",
    "ends_at",
    "break_minutes",
    "notes",
)
_TIME_OFF_COLUMNS = (
    "workspace_id",
    "team_id",
    "team_name",
    "person_id",
    "person_name",
    "kind",
    "status",
    "starts_on",
    "ends_on",
    "days",
    "reason",
    "submitted_at",
)
_TIMESHEET_COLUMNS = (
    "workspace_id",
    "team_id",
    "team_name",
    "person_id",
    "person_name",
    "work_date",
    "hours",
    "project",
    "approved",
    "note",
    "recorded_at",
)


# The test records' rows lie this many days back and earlier: before the last 7 days and this week.
_TEST_ROWS_FROM_DAYS_AGO = 8


def _test_record_days(today: date) -> Iterator[tuple[date, str]]:
    """Each hostile value with the day of its test record's rows: one a day, going back from
    _TEST_ROWS_FROM_DAYS_AGO days ago."""
    for k, value in enumerate(HOSTILE_VALUES):
        yield today - timedelta(days=_TEST_ROWS_FROM_DAYS_AGO + k), value


def _test_shift_rows(workspace_id: int, records: list[_Worker], today: date) -> list[tuple]:
    """One past shift per hostile value, in its notes, worked by the test records in turn."""
    if not records:
        return []
    rows = []
    for k, (day, value) in enumerate(_test_record_days(today)):
        record = records[k % len(records)]
        starts_at = datetime.combine(day, time(9, 0), UTC)
        rows.append(
            (
                workspace_id,
                record.team_id,
                record.team_name,
                record.person_id,
                record.person_name,
                record.job_title,
                starts_at,
                starts_at + timedelta(hours=8),
                30,
                value,
            )
        )
    return rows


def _test_time_off_rows(workspace_id: int, records: list[_Worker], today: date) -> list[tuple]:
    """One past, decided day off per hostile value, as its reason (never pending, so never in the
    starter "Pending time off")."""
    if not records:
        return []
    rows = []
    for k, (day, value) in enumerate(_test_record_days(today)):
        record = records[k % len(records)]
        rows.append(
            (
                workspace_id,
                record.team_id,
                record.team_name,
                record.person_id,
                record.person_name,
                "annual",
                "approved" if k % 4 else "declined",
                day,
                day,
                Decimal(1),
                value,
                datetime.combine(day - timedelta(days=14), time(10, 0), UTC),
            )
        )
    return rows


def _test_timesheet_rows(workspace_id: int, records: list[_Worker], count: int, now: datetime) -> list[tuple]:
    """The first `count` hostile values as approved entries of the test records, each in the note
    and (cut to the column's 200 characters) the project, one past day each."""
    if not records:
        return []
    rows = []
    for k, (day, value) in enumerate(itertools.islice(_test_record_days(now.date()), count)):
        record = records[k % len(records)]
        rows.append(
            (
                workspace_id,
                record.team_id,
                record.team_name,
                record.person_id,
                record.person_name,
                day,
                Decimal("7.50"),
                value[:200],
                True,
                value,
                datetime.combine(day, time(17, 30), UTC),
            )
        )
    return rows


def _shift_rows(rng: random.Random, workspace_id: int, workers: list[_Worker], today: date) -> list[tuple]:
    """About five shifts a week per active employee, from four weeks ago to two weeks ahead."""
    rows = []
    for worker in workers:
        for offset in range(-28, 14):
            if rng.random() >= 0.68:
                continue
            _pattern, start, minutes, break_minutes = rng.choice(_SHIFT_PATTERNS)
            starts_at = datetime.combine(today + timedelta(days=offset), start, UTC)
            role = worker.job_title if rng.random() >= 0.08 else f"{worker.job_title} (acting lead)"
            rows.append(
                (
                    workspace_id,
                    worker.team_id,
                    worker.team_name,
                    worker.person_id,
                    worker.person_name,
                    role,
                    starts_at,
                    starts_at + timedelta(minutes=minutes),
                    break_minutes,
                    rng.choice(_SHIFT_NOTES),
                )
            )
    rows.sort(key=lambda row: row[_SHIFT_COLUMNS.index("starts_at")])
    return rows


def _working_days_from(first: date, count: int) -> date:
    """The last day of `count` working days (Monday to Friday) starting on `first`."""
    day, left = first, count - 1
    while left:
        day += timedelta(days=1)
        if day.weekday() < 5:
            left -= 1
    return day


def _time_off_rows(
    rng: random.Random, workspace_id: int, workers: list[_Worker], today: date, now: datetime
) -> list[tuple]:
    """One to four requests per active employee, from four months ago to three months ahead."""
    rows = []
    for worker in workers:
        for _request in range(rng.randint(1, 4)):
            kind = rng.choices(_TIME_OFF_KINDS, weights=_TIME_OFF_KIND_WEIGHTS)[0]
            # Sickness is reported on the day, so it lies in the past; other leave is booked ahead.
            starts_on = today + timedelta(days=rng.randint(-120, 0 if kind == "sick" else 90))
            while starts_on.weekday() >= 5:
                starts_on -= timedelta(days=1)
            length = {"annual": (1, 10), "sick": (1, 3), "parental": (20, 60), "unpaid": (1, 5)}[kind]
            working_days = rng.randint(*length)
            half_day = kind == "annual" and working_days == 1 and rng.random() < 0.3
            days = Decimal("0.5") if half_day else Decimal(working_days)
            if kind == "sick":
                status = "approved"
                submitted_at = datetime.combine(starts_on, time(6, rng.randrange(60)), UTC)
            else:
                upcoming = starts_on > today
                status = rng.choices(
                    ("pending", "approved", "declined"), weights=(45, 45, 10) if upcoming else (0, 85, 15)
                )[0]
                asked_on = starts_on - timedelta(days=rng.randint(5, 60))
                submitted_at = datetime.combine(asked_on, time(rng.randint(8, 20), rng.randrange(60)), UTC)
            submitted_at = min(submitted_at, now - timedelta(hours=rng.randint(1, 72)))
            rows.append(
                (
                    workspace_id,
                    worker.team_id,
                    worker.team_name,
                    worker.person_id,
                    worker.person_name,
                    kind,
                    status,
                    starts_on,
                    _working_days_from(starts_on, working_days),
                    days,
                    rng.choice(_TIME_OFF_REASONS[kind]),
                    submitted_at,
                )
            )
    rows.sort(key=lambda row: row[_TIME_OFF_COLUMNS.index("submitted_at")])
    return rows


def _timesheet_batches(
    rng: random.Random, workspace_id: int, workers: list[_Worker], projects: Sequence[str], count: int, now: datetime
) -> Iterator[list[tuple]]:
    """`count` entries in date order over the last TIMESHEET_DAYS days up to today, BATCH_SIZE at a time."""
    first_day = now.date() - timedelta(days=TIMESHEET_DAYS - 1)
    days = [first_day + timedelta(days=d) for d in range(TIMESHEET_DAYS)]
    midnights = [datetime.combine(day, time(), UTC) for day in days]
    last_week = TIMESHEET_DAYS - 7
    for start in range(0, count, BATCH_SIZE):
        size = min(BATCH_SIZE, count - start)
        crew = rng.choices(workers, k=size)
        hours = rng.choices(_HOURS, cum_weights=_HOURS_CUM_WEIGHTS, k=size)
        booked = rng.choices(projects, k=size)
        notes = rng.choices(_TIMESHEET_NOTES, k=size)
        delays = rng.choices(_RECORD_DELAYS, k=size)
        batch = []
        for k in range(size):
            index = start + k
            d = index * TIMESHEET_DAYS // count
            # Recent entries still wait for a manager; older ones are nearly all approved.
            approved = rng.random() < (0.97 if d < last_week else 0.7)
            recorded_at = midnights[d] + delays[k]
            if recorded_at > now:
                # Work of the last day or two is recorded some time between its start and now
                # (drawn from the delay, so the time of day never changes the random sequence).
                recorded_at = midnights[d] + (now - midnights[d]) * ((delays[k] - _RECORD_DELAYS[0]) / _ONE_DAY)
            worker = crew[k]
            batch.append(
                (
                    workspace_id,
                    worker.team_id,
                    worker.team_name,
                    worker.person_id,
                    worker.person_name,
                    days[d],
                    hours[k],
                    booked[k],
                    approved,
                    notes[k],
                    recorded_at,
                )
            )
        yield batch


def _insert_rows(table: Table, columns: Sequence[str], batches: Iterable[list[tuple]]) -> None:
    """Append rows inside the session's transaction: COPY on PostgreSQL, executemany elsewhere.
    Empty batches are left out (an executemany of no rows would insert one row of defaults).

    One COPY per batch: PostgreSQL queues a foreign-key check per row until its statement ends,
    so a single COPY of millions of rows would hold millions of pending checks in server memory.
    """
    connection = db.session.connection()
    if connection.dialect.name == "postgresql":
        copy_statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
            sql.Identifier(table.name), sql.SQL(", ").join(map(sql.Identifier, columns))
        )
        driver = connection.connection.driver_connection
        if driver is None:
            raise RuntimeError("the session's database connection is closed")
        with driver.cursor() as cursor:
            for batch in filter(None, batches):
                with cursor.copy(copy_statement) as copy:
                    for row in batch:
                        copy.write_row(row)
        return
    statement = insert(table)
    for batch in filter(None, batches):
        db.session.execute(statement, [dict(zip(columns, row, strict=True)) for row in batch])
