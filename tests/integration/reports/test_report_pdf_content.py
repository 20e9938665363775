"""Report PDFs read back with pdftotext: title block, repeated headers, page numbers, every value, totals."""

from __future__ import annotations

import re
from collections import Counter
from decimal import Decimal
from io import BytesIO

import pytest
from sqlalchemy import func, select, update

from app.extensions import db
from app.models import ExportFile, TimesheetEntry, Workspace
from app.seed_data import HOSTILE_VALUES
from app.services.files.export_runner import run_export_file
from app.services.files.report_file_production import write_report_file
from tests import factories
from tests.fixtures.workers import file_row


def _words(text: str) -> str:
    return " ".join(text.split())


# What pdftotext adds around each right-to-left run it prints (RLE, LRE, PDF).
POPPLER_EMBEDDINGS = dict.fromkeys(map(ord, "\u202a\u202b\u202c"))


def _glyphs(text: str) -> str:
    """Text as compared with pdftotext's output: white space goes (long cells wrap, and a wrap may
    fall inside a word), and so do the embedding marks pdftotext adds; every letter, emoji and
    control character is compared as written, with no normalisation."""
    return "".join(text.translate(POPPLER_EMBEDDINGS).split())


def _produce(kit, report, storage, file_format="pdf") -> bytes:
    export = kit.request(report, file_format)
    assert run_export_file(export.id) == "succeeded", file_row(export.id).failure_detail
    return b"".join(storage.read_chunks(file_row(export.id).storage_key))


def _entries(workspace_id: int) -> list[TimesheetEntry]:
    return list(
        db.session.execute(
            select(TimesheetEntry).where(TimesheetEntry.workspace_id == workspace_id).order_by(TimesheetEntry.id)
        ).scalars()
    )


def test_table_pdf_prints_every_value_on_numbered_pages_with_repeated_headers(kit, isolated_storage, read_pdf):
    """A multi-page (multi-chunk) table: title block once, headers and "Page N of M" on every page, every value."""
    kit.add_rows(450)
    report = kit.report(kind="table")
    data = _produce(kit, report, isolated_storage)
    text = read_pdf(data)

    pages = [page for page in text.split("\f") if page.strip()]
    assert len(pages) > 3
    assert "Hours worked — Северный корпус" in pages[0] and "Printed for the ward managers" in pages[0]
    assert "Hours worked" not in pages[1]
    for number, page in enumerate(pages, start=1):
        assert f"Page {number} of {len(pages)}" in page
        for heading in ("Entry ID", "Employee", "Date", "Hours", "Note"):
            assert heading in page, f"heading {heading!r} missing on page {number}"
    # A value counts as printed when either reading order has it whole: "raw" keeps a wrapped
    # cell's lines together, "reading" keeps right-to-left words in their order.
    readings = (_glyphs(text), _glyphs(read_pdf(data, "raw")))
    for entry in _entries(kit.world.workspace.id):
        for value in (entry.note, entry.person_name, entry.work_date.strftime("%d/%m/%Y"), f"{entry.hours:.2f}"):
            assert any(_glyphs(value) in printed for printed in readings), value
    for name in ("Zoë Ødegaard-Łukasiewicz", "Дмитрий Шостакович", "Σωκράτης Παπαδόπουλος", "山田 太郎", "김민준"):
        assert _glyphs(name) in readings[0]


def test_table_pdf_prints_dates_in_the_workspace_format(kit, isolated_storage, read_pdf):
    """Dates follow Workspace.date_format, not ISO."""
    db.session.execute(update(Workspace).where(Workspace.id == kit.world.workspace.id).values(date_format="%Y.%m.%d"))
    db.session.commit()
    text = read_pdf(_produce(kit, kit.report(kind="table"), isolated_storage))
    assert "2026.11.02" in text
    assert "02/11/2026" not in text


def test_table_pdf_prints_times_on_the_workspace_clocks_with_the_zone_named(kit, isolated_storage, read_pdf):
    """18:00 UTC in Tokyo is 03:00 the next day; the generated time names the zone too."""
    db.session.execute(
        update(Workspace)
        .where(Workspace.id == kit.world.workspace.id)
        .values(date_format="%Y.%m.%d", time_zone="Asia/Tokyo")
    )
    db.session.commit()
    kit.add_rows(1)
    query = kit.query(columns=["id", "recorded_at"])
    columns = [{"name": "id", "width": 10}, {"name": "recorded_at", "width": 30}]
    report = kit.report(query, kind="table", columns=columns)
    text = _words(read_pdf(_produce(kit, report, isolated_storage), "layout"))
    assert "2026.11.03 03:00 Asia/Tokyo" in text
    assert re.search(r"Generated \d{4}\.\d{2}\.\d{2} \d{2}:\d{2} Asia/Tokyo", text)
    assert "UTC" not in text


def test_table_pdf_right_aligns_and_formats_numbers(kit, isolated_storage, read_pdf):
    """Hours print with their two decimals at the right edge of their column."""
    text = read_pdf(_produce(kit, kit.report(kind="table"), isolated_storage), "layout")
    lines = [line for line in text.splitlines() if "Hours" in line and "Entry ID" in line]
    assert lines, text[:500]
    assert re.search(r"\b7\.50\b", text)


