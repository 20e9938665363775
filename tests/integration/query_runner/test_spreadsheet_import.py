"""Files as LibreOffice Calc opens them (headless `soffice`): no CSV text becomes a formula, XLSX text,
dates and time stamps read as written.

CSV files are imported under `,` and `;` as the separator, with "trim spaces" off and on, and
converted to XLSX; the converted sheets must hold no formula cell. The same check on a file
"for data tools" (exact values) finds formulas, so the count can see them. LibreOffice is
required: a missing `soffice` fails these tests (CI installs Debian's libreoffice-calc-nogui).
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
import zipfile
from collections import Counter
from datetime import UTC, date, datetime, time
from pathlib import Path

import pytest

from app.domain.people.access import current_context
from app.domain.sources.catalog import get_dataset
from app.services.files.query_file_production import write_query_file
from tests import factories

DATASETS = ["timesheet_entries", "people", "shifts", "time_off_requests", "teams"]
SEPARATORS = {"comma": 44, "semicolon": 59}


@pytest.fixture(scope="module")
def soffice() -> str:
    path = shutil.which("soffice")
    if path is None:
        pytest.fail("LibreOffice (soffice) is required for these tests: apt-get install libreoffice-calc-nogui")
    return path


def _convert(soffice: str, sources: list[Path], target: str, infilter: str | None, tmp_path: Path) -> Path:
    """Convert files with LibreOffice into `tmp_path/out`, each as <stem>.<target>."""
    out = tmp_path / "out"
    command = [
        soffice,
        f"-env:UserInstallation={(tmp_path / 'profile').as_uri()}",
        "--headless",
        "--convert-to",
        target,
        "--outdir",
        str(out),
    ]
    if infilter:
        command.append(f"--infilter={infilter}")
    subprocess.run([*command, *map(str, sources)], check=True, capture_output=True, timeout=300)
    return out


def _csv_filter(separator: int, trim: bool) -> str:
    # Tokens: separator, text delimiter ("), UTF-8, first line, column formats, language, quoted field
    # as text (no), detect special numbers (yes), two export-only tokens, trim spaces, export sheets,
    # evaluate formulas (yes: the spreadsheet's default on opening a CSV).
    return f"CSV:{separator},34,76,1,,0,false,true,false,false,{str(trim).lower()},false,true"


def _formula_cells(xlsx: Path) -> int:
    with zipfile.ZipFile(xlsx) as package:
        sheets = [name for name in package.namelist() if name.startswith("xl/worksheets/sheet")]
        return sum(len(re.findall(r"<f[ >/]", package.read(name).decode())) for name in sheets)


@pytest.fixture
def hostile_everywhere(world):
    """Every dataset carries the hostile values, in several text columns, beside negative numbers."""
    for i, value in enumerate(factories.hostile_values()):
        employee = world.employees[i % len(world.employees)]
        factories.make_shift(employee, notes=value, role=value[:100], break_minutes=-i)
        factories.make_time_off(employee, reason=value, kind=value[:40])
        factories.make_timesheet_entry(employee, note=value, project=value[:100])
    return current_context(world.workspace.id, world.admin.id)


def _csv_files(world, access, tmp_path: Path, exact_values: bool) -> list[Path]:
    paths = []
    for dataset in DATASETS:
        query = factories.make_query(
            world.workspace, world.admin, dataset=dataset, columns=get_dataset(dataset).column_names
        )
        export = factories.make_export(query, world.admin, format="csv", exact_values=exact_values)
        path = tmp_path / f"{dataset}-{'exact' if exact_values else 'safe'}.csv"
        with path.open("wb") as out:
            write_query_file(export, access, out, lambda n, t: None, Counter())
        paths.append(path)
    return paths


@pytest.mark.parametrize("trim", [False, True], ids=["as-is", "trim-spaces"])
@pytest.mark.parametrize("separator", SEPARATORS)
def test_no_csv_text_becomes_a_formula_in_libreoffice(soffice, world, hostile_everywhere, tmp_path, separator, trim):
    """Every dataset's spreadsheet-safe CSV, opened under either separator, trimmed or not: zero formula cells."""
    sources = _csv_files(world, hostile_everywhere, tmp_path, exact_values=False)
    out = _convert(soffice, sources, "xlsx", _csv_filter(SEPARATORS[separator], trim), tmp_path)
    counts = {source.stem: _formula_cells(out / f"{source.stem}.xlsx") for source in sources}
    assert counts == {source.stem: 0 for source in sources}


def test_the_formula_count_sees_formulas_in_an_exact_values_csv(soffice, world, hostile_everywhere, tmp_path):
    """The same check on "exact values" files finds formulas: the safe files' zero is not for want of looking."""
    sources = _csv_files(world, hostile_everywhere, tmp_path, exact_values=True)
    out = _convert(soffice, sources, "xlsx", _csv_filter(SEPARATORS["semicolon"], True), tmp_path)
    assert _formula_cells(out / "timesheet_entries-exact.xlsx") > 0


