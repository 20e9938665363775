"""The one vocabulary of what the product records: every action the code writes has a sentence,
and an audited change says what it changed."""

from __future__ import annotations

import ast
from pathlib import Path

from app.domain.people.access import SCHEDULE_MANAGEMENT
from app.domain.people.audit_vocabulary import (
    ACTION_SENTENCES,
    PAUSE_REASONS,
    SKIP_REASONS,
    Change,
    action_sentence,
    changes,
    reason_sentence,
    skip_sentence,
)
from app.models.schedule import PauseReason, SkipReason
from app.models.workspace import STAFF_PERMISSIONS
from app.services.schedules.schedules import EXTERNAL_GRANT

APP = Path(__file__).resolve().parents[4] / "app"
# The other dotted names the modules that record audit events hold: permissions, not actions.
PERMISSIONS = {*STAFF_PERMISSIONS, SCHEDULE_MANAGEMENT, EXTERNAL_GRANT}


def _is_dotted_code(value: str) -> bool:
    parts = value.split(".")
    return len(parts) == 2 and all(part and part.replace("_", "").isalpha() and part.islower() for part in parts)


def written_actions() -> set[str]:
    """Every `subject.verb` string literal in a module that records audit events (the actions are
    passed to audit.record directly, through a module constant or through a small helper)."""
    found: set[str] = set()
    for path in APP.rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        if "audit.record(" not in source:
            continue
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _is_dotted_code(node.value):
                found.add(node.value)
    return found - PERMISSIONS


def test_the_collector_finds_the_actions_written_through_helpers_and_constants():
    assert {"export_delivery.retried", "schedule.legacy_imported", "export.package_deleted", "query.created"} <= (
        written_actions()
    )


def test_every_action_the_code_writes_has_a_sentence():
    assert sorted(written_actions() - ACTION_SENTENCES.keys()) == []


def test_every_sentence_belongs_to_an_action_the_code_writes():
    assert sorted(ACTION_SENTENCES.keys() - written_actions()) == []


def test_every_pause_reason_and_skip_reason_has_a_sentence():
    assert set(PAUSE_REASONS) == set(PauseReason)
    assert set(SKIP_REASONS) == set(SkipReason)


def test_no_sentence_is_a_code():
    for sentence in [*ACTION_SENTENCES.values(), *PAUSE_REASONS.values(), *SKIP_REASONS.values()]:
        assert "_" not in sentence and not _is_dotted_code(sentence)


def test_an_unknown_action_shows_a_sentence_not_its_code():
    assert action_sentence("export.something_new") == "Recorded change"


def test_a_pause_reason_reads_as_its_sentence_and_a_typed_reason_as_typed():
    assert reason_sentence("user") == "Paused by hand."
    assert reason_sentence("Customer asked for it") == "Customer asked for it"
    assert reason_sentence(None) == ""


def test_a_skip_reason_reads_as_its_sentence():
    assert skip_sentence("recipient_unsubscribed") == "Not sent: this person unsubscribed from the schedule."
    assert skip_sentence(None) == ""


def test_changed_fields_and_from_to_pairs_read_before_and_after():
    details = {
        "changed": {"retention_days": {"from": 30, "to": 7}, "datasets": {"from": ["hours"], "to": []}},
        "from_version": 2,
        "to_version": 3,
    }

    assert changes(details) == [
        Change("retention days", "30", "7"),
        Change("datasets", "hours", "none"),
        Change("version", "2", "3"),
    ]


def test_details_without_a_before_and_after_change_nothing():
    assert changes({"run_id": 4, "from_owner_id": 3}) == []
    assert changes(None) == []
