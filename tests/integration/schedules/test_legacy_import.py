"""Importing the old system's schedules: the example file, every refusal with its reason, paused
arrival, one import per old id, and the `flask schedules import-legacy` command's report."""

from __future__ import annotations

import json
import threading
import time
import unicodedata
from datetime import UTC, datetime
from pathlib import Path

import pytest
from flask import current_app
from sqlalchemy import func, insert, select, text
from sqlalchemy.exc import IntegrityError

from app.domain.sources.query_spec import validate_definition
from app.domain.timing.timetable import Timetable, next_occurrence
from app.extensions import db
from app.models import AuditEvent, Membership, Report, SavedQuery, Schedule, ScheduleRecipient, Workspace
from app.services.demo.data_workspaces import DEMO_WORKSPACE
from app.services.demo.demo_seed import seed_demo
from app.services.schedules.legacy_import import (
    IMPORT_ACTION,
    LegacyFileError,
    import_legacy_schedules,
    read_legacy_file,
)
from tests import factories

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "legacy-schedules.example.json"
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _schedules() -> list[Schedule]:
    return list(db.session.execute(select(Schedule).order_by(Schedule.id)).scalars())


def _count(model) -> int:
    return db.session.execute(select(func.count()).select_from(model)).scalar_one()


# The example file against the demo workspace


@pytest.fixture
def demo(app_context) -> Workspace:
    assert seed_demo(100) is True
    return db.session.execute(select(Workspace).where(Workspace.name == DEMO_WORKSPACE)).scalar_one()


def _example_entries() -> list:
    return read_legacy_file(EXAMPLE.read_text(encoding="utf-8"))


def test_the_example_file_imports_every_entry_into_the_demo_workspace(demo):
    """Each entry of docs/legacy-schedules.example.json becomes a schedule of the demo workspace."""
    outcomes = import_legacy_schedules(_example_entries(), origin="example", now=NOW)
    assert [(outcome.reason, outcome.imported) for outcome in outcomes] == [(None, True)] * 4
    imported = db.session.execute(
        select(Schedule.legacy_ref, Schedule.workspace_id).where(Schedule.legacy_ref.is_not(None))
    ).all()
    refs = ["SCH-1007", "SCH-1012", "1019", "SCH-1023", "LEGACY-0042"]
    assert sorted(imported) == sorted((ref, demo.id) for ref in refs)


def test_example_query_entry_keeps_a_snapshot_of_the_saved_query_and_maps_its_timing(demo):
    """SCH-1007: the saved query's definition and version, XLSX, Monday and Thursday 06:30 London."""
    import_legacy_schedules(_example_entries(), now=NOW)
    schedule = db.session.execute(select(Schedule).where(Schedule.legacy_ref == "SCH-1007")).scalar_one()
    query = db.session.get(SavedQuery, 4)
    assert (schedule.kind, schedule.format, schedule.source_query_id) == ("query", "xlsx", query.id)
    max_rows = current_app.config["SETTINGS"].max_export_rows
    assert schedule.query_definition == validate_definition(query.definition(), max_rows)
    assert schedule.query_version == query.version
    assert schedule.timetable == {"kind": "weekly", "time": "06:30", "days": ["mon", "thu"], "zone": "Europe/London"}
    assert schedule.next_occurrence_at == next_occurrence(Timetable.from_json(schedule.timetable, "UTC"), NOW)


def test_example_addresses_of_workspace_people_become_person_recipients(demo):
    """Addresses matching a member (in any case) are stored as that person; the rest as addresses."""
    import_legacy_schedules(_example_entries(), now=NOW)
    schedule = db.session.execute(select(Schedule).where(Schedule.legacy_ref == "SCH-1007")).scalar_one()
    member_ids = set(
        db.session.execute(select(Membership.person_id).where(Membership.workspace_id == demo.id)).scalars()
    )
    people = [r.person_id for r in schedule.recipients if r.person_id is not None]
    assert len(people) == 2 and set(people) <= member_ids
    assert [r.email for r in schedule.recipients if r.email is not None] == ["rota-office@contoso.example"]
    assert [r.address_key for r in schedule.recipients][2] == "rota-office@contoso.example"


