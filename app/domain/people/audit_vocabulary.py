"""The product's one vocabulary for what it records: every audit action, schedule pause reason and
recipient skip reason as a plain sentence, and what an audited change changed (before → after).

The audit log page, its CSV file, a schedule's History and its recipient rows read their words
here, so people never see a code. tests/unit/domain/people/test_audit_vocabulary.py collects the actions
the code writes and fails when one has no sentence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.models.schedule import PauseReason, SkipReason

ACTION_SENTENCES = {
    "export.cadence_skipped": "Scheduled workspace export skipped",
    "export.execution_admitted": "Workspace export started",
    "export.execution_cancelled": "Workspace export cancelled",
    "export.execution_stopped": "Workspace export marked failed by Rhythm staff",
    "export.package_deleted": "Export package deleted",
    "export.resumed": "Workspace export resumed by Rhythm staff",
    "export.suspended": "Workspace export suspended by Rhythm staff",
    "export_delivery.released": "Withheld package delivery released",
    "export_delivery.retried": "Failed package delivery tried again",
    "export_delivery.superseded": "Package delivery replaced by Rhythm staff",
    "export_destination.added": "Export destination added",
    "export_destination.changed": "Export destination changed",
    "export_destination.disabled": "Export destination turned off",
    "export_destination.enabled": "Export destination turned on",
    "export_destination.host_key_pinned": "SFTP server's host key pinned",
    "export_destination.removed": "Export destination removed",
    "export_destination.secret_replaced": "Export destination's secret replaced",
    "export_destination.signing_secret_replaced": "Webhook's signing secret made anew",
    "export_destination.tested": "Export destination's connection tested",
    "export_settings.changed": "Workspace export settings changed",
    "export_settings.created": "Workspace export set up",
    "file.cancelled": "File request cancelled",
    "job.requeued": "Job dispatched again by Rhythm staff",
    "query.changed": "Saved query changed",
    "query.created": "Saved query created",
    "query.deleted": "Saved query deleted",
    "report.changed": "Report changed",
    "report.created": "Report created",
    "report.deleted": "Report deleted",
    "schedule.changed": "Schedule changed",
    "schedule.created": "Schedule created",
    "schedule.deleted": "Schedule deleted",
    "schedule.legacy_imported": "Schedule imported from the old scheduling system",
    "schedule.ownership_taken": "Schedule ownership taken",
    "schedule.paused": "Schedule paused",
    "schedule.refreshed": "Schedule's query refreshed",
    "schedule.resumed": "Schedule resumed",
    "schedule.run_requested": "Schedule run requested",
    "schedule_destination_delivery.retried": "Failed delivery of a scheduled file to a destination tried again",
    "template.created": "Message template created",
    "template.draft_changed": "Message template draft changed",
    "template.published": "Message template version published",
    "template.version_started": "New message template version started",
    "workspace.attachment_policy_changed": "Email attachment policy changed",
}

PAUSE_REASONS: dict[str, str] = {
    PauseReason.USER: "Paused by hand.",
    PauseReason.FAILURE_STREAK: "Paused after three failed runs in a row.",
    PauseReason.OWNER_ACCESS_LOST: "Paused because the owner lost access to the data.",
    PauseReason.SOURCE_REMOVED: "Paused because its report was deleted.",
    PauseReason.LEGACY_IMPORT: "Imported from the old system; paused until its old delivery is switched off.",
}

SKIP_REASONS: dict[str, str] = {
    SkipReason.EMPTY_RESULT: "Not sent: the file had no rows.",
    SkipReason.RECIPIENT_REMOVED: "Not sent: this person is no longer a member of the workspace.",
    SkipReason.RECIPIENT_NOT_ALLOWED: "Not sent: this address is outside the workspace and may not receive it.",
    SkipReason.RECIPIENT_UNSUBSCRIBED: "Not sent: this person unsubscribed from the schedule.",
    SkipReason.RECIPIENT_ACCESS_LOST: "Not sent: this person can no longer read what the schedule sends.",
}


@dataclass(frozen=True)
class Change:
    """One field an audited change changed, in words."""

    field: str
    before: str
    after: str


def action_sentence(action: str) -> str:
    """What an audit action means; an action without a sentence (the unit test forbids one) shows
    as a generic sentence rather than its code."""
    return ACTION_SENTENCES.get(action, "Recorded change")


def reason_sentence(reason: str | None) -> str:
    """An event's reason in words: a pause reason's sentence, else the reason a person typed."""
    if not reason:
        return ""
    return PAUSE_REASONS.get(reason, reason)


def skip_sentence(reason: str | None) -> str:
    if not reason:
        return ""
    return SKIP_REASONS.get(reason, "Not sent.")


def changes(details: dict[str, Any] | None) -> list[Change]:
    """What the event's details say changed: each `changed` field's from/to, and each
    `from_<field>`/`to_<field>` pair, in the order recorded."""
    if not details:
        return []
    found: list[Change] = []
    changed = details.get("changed")
    if isinstance(changed, dict):
        for field, values in changed.items():
            if isinstance(values, dict) and "from" in values and "to" in values:
                found.append(Change(_field_words(field), _value_words(values["from"]), _value_words(values["to"])))
    for key, value in details.items():
        if key.startswith("from_") and f"to_{key[5:]}" in details:
            found.append(Change(_field_words(key[5:]), _value_words(value), _value_words(details[f"to_{key[5:]}"])))
    return found


def _field_words(field: str) -> str:
    return field.replace("_", " ")


def _value_words(value: Any) -> str:
    if value is None or value == "" or value == []:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(_value_words(item) for item in value)
    return str(value)
