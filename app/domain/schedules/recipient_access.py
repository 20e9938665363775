"""Run as each recipient: what of a person's access shapes a schedule's file, described canonically,
so recipients whose access makes the same file share one (compared by description, never by person).

A file of a dataset holds the rows the requester's row scope lets through (app/data/query_runner.py
reads nothing else of the access); the columns are the schedule's own, the same for everyone. A
person who cannot read the dataset gets no file: they are skipped.
"""

from __future__ import annotations

import hashlib
import json

from app.domain.people.access import RequesterContext


def description(access: RequesterContext, dataset: str) -> dict:
    """The access as the file of `dataset` sees it: the workspace, the dataset and the teams whose
    rows it shows (`"all"` for every team)."""
    scope = access.row_scope
    return {
        "workspace": access.workspace_id,
        "dataset": dataset,
        "teams": "all" if scope is None else sorted(scope),
    }


def key(described: dict) -> str:
    """The description's SHA-256: equal descriptions, equal keys."""
    return hashlib.sha256(json.dumps(described, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