def test_example_report_entries_keep_the_report_and_its_version(demo):
    """SCH-1012 (summary report, PDF, last day of the month in the workspace's zone) and SCH-1023 (cron, XLSX)."""
    import_legacy_schedules(_example_entries(), now=NOW)
    monthly = db.session.execute(select(Schedule).where(Schedule.legacy_ref == "SCH-1012")).scalar_one()
    report = db.session.get(Report, 3)
    assert (monthly.kind, monthly.format, monthly.report_id, monthly.report_version_seen) == (
        "report",
        "pdf",
        report.id,
        report.version,
    )
    assert monthly.timetable == {"kind": "monthly", "time": "17:00", "day": "last", "zone": demo.time_zone}
    cron = db.session.execute(select(Schedule).where(Schedule.legacy_ref == "SCH-1023")).scalar_one()
    assert cron.timetable == {"kind": "cron", "expression": "0 8 * * 1-5", "zone": "America/New_York"}
    assert cron.format == "xlsx"


def test_example_numeric_id_header_row_and_send_when_empty_are_kept(demo):
    """Old id 1019 (a number) is kept as text; header_row false means no heading row."""
    import_legacy_schedules(_example_entries(), now=NOW)
    schedule = db.session.execute(select(Schedule).where(Schedule.legacy_ref == "1019")).scalar_one()
    assert (schedule.heading, schedule.send_condition, schedule.format) == ("none", "always", "csv")


# Entries built in a small world


@pytest.fixture
def sources(world):
    """A timesheet query and one report of each kind over it, all in the world's workspace."""
    query = factories.make_query(world.workspace, world.admin, name="Hours")
    reports = {}
    for kind in ("table", "coded", "summary"):
        reports[kind] = Report(
            workspace_id=world.workspace.id,
            owner_id=world.admin.id,
            name=f"Hours {kind}",
            kind=kind,
            source_query_id=query.id,
            title=f"Hours {kind}",
            columns=[{"name": "hours", "width": None}],
            code_column="team_name" if kind == "coded" else None,
        )
    db.session.add_all(reports.values())
    db.session.commit()
    return query, reports


def _entry(world, query, old_id: str, **changes) -> dict:
    entry = {
        "id": old_id,
        "workspace_id": world.workspace.id,
        "name": f"Imported {old_id}",
        "owner_email": world.admin.email,
        "source": {"type": "saved_query", "id": query.id},
        "format": "csv",
        "timing": {"frequency": "daily", "time": "07:30", "timezone": "Europe/Paris"},
        "recipients": [world.member.email, "someone@outside.example"],
        "message": "From the old system.",
    }
    entry.update(changes)
    return {key: value for key, value in entry.items() if value is not _DROP}


_DROP = object()