def test_coded_pdf_subtotals_equal_the_sums_computed_in_sql(kit, isolated_storage, read_pdf):
    """Each group's subtotal row and count, and the grand total, match SUM/COUNT … GROUP BY in SQL."""
    kit.add_rows(120)
    report = kit.report(kind="coded")
    text = _words(read_pdf(_produce(kit, report, isolated_storage), "layout"))

    expected = db.session.execute(
        select(TimesheetEntry.team_name, func.count(), func.sum(TimesheetEntry.hours))
        .where(TimesheetEntry.workspace_id == kit.world.workspace.id)
        .group_by(TimesheetEntry.team_name)
    ).all()
    assert len(expected) == 2
    for team, count, hours in expected:
        match = re.search(rf"Subtotal {re.escape(team)} · ([\d,]+) rows ([\d,]+\.\d\d)", text)
        assert match, f"no subtotal for {team}"
        assert int(match[1].replace(",", "")) == count
        assert Decimal(match[2].replace(",", "")) == hours
        description = {"Team A": "Day ward", "Team B": "Night ward"}[team]
        assert f"{team} — {description} · {count:,} rows" in text
    total_rows = sum(count for _, count, _ in expected)
    total_hours = sum(hours for _, _, hours in expected)
    match = re.search(r"Grand total · ([\d,]+) rows ([\d,]+\.\d\d)", text)
    assert match and int(match[1].replace(",", "")) == total_rows
    assert Decimal(match[2].replace(",", "")) == total_hours


def test_coded_pdf_does_not_add_up_identifiers(kit, isolated_storage, read_pdf):
    """The id column is printed, never totalled: the subtotal row carries hours only."""
    text = read_pdf(_produce(kit, kit.report(kind="coded"), isolated_storage), "layout")
    hours = db.session.execute(
        select(func.sum(TimesheetEntry.hours)).where(
            TimesheetEntry.workspace_id == kit.world.workspace.id, TimesheetEntry.team_name == "Team A"
        )
    ).scalar_one()
    lines = [line for line in text.splitlines() if "Subtotal Team A" in line]
    assert len(lines) == 1
    assert re.findall(r"[\d,.]+", lines[0].split(" rows", 1)[1]) == [f"{hours:,.2f}"]


def test_summary_pdf_prints_the_figures_and_a_bar_per_group(kit, isolated_storage, read_pdf):
    """Headline figures over every row, and the chart's bars labelled by group with their values."""
    summary = {
        "group_column": "team_name",
        "figures": [
            {"function": "sum", "column": "hours", "label": "Hours in all"},
            {"function": "count", "column": None, "label": "Entries"},
            {"function": "avg", "column": "hours", "label": "Average entry"},
        ],
    }
    report = kit.report(kind="summary", summary=summary)
    text = _words(read_pdf(_produce(kit, report, isolated_storage)))
    workspace_id = kit.world.workspace.id
    total, count, average = db.session.execute(
        select(func.sum(TimesheetEntry.hours), func.count(), func.avg(TimesheetEntry.hours)).where(
            TimesheetEntry.workspace_id == workspace_id
        )
    ).one()
    assert "Hours in all" in text and f"{total:,.2f}" in text
    assert "Entries" in text and str(count) in text
    assert f"{average:,.2f}" in text
    assert "Hours in all by Team" in text
    for team, hours in db.session.execute(
        select(TimesheetEntry.team_name, func.sum(TimesheetEntry.hours))
        .where(TimesheetEntry.workspace_id == workspace_id)
        .group_by(TimesheetEntry.team_name)
    ):
        assert f"{team} {hours:,.2f}" in text
    assert "Page 1 of 1" in text


def test_producing_a_report_pdf_counts_what_it_could_not_print_as_written(kit):
    """The production service hands the writer a Counter: an Ethiopic letter no font has counts as
    glyph_missing and a 100,000-character note as cell_clipped, and progress moves in between."""
    factories.make_timesheet_entry(kit.world.employees[0], note="ሰ " + "long note " * 10_000)
    kit.add_rows(600)
    export = db.session.get(ExportFile, kit.request(kit.report(kind="table")).id)
    warnings: Counter = Counter()
    progress: list[tuple[int, int | None]] = []
    rows = write_report_file(
        export, kit.access(kit.world.admin), BytesIO(), lambda done, total: progress.append((done, total)), warnings
    ).count
    assert warnings["glyph_missing"] >= 1 and warnings["cell_clipped"] == 1
    assert any(0 < done < rows for done, _ in progress)
    assert progress[-1] == (rows, rows)


# The characters of the hostile values no committed font draws: control characters (Symbola draws the emoji).
NO_FONT_HAS = ["\x01", "\x1f"]


@pytest.mark.parametrize("kind", ["table", "coded"])
def test_report_pdf_prints_every_hostile_note_as_written(kit, read_pdf, kind):
    """Each hostile value the world stores as a note is in the produced PDF's text layer as written
    (white space aside, no normalisation: Arabic and Hebrew as their own letters), and the
    characters no font draws are counted as glyph_missing, once each."""
    export = db.session.get(ExportFile, kit.request(kit.report(kind=kind)).id)
    warnings: Counter = Counter()
    out = BytesIO()
    write_report_file(export, kit.access(kit.world.admin), out, lambda done, total: None, warnings)
    text = _glyphs(read_pdf(out.getvalue(), "raw"))
    for value in HOSTILE_VALUES:
        assert _glyphs(value) in text, value
    assert warnings == Counter({"glyph_missing": sum(v.count(c) for v in HOSTILE_VALUES for c in NO_FONT_HAS)})
