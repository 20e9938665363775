"""Links between staff record pages: a column that refers to another record (by its foreign key)
links to that record's staff page when the console has one, so staff follow a file to its run,
a package to its execution or a delivery to its package without typing ids into addresses."""

from __future__ import annotations

from typing import Any

from flask import url_for
from sqlalchemy import Column

from app.blueprints.staff import bp

# The referred table → the staff page of one of its records and that page's URL argument.
STAFF_PAGES = {
    "workspaces": ("staff.workspace", "workspace_id"),
    "query_exports": ("staff.file", "file_id"),
    "schedule_runs": ("staff.run", "run_id"),
    "data_export_executions": ("staff.execution", "execution_id"),
    "data_export_artifacts": ("staff.package", "package_id"),
    "data_export_deliveries": ("staff.delivery", "delivery_id"),
}


@bp.app_template_global()
def staff_record_url(column: Column, value: object) -> str | None:
    """The staff page of the record `column` (holding `value`) refers to, or None when it refers to none."""
    if value is None:
        return None
    for foreign_key in column.foreign_keys:
        page = STAFF_PAGES.get(foreign_key.column.table.name)
        if page is not None:
            endpoint, argument = page
            arguments: dict[str, Any] = {argument: value}
            return url_for(endpoint, **arguments)
    return None