def _bad_cases(world, query, reports) -> dict[str, tuple[object, str]]:
    """(entry, what the reason says) for every kind of bad entry."""
    e = lambda **changes: _entry(world, query, "BAD", **changes)  # noqa: E731
    no_grant = factories.make_member(world.workspace)
    no_timesheets = factories.make_member(world.workspace, dataset_grants=["people"])
    other_query = factories.make_query(world.other_workspace, world.outsider)
    return {
        "not-an-object": ("a schedule", "An entry must be a JSON object."),
        "missing-fields": (e(owner_email=_DROP, timing=_DROP), "Missing fields: owner_email, timing."),
        "unknown-field": (e(colour="blue"), "Unknown field in the entry: colour."),
        "id-not-text": (e(id=True), "“id” must be the old system's id"),
        "owner-not-member": (e(owner_email=world.outsider.email), "is not a member of workspace"),
        "owner-unknown": (e(owner_email="nobody@nowhere.example"), "The owner nobody@nowhere.example is not a member"),
        "owner-without-dataset": (
            e(owner_email=no_timesheets.person.email, recipients=[world.member.email]),
            "has no access to the “timesheet_entries” dataset that saved query",
        ),
        "query-missing": (e(source={"type": "saved_query", "id": 999_999}), "Saved query 999999 does not exist"),
        "query-of-other-workspace": (
            e(source={"type": "saved_query", "id": other_query.id}),
            f"Saved query {other_query.id} does not exist",
        ),
        "report-missing": (e(source={"type": "report", "id": 999_999}, format="pdf"), "Report 999999 does not exist"),
        "source-type": (e(source={"type": "dashboard", "id": 1}), "“source” must have a “type”"),
        "query-as-pdf": (e(format="pdf"), "A schedule of a saved query makes CSV or Excel (XLSX) files."),
        "summary-as-xlsx": (
            e(source={"type": "report", "id": reports["summary"].id}, format="xlsx"),
            "A schedule of a summary report makes PDF files.",
        ),
        "more-than-hourly": (
            e(timing={"frequency": "cron", "cron": "*/15 * * * *"}),
            "A schedule runs at most once an hour",
        ),
        "bad-frequency": (e(timing={"frequency": "fortnightly", "time": "07:00"}), "must be hourly, daily"),
        "bad-zone": (e(timing={"frequency": "daily", "time": "07:00", "timezone": "Mars/Olympus"}), "not a time zone"),
        "day-31": (e(timing={"frequency": "monthly", "day_of_month": 31, "time": "07:00"}), "from 1 to 28"),
        "bad-weekday": (e(timing={"frequency": "weekly", "weekdays": ["Funday"], "time": "07:00"}), "days of the week"),
        "no-recipients": (e(recipients=[]), "Add at least one recipient."),
        "fifty-one-recipients": (
            e(recipients=[f"person{n}@outside.example" for n in range(51)]),
            "at most 50 recipients; this one has 51",
        ),
        "duplicate-address": (
            e(recipients=["a@outside.example", "A@Outside.Example"]),
            "“A@Outside.Example” is listed twice",
        ),
        "person-twice": (e(recipients=[world.member.email, world.member.email.upper()]), "is listed twice"),
        "bad-address": (e(recipients=["not an address"]), "“not an address” is not an email address."),
        "recipient-not-text": (e(recipients=[42]), "“recipients” must be a list of email addresses."),
        "external-without-grant": (
            e(owner_email=no_grant.person.email),
            f"needs the owner {no_grant.person.email} to hold the external-recipients grant",
        ),
        "nul-in-name": (e(name="Hours\x00"), "cannot be saved"),
        "lone-surrogate-in-message": (e(message="hello \ud800"), "cannot be saved"),
        "send-when-empty-text": (e(send_when_empty="yes"), "“send_when_empty” must be true or false."),
        "no-workspace": (e(workspace_id=_DROP), "The entry names no workspace"),
        "unknown-workspace": (e(workspace_id=999_999), "Workspace 999999 does not exist."),
        "workspace-true": (e(workspace_id=True), "“workspace_id” must be a workspace's id"),
        "source-id-true": (e(source={"type": "saved_query", "id": True}), "“source” must have a “type”"),
        "source-type-list": (e(source={"type": ["saved_query"], "id": 1}), "“source” must have a “type”"),
    }


BAD_CASES = [
    "not-an-object",
    "missing-fields",
    "unknown-field",
    "id-not-text",
    "owner-not-member",
    "owner-unknown",
    "owner-without-dataset",
    "query-missing",
    "query-of-other-workspace",
    "report-missing",
    "source-type",
    "query-as-pdf",
    "summary-as-xlsx",
    "more-than-hourly",
    "bad-frequency",
    "bad-zone",
    "day-31",
    "bad-weekday",
    "no-recipients",
    "fifty-one-recipients",
    "duplicate-address",
    "person-twice",
    "bad-address",
    "recipient-not-text",
    "external-without-grant",
    "nul-in-name",
    "lone-surrogate-in-message",
    "send-when-empty-text",
    "no-workspace",
    "unknown-workspace",
    "workspace-true",
    "source-id-true",
    "source-type-list",
]


# The field each refusal names first; the others are about the entry as a whole, and name its fields in the sentence.
REFUSED_FIELDS = {
    "id-not-text": "id",
    "owner-not-member": "owner_email",
    "owner-unknown": "owner_email",
    "owner-without-dataset": "source",
    "query-missing": "source",
    "query-of-other-workspace": "source",
    "report-missing": "source",
    "source-type": "source",
    "query-as-pdf": "format",
    "summary-as-xlsx": "format",
    "more-than-hourly": "timing",
    "bad-frequency": "timing.frequency",
    "bad-zone": "timing",
    "day-31": "timing",
    "bad-weekday": "timing",
    "no-recipients": "recipients",
    "fifty-one-recipients": "recipients",
    "duplicate-address": "recipients",
    "person-twice": "recipients",
    "bad-address": "recipients",
    "recipient-not-text": "recipients",
    "external-without-grant": "recipients",
    "nul-in-name": "name",
    "lone-surrogate-in-message": "message",
    "send-when-empty-text": "send_when_empty",
    "no-workspace": "workspace_id",
    "unknown-workspace": "workspace_id",
    "workspace-true": "workspace_id",
    "source-id-true": "source",
    "source-type-list": "source",
}