def test_negative_numbers_stay_numbers_in_libreoffice(soffice, world, hostile_everywhere, tmp_path):
    """A shift's negative break minutes import as numbers, not guarded text."""
    sources = _csv_files(world, hostile_everywhere, tmp_path, exact_values=False)
    shifts = [path for path in sources if path.stem.startswith("shifts")]
    out = _convert(soffice, shifts, "csv:Text - txt - csv (StarCalc):44,34,76,1", _csv_filter(44, False), tmp_path)
    records = list(csv.reader(io.StringIO((out / shifts[0].name).read_bytes().decode("utf-8-sig"), newline="")))
    column = records[0].index("break_minutes")
    assert {"-1", "-2", "-3"} <= {record[column] for record in records[1:]}


def test_an_xlsx_of_hostile_values_reads_back_exactly_in_libreoffice(soffice, world, tmp_path):
    """LibreOffice opens the XLSX and shows every hostile note as stored, control characters included."""
    query = factories.make_query(
        world.workspace, world.admin, columns=["id", "note"], sort=[{"column": "id", "direction": "asc"}]
    )
    export = factories.make_export(query, world.admin, format="xlsx")
    source = tmp_path / "hostile.xlsx"
    access = current_context(world.workspace.id, world.admin.id)
    with source.open("wb") as out:
        write_query_file(export, access, out, lambda n, t: None, Counter())
    out = _convert(soffice, [source], "csv:Text - txt - csv (StarCalc):44,34,76,1", None, tmp_path)
    records = list(csv.reader(io.StringIO((out / "hostile.csv").read_bytes().decode("utf-8-sig"), newline="")))
    assert [record[1] for record in records[1:]] == factories.hostile_values()
    relayed = _convert(soffice, [source], "xlsx", None, tmp_path / "again")
    assert _formula_cells(relayed / "hostile.xlsx") == 0


def _xlsx_dates_in_libreoffice(soffice, world, tmp_path: Path, time_zone: str) -> dict[str, list[str]]:
    """The world's XLSX of notes, work dates and time stamps in `time_zone`, as LibreOffice shows it: by note."""
    query = factories.make_query(world.workspace, world.admin, columns=["note", "work_date", "recorded_at"])
    export = factories.make_export(query, world.admin, format="xlsx", time_zone=time_zone)
    source = tmp_path / "dates.xlsx"
    with source.open("wb") as out:
        write_query_file(export, current_context(world.workspace.id, world.admin.id), out, lambda n, t: None, Counter())
    out = _convert(soffice, [source], "csv:Text - txt - csv (StarCalc):44,34,76,1", None, tmp_path)
    records = csv.reader(io.StringIO((out / "dates.csv").read_bytes().decode("utf-8-sig"), newline=""))
    return {note: shown for note, *shown in records}


def test_dates_before_march_1900_read_as_written_in_libreoffice(soffice, world, tmp_path):
    """LibreOffice reads Excel's serials 1 to 59 a day early: 1900-01-01 to 1900-02-28 must show as themselves."""
    employee = world.employees[0]
    days = {"new year": date(1900, 1, 1), "february": date(1900, 2, 28), "march": date(1900, 3, 1)}
    for note, day in days.items():
        factories.make_timesheet_entry(
            employee, note=note, work_date=day, recorded_at=datetime.combine(day, time(9), UTC)
        )
    shown = _xlsx_dates_in_libreoffice(soffice, world, tmp_path, "UTC")
    assert [shown[note] for note in days] == [
        ["1900-01-01", "1900-01-01T09:00:00+00:00"],
        ["1900-02-28", "1900-02-28T09:00:00+00:00"],
        ["1900-03-01", "1900-03-01 09:00:00"],
    ]


def test_two_instants_in_the_hour_the_clocks_repeat_read_apart_in_libreoffice(soffice, world, tmp_path):
    """In London 00:30 and 01:30 UTC on 2024-10-27 are both 01:30: each shows its offset; 02:30 UTC is plain."""
    employee = world.employees[0]
    for note, hour in {"first": 0, "second": 1, "after": 2}.items():
        factories.make_timesheet_entry(employee, note=note, recorded_at=datetime(2024, 10, 27, hour, 30, tzinfo=UTC))
    shown = _xlsx_dates_in_libreoffice(soffice, world, tmp_path, "Europe/London")
    assert [shown[note][1] for note in ("first", "second", "after")] == [
        "2024-10-27 01:30:00+01:00",
        "2024-10-27 01:30:00+00:00",
        "2024-10-27 02:30:00",
    ]
