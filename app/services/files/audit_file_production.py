"""Producing a file of a workspace's audit log: the use case export_runner calls for a file of kind `audit`.

The file keeps the audit page's filters (an AuditSelection in `request`). The events are read
through app/data/audit_events.py with the requester's access as it is now, so a person who is no
longer an administrator gets no file (AccessDenied, which fails it as `access_lost`), and handed
to the CSV writer as typed rows: spreadsheet-safe text (formula-like text starts with `'`), times
in UTC, the action's code (for machines) beside its sentence and what it changed (for people).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing

from app.data.audit_events import count_events, iter_events
from app.domain.people.access import RequesterContext
from app.domain.people.audit_vocabulary import action_sentence, changes, reason_sentence
from app.domain.sources.catalog import Column
from app.domain.sources.stored_request import AuditSelection
from app.models import ExportFile
from app.rendering.csv_writer import write_csv
from app.rendering.row_digest import WrittenRows

Progress = Callable[[int, int | None], None]

AUDIT_COLUMNS = (
    Column("event_id", "Event ID", "integer", "Identifier of the audited event."),
    Column("at", "When", "datetime", "When it happened (UTC)."),
    Column("who", "Who", "text", "The person who did it; empty for the product's own actions."),
    Column("rhythm_staff", "Rhythm staff", "boolean", "Whether that person is Rhythm staff."),
    Column("action", "Action", "text", "The action's code."),
    Column("what", "What", "text", "What the action means."),
    Column("changed", "What changed", "text", "Each field the action changed, as 'field: before → after'."),
    Column("on_type", "On", "text", "The kind of record it changed."),
    Column("on_id", "Record ID", "integer", "The identifier of that record."),
    Column("reason", "Reason", "text", "The reason given, if any."),
    Column("details", "Details", "text", "Further facts recorded with it, as JSON."),
)


def _file_rows(events: Iterable[tuple]) -> Iterator[tuple]:
    for event_id, at, who, is_staff, action, on_type, on_id, reason, details in events:
        yield (
            event_id,
            at,
            who,
            is_staff,
            action,
            action_sentence(action),
            "; ".join(f"{change.field}: {change.before} → {change.after}" for change in changes(details)) or None,
            on_type,
            on_id,
            reason_sentence(reason) or None,
            json.dumps(details, ensure_ascii=False, sort_keys=True) if details else None,
        )


def write_audit_file(
    export: ExportFile, access: RequesterContext, out, progress: Progress, warnings: Counter[str]
) -> WrittenRows:
    """Write the file's CSV bytes to `out`; returns the number of events in it (and no digest: no
    schedule sends an audit file).

    Raises AccessDenied (before anything is written) when the requester is not an administrator
    of the workspace now, and ValidationError when the stored filters are not in their shape.
    """
    selection = AuditSelection.from_json(export.request)
    total = count_events(access, selection)
    progress(0, total)
    with closing(iter_events(access, selection)) as events:
        count = write_csv(
            AUDIT_COLUMNS,
            _file_rows(events),
            out,
            heading=export.heading,
            exact_values=False,
            progress=progress,
            total=total,
            warnings=warnings,
        )
    return WrittenRows(count, None)