@pytest.mark.parametrize("case", sorted(REFUSED_FIELDS))
def test_a_refusal_starts_with_the_field_it_is_about(world, sources, case):
    query, reports = sources
    bad, _reason = _bad_cases(world, query, reports)[case]
    [outcome] = import_legacy_schedules([bad], now=NOW)
    assert outcome.reason.startswith(f"“{REFUSED_FIELDS[case]}”"), outcome.reason


@pytest.mark.parametrize("case", BAD_CASES)
def test_a_bad_entry_is_refused_with_its_reason_and_the_good_ones_still_import(world, sources, case):
    """Between two good entries, the bad one is reported with its index and reason; nothing of it is stored."""
    query, reports = sources
    bad, reason = _bad_cases(world, query, reports)[case]
    entries = [_entry(world, query, "GOOD-1"), bad, _entry(world, query, "GOOD-3")]
    outcomes = import_legacy_schedules(entries, now=NOW)
    assert [outcome.imported for outcome in outcomes] == [True, False, True]
    assert reason in outcomes[1].reason
    assert outcomes[1].label.startswith("Entry 2")
    assert [schedule.legacy_ref for schedule in _schedules()] == ["GOOD-1", "GOOD-3"]
    assert _count(ScheduleRecipient) == 4


def test_the_refusal_line_names_the_old_id(world, sources):
    query, _reports = sources
    [outcome] = import_legacy_schedules([_entry(world, query, "SCH-9", format="docx")], now=NOW)
    assert outcome.label == "Entry 1 (old id “SCH-9”)"


def test_a_report_entry_in_an_allowed_format_imports_with_labels(world, sources):
    """A coded report as XLSX is allowed, and report files print column labels."""
    query, reports = sources
    entry = _entry(world, query, "R-1", source={"type": "report", "id": reports["coded"].id}, format="XLSX")
    [outcome] = import_legacy_schedules([entry], now=NOW)
    schedule = db.session.get(Schedule, outcome.schedule_id)
    assert (schedule.kind, schedule.format, schedule.heading, schedule.query_definition) == (
        "report",
        "xlsx",
        "labels",
        None,
    )


def test_an_imported_schedule_arrives_paused_for_legacy_import_with_an_audit_event(world, sources):
    """Status paused, reason legacy_import, the old id kept, next occurrence computed, and one audit event."""
    query, _reports = sources
    [outcome] = import_legacy_schedules([_entry(world, query, "SCH-5")], origin="old.json", now=NOW)
    schedule = db.session.get(Schedule, outcome.schedule_id)
    assert (schedule.status, schedule.pause_reason, schedule.paused_at, schedule.legacy_ref) == (
        "paused",
        "legacy_import",
        NOW,
        "SCH-5",
    )
    assert schedule.next_occurrence_at == datetime(2026, 12, 1, 6, 30, tzinfo=UTC)
    events = db.session.execute(select(AuditEvent)).scalars().all()
    assert [(e.action, e.subject_id, e.actor_id, e.details) for e in events] == [
        (IMPORT_ACTION, schedule.id, None, {"legacy_ref": "SCH-5", "entry": 1, "file": "old.json"})
    ]


def test_the_owner_with_the_external_grant_may_send_to_outside_addresses(world, sources):
    """A member (not an administrator) holding schedules.external_recipients imports an outside address."""
    query, _reports = sources
    holder = factories.make_member(world.workspace, grants=["schedules.external_recipients"])
    [outcome] = import_legacy_schedules([_entry(world, query, "X-1", owner_email=holder.person.email)], now=NOW)
    assert outcome.imported, outcome.reason


def test_a_name_already_used_in_the_workspace_is_refused(world, sources):
    query, _reports = sources
    import_legacy_schedules([_entry(world, query, "N-1", name="Weekly hours")], now=NOW)
    [outcome] = import_legacy_schedules([_entry(world, query, "N-2", name="Weekly hours")], now=NOW)
    assert outcome.reason.startswith("“name”: The workspace already has a schedule named “Weekly hours”")


