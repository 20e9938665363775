"""The demo's workspaces and the people in them, as data: who signs in with what access, each
workspace's teams, jobs and projects, and the names its employees are drawn from.

Hostile values that read as someone's name are ordinary employees of the main workspace; the
others name its test records, the employees of a team of their own (demo_seed.py says why).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from app.domain.people.access import SCHEDULE_MANAGEMENT
from app.domain.sources.catalog import DATASETS
from app.models.workspace import STAFF_PERMISSIONS
from app.seed_data import HOSTILE_VALUES, reads_as_a_name
from app.services.schedules.schedules import EXTERNAL_GRANT

DEMO_WORKSPACE = "Northwind Care"
OTHER_WORKSPACE = "Globex Clinics"
ALL_DATASETS = tuple(DATASETS)
# Real employees; the main workspace also has its test records.
EMPLOYEES_PER_WORKSPACE = 60


@dataclass(frozen=True)
class Login:
    """A person who signs in to the demo, and the membership they hold (none for staff)."""

    email: str
    password: str
    name: str
    description: str
    workspace: str | None = None
    role: str = "member"
    grants: tuple[str, ...] = ()
    datasets: tuple[str, ...] = ALL_DATASETS
    # The code of the one team whose rows they see; None for every team's.
    team_scope: str | None = None
    staff_permissions: tuple[str, ...] = ()


ADMIN = Login(
    "admin@northwind.example",
    "demo-admin",
    "Amira Haddad",
    "Northwind Care administrator: every dataset, manages schedules, may add external recipients",
    workspace=DEMO_WORKSPACE,
    role="admin",
    grants=(SCHEDULE_MANAGEMENT, EXTERNAL_GRANT),
)
MEMBER = Login(
    "member@northwind.example",
    "demo-member",
    "Kenji Watanabe",
    "Northwind Care member: every dataset, every team's rows",
    workspace=DEMO_WORKSPACE,
)
SCOPED = Login(
    "scoped@northwind.example",
    "demo-scoped",
    "Olivia Bennett",
    "Northwind Care member: Intensive Care Unit rows only; every dataset except People",
    workspace=DEMO_WORKSPACE,
    # Also kept away from the people dataset (pay rates, emails).
    datasets=tuple(d for d in ALL_DATASETS if d != "people"),
    team_scope="ICU",
)
GLOBEX = Login(
    "member@globex.example",
    "demo-globex",
    "Mateo García",
    "Globex Clinics member (other workspace): every dataset, every team's rows",
    workspace=OTHER_WORKSPACE,
)
STAFF = Login(
    "staff@rhythm.example",
    "demo-staff",
    "Sam Okafor",
    "Rhythm staff (staff.view, staff.execute); member of no workspace",
    staff_permissions=STAFF_PERMISSIONS,
)
LOGINS = (ADMIN, MEMBER, SCOPED, GLOBEX, STAFF)

DEMO_LOGINS: list[tuple[str, str, str]] = [(login.email, login.password, login.description) for login in LOGINS]
DEMO_ADMIN_EMAIL = ADMIN.email
DEMO_MEMBER_EMAIL = MEMBER.email

# Hostile values someone could really be called: ordinary employees of the main workspace.
HOSTILE_PERSON_NAMES = tuple(value for value in HOSTILE_VALUES if reads_as_a_name(value))
# Hostile values someone could have typed as a name but no one is called (formula-looking, padded,
# emoji): the test records' names. The ones with control characters are only in their rows' text.
TEST_RECORD_NAMES = tuple(
    value
    for value in HOSTILE_VALUES
    if not reads_as_a_name(value)
    and not any(c in value for c in "\t\r\n")
    and (value[:1] in "=+-@'" or not value.isascii() or value != value.strip())
)

# The team, saved query and report of the test records.
TEST_RECORDS_NAME = "Test records (edge cases)"


@dataclass(frozen=True)
class Place:
    """A team: its code, its name and where it works."""

    code: str
    name: str
    location: str


@dataclass(frozen=True)
class WorkspacePlan:
    name: str
    email_domain: str
    time_zone: str
    age: timedelta
    # (team, relative size)
    teams: tuple[tuple[Place, int], ...]
    # (job title, lowest hourly rate, highest hourly rate, relative frequency)
    jobs: tuple[tuple[str, float, float, int], ...]
    projects: tuple[str, ...]
    # Employees named so before the rest are drawn from the name pool.
    named_employees: tuple[str, ...] = ()
    # The team of test records, which only the main workspace has.
    test_team: Place | None = None
    # The workspace gets `rows` // this many timesheet entries.
    timesheet_divisor: int = 1

    @property
    def places(self) -> tuple[Place, ...]:
        """Every team, the test records' last."""
        test_team = () if self.test_team is None else (self.test_team,)
        return (*(place for place, _size in self.teams), *test_team)


NORTHWIND = WorkspacePlan(
    name=DEMO_WORKSPACE,
    email_domain="northwind.example",
    time_zone="Europe/London",
    age=timedelta(days=900),
    teams=(
        (Place("ICU", "Intensive Care Unit", "Leeds General Infirmary"), 3),
        (Place("ED", "Emergency Department", "Leeds General Infirmary"), 4),
        (Place("MAT", "Maternity", "St James's Hospital"), 2),
        (Place("ORTH", "Orthopaedics & Trauma", "Harrogate District Hospital"), 2),
        (Place("PAED", "Paediatrics", "St James's Hospital"), 2),
        (Place("COMM", "Community Nursing", "Wakefield"), 2),
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
    named_employees=HOSTILE_PERSON_NAMES,
    test_team=Place("TEST", TEST_RECORDS_NAME, "Not a place: values every export must carry intact"),
)

GLOBEX_PLAN = WorkspacePlan(
    name=OTHER_WORKSPACE,
    email_domain="globex.example",
    time_zone="UTC",
    age=timedelta(days=400),
    teams=(
        (Place("DEN", "Dental Surgery", "Lyon Part-Dieu"), 3),
        (Place("PHYS", "Physiotherapy", "Lyon Confluence"), 2),
        (Place("RAD", "Radiology", "Villeurbanne"), 2),
        (Place("ADM", "Reception & Admin", "Lyon Part-Dieu"), 1),
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
    # A tenth of the main workspace's timesheet entries.
    timesheet_divisor=10,
)
PLANS = (NORTHWIND, GLOBEX_PLAN)

# (full name, romanised email local part): many cultures and scripts, as people really write them.
NAME_POOL: tuple[tuple[str, str], ...] = (
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
