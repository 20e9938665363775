"""Template filters and globals: dates, sizes, durations, the workspace header."""

from __future__ import annotations

from datetime import datetime

from flask import Flask

from app.blueprints.navigation import workspace_navigation
from app.domain.destinations import destination_input, destination_rules
from app.domain.people import audit_vocabulary
from app.domain.schedules import attachment_rules, communication_template, schedule_rules
from app.domain.sources import report_spec
from app.domain.sources.catalog import dataset_label
from app.domain.sources.query_spec import operator_phrase
from app.domain.timing import progress_pace
from app.domain.values.durations import duration_label
from app.domain.values.sizes import size_label
from app.models import export_destination
from app.models.export_file import FailureCode, FileFormat, FileKind, FileStatus
from app.models.export_settings import PACKAGE_FORMAT_LABELS
from app.models.report import ReportKind
from app.models.schedule import ScheduleKind
from app.models.types import utcnow
from app.services.pages import list_pages
from app.services.sources import saved_queries

# Each text input's `maxlength`, read from the rule that judges the value on the server: the page
# stops typing where the rule would refuse, and no template writes a limit of its own.
TEXT_LIMITS = {
    "list_search": list_pages.SEARCH_LIMIT,
    "list_filter_text": list_pages.FILTER_TEXT_LIMIT,
    "schedule_name": schedule_rules.NAME.limit,
    "template_name": communication_template.MAX_NAME,
    "template_subject": communication_template.MAX_SUBJECT,
    "query_name": saved_queries.NAME_LIMIT,
    "report_name": report_spec.NAME_LIMIT,
    "report_title": report_spec.TITLE_LIMIT,
    "report_subtitle": report_spec.SUBTITLE_LIMIT,
    "figure_label": report_spec.FIGURE_LABEL_LIMIT,
    "destination_name": destination_input.NAME_LIMIT,
    "bucket": destination_input.BUCKET_LIMIT,
    "region": destination_input.REGION_LIMIT,
    "endpoint_url": destination_rules.ENDPOINT_LIMIT,
    "access_key_id": destination_input.ACCESS_KEY_LIMIT,
    "role_arn": export_destination.ROLE_ARN_LIMIT,
    "message_url": export_destination.MESSAGE_URL_LIMIT,
    "sftp_host": destination_rules.HOST_LIMIT,
    "sftp_username": destination_input.USERNAME_LIMIT,
    "destination_path": destination_rules.PATH_LIMIT,
}


def format_datetime(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value else "—"


def format_datetime_seconds(value: datetime | None) -> str:
    """A time to the second, where events a few seconds apart must read apart (an event log)."""
    return value.strftime("%Y-%m-%d %H:%M:%S UTC") if value else "—"


def format_bytes(size: int | None) -> str:
    return "—" if size is None else size_label(size)


def format_duration(seconds: int | None) -> str:
    return "—" if seconds is None else duration_label(seconds)


def register(app: Flask) -> None:
    app.jinja_env.filters["datetime"] = format_datetime
    app.jinja_env.filters["datetime_seconds"] = format_datetime_seconds
    app.jinja_env.filters["bytes"] = format_bytes
    app.jinja_env.filters["duration"] = format_duration
    app.jinja_env.globals["now"] = utcnow
    app.jinja_env.globals["text_limits"] = TEXT_LIMITS
    app.jinja_env.globals["rows_per_second"] = progress_pace.rows_per_second
    app.jinja_env.globals["seconds_left"] = progress_pace.seconds_left
    app.jinja_env.globals["FileStatus"] = FileStatus
    app.jinja_env.globals["FailureCode"] = FailureCode
    app.jinja_env.globals["FileKind"] = FileKind
    app.jinja_env.globals["FileFormat"] = FileFormat
    app.jinja_env.globals["ReportKind"] = ReportKind
    app.jinja_env.globals["ScheduleKind"] = ScheduleKind
    app.jinja_env.globals["workspace_navigation"] = workspace_navigation
    app.jinja_env.globals["dataset_label"] = dataset_label
    app.jinja_env.globals["operator_phrase"] = operator_phrase
    app.jinja_env.filters["dataset_label"] = dataset_label
    app.jinja_env.globals["PACKAGE_FORMAT_LABELS"] = PACKAGE_FORMAT_LABELS
    # Codes become sentences on every page through the one vocabulary.
    app.jinja_env.globals["action_sentence"] = audit_vocabulary.action_sentence
    app.jinja_env.globals["reason_sentence"] = audit_vocabulary.reason_sentence
    app.jinja_env.globals["skip_sentence"] = audit_vocabulary.skip_sentence
    app.jinja_env.globals["attachment_delivery_words"] = attachment_rules.delivery_words
    app.jinja_env.globals["audit_changes"] = audit_vocabulary.changes