@pytest.mark.parametrize("line_break", ["\n", "\r", "\u2028", "\x85"])
def test_a_name_with_a_line_break_is_refused(world, sources, line_break):
    query, _reports = sources
    [outcome] = import_legacy_schedules([_entry(world, query, "L-1", name=f"Weekly{line_break}hours")], now=NOW)
    assert (outcome.imported, outcome.reason) == (
        False,
        "“name”: The name must be a single line. Remove the line break.",
    )
    assert _count(Schedule) == 0


def test_reimporting_an_old_id_is_refused_naming_the_schedule_it_became(world, sources):
    """The second import of the same old id into the same workspace says which schedule it already is."""
    query, _reports = sources
    [first] = import_legacy_schedules([_entry(world, query, "SCH-7")], now=NOW)
    [again] = import_legacy_schedules([_entry(world, query, "SCH-7", name="Renamed")], now=NOW)
    assert (again.imported, again.reason) == (False, f"“id”: Already imported as schedule {first.schedule_id}.")
    assert _count(Schedule) == 1


def test_the_same_old_id_may_be_imported_into_another_workspace(world, sources):
    query, _reports = sources
    import_legacy_schedules([_entry(world, query, "SCH-8")], now=NOW)
    other_query = factories.make_query(world.other_workspace, world.outsider)
    entry = _entry(
        world,
        query,
        "SCH-8",
        workspace_id=world.other_workspace.id,
        owner_email=world.outsider.email,
        source={"type": "saved_query", "id": other_query.id},
        recipients=[world.outsider.email],
    )
    [outcome] = import_legacy_schedules([entry], now=NOW)
    assert outcome.imported, outcome.reason


def test_the_database_refuses_a_second_schedule_with_the_same_old_id(world, sources):
    """Two imports racing past the check still cannot both store the old id (unique per workspace)."""
    query, _reports = sources
    [outcome] = import_legacy_schedules([_entry(world, query, "SCH-R")], now=NOW)
    copy = db.session.get(Schedule, outcome.schedule_id)
    db.session.add(
        Schedule(
            workspace_id=copy.workspace_id,
            name="Copy",
            kind="query",
            owner_id=copy.owner_id,
            format="csv",
            query_definition=copy.query_definition,
            query_version=1,
            timetable=copy.timetable,
            legacy_ref="SCH-R",
        )
    )
    with pytest.raises(IntegrityError, match="schedules_legacy_ref_uidx"):
        db.session.commit()
    db.session.rollback()


def test_workspace_option_refuses_entries_naming_another_workspace_and_fills_in_missing_ones(world, sources):
    query, _reports = sources
    entries = [_entry(world, query, "W-1", workspace_id=_DROP), _entry(world, query, "W-2", workspace_id=987)]
    outcomes = import_legacy_schedules(entries, workspace_id=world.workspace.id, now=NOW)
    assert outcomes[0].imported
    assert outcomes[1].reason == (
        f"“workspace_id”: The entry is for workspace 987, not workspace {world.workspace.id} (--workspace)."
    )


def test_an_unknown_workspace_option_imports_nothing(world, sources):
    query, _reports = sources
    with pytest.raises(LegacyFileError, match="Workspace 999999 does not exist"):
        import_legacy_schedules([_entry(world, query, "W-3")], workspace_id=999_999, now=NOW)
    assert _count(Schedule) == 0


# The command


def _write(tmp_path, content) -> str:
    path = tmp_path / "old-schedules.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return str(path)


def test_the_command_reports_one_line_per_entry_and_exits_1_when_one_was_refused(app, world, sources, tmp_path):
    query, _reports = sources
    file = _write(tmp_path, [_entry(world, query, "C-1"), _entry(world, query, "C-2", format="pdf")])
    result = app.test_cli_runner().invoke(args=["schedules", "import-legacy", file])
    schedule_id = db.session.execute(select(Schedule.id).where(Schedule.legacy_ref == "C-1")).scalar_one()
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"Entry 1 (old id “C-1”): imported as schedule {schedule_id} “Imported C-1”, "
        "paused until the old delivery is switched off.",
        "1 imported, 1 refused.",
    ]
    assert result.stderr.splitlines() == [
        "Entry 2 (old id “C-2”): refused: “format”: A schedule of a saved query makes CSV or Excel (XLSX) files."
    ]


def test_an_import_racing_another_for_the_same_old_id_reports_it_already_imported(app, world, sources):
    """Another transaction inserts the same old id after this import checked for it: the database's
    unique constraint makes this import wait, then refuse the entry naming the schedule that won."""
    query, _reports = sources
    admin_id, workspace_id = world.admin.id, world.workspace.id
    rival = db.engine.connect()
    rival_transaction = rival.begin()
    rival_id = rival.execute(
        insert(Schedule.__table__)
        .values(
            workspace_id=workspace_id,
            name="Imported elsewhere",
            kind="query",
            owner_id=admin_id,
            format="csv",
            query_definition=query.definition(),
            query_version=1,
            timetable={"kind": "daily", "time": "07:00"},
            legacy_ref="RACE-1",
        )
        .returning(Schedule.__table__.c.id)
    ).scalar_one()
    outcomes: list = []

    def import_in_another_session() -> None:
        with app.app_context():
            outcomes.extend(import_legacy_schedules([_entry(world, query, "RACE-1")], now=NOW))

    racer = threading.Thread(target=import_in_another_session)
    racer.start()
    with db.engine.connect() as observer:
        waiting = 0
        while racer.is_alive() and not waiting:
            waiting = observer.execute(
                text(
                    "SELECT count(*) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND wait_event_type = 'Lock'"
                )
            ).scalar_one()
            observer.rollback()
            time.sleep(0.02)
    rival_transaction.commit()
    rival.close()
    racer.join(timeout=60)
    assert waiting == 1
    assert [(outcome.imported, outcome.reason) for outcome in outcomes] == [
        (False, f"“id”: Already imported as schedule {rival_id}.")
    ]


def test_the_command_imports_the_example_into_the_demo_once(app, demo):
    """The example file through the command: four imported, exit 0; a second run refuses all four."""
    runner = app.test_cli_runner()
    first = runner.invoke(args=["schedules", "import-legacy", str(EXAMPLE), "--workspace", str(demo.id)])
    assert (first.exit_code, first.stdout.splitlines()[-1]) == (0, "4 imported, 0 refused.")
    second = runner.invoke(args=["schedules", "import-legacy", str(EXAMPLE)])
    assert second.exit_code == 1
    assert second.stdout.splitlines() == ["0 imported, 4 refused."]
    assert all(": refused: “id”: Already imported as schedule " in line for line in second.stderr.splitlines())
    assert len(second.stderr.splitlines()) == 4


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not valid JSON (line 1, column 2"),
        ({"schedules": []}, "must hold a JSON list of schedules"),
        ('[{"id": ' + "9" * 5000 + "}]", "a number too long"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ],
    ids=["not-json", "not-a-list", "huge-number", "deep-nesting"],
)
def test_the_command_refuses_a_file_that_is_not_a_list_of_schedules(app, world, tmp_path, content, message):
    result = app.test_cli_runner().invoke(args=["schedules", "import-legacy", _write(tmp_path, content)])
    assert result.exit_code == 1
    assert message in result.stderr
    assert _count(Schedule) == 0


def test_the_command_refuses_a_file_that_is_not_utf8(app, world, tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes('[{"name": "Café"}]'.encode("latin-1"))
    result = app.test_cli_runner().invoke(args=["schedules", "import-legacy", str(path)])
    assert (result.exit_code, result.stderr.strip()) == (1, f"{path} is not UTF-8 text; nothing was imported.")


def test_hostile_names_and_messages_are_stored_as_written_and_reported_on_one_line(app, world, sources, tmp_path):
    """Every hostile value survives as a name and a message (trimmed); each command line stays one line."""
    query, _reports = sources
    values = factories.hostile_values()
    names = [" ".join(f"{n} {value}".splitlines()) for n, value in enumerate(values)]  # a name is one line
    entries = [_entry(world, query, f"H-{n}", name=names[n], message=value) for n, value in enumerate(values)]
    result = app.test_cli_runner().invoke(args=["schedules", "import-legacy", _write(tmp_path, entries)])
    assert result.exit_code == 0, result.stderr
    assert len(result.stdout.splitlines()) == len(values) + 1
    assert [ch for ch in result.stdout.replace("\n", "") if unicodedata.category(ch) == "Cc"] == []
    stored = dict(db.session.execute(select(Schedule.legacy_ref, Schedule.custom_message)).all())
    stored_names = dict(db.session.execute(select(Schedule.legacy_ref, Schedule.name)).all())
    assert stored == {f"H-{n}": value.strip() for n, value in enumerate(values)}
    assert stored_names == {f"H-{n}": name.strip() for n, name in enumerate(names)}
