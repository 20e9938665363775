"""Reports: list, create, edit, delete, preview, and request a file of one.

The form is one ordinary form. Without JavaScript its "refresh" and "preview" buttons post it
back to the page, which re-renders it; with htmx, `form_fields` re-renders only the part that
depends on the query and kind, and `draft_preview` shows the first page. Nothing is saved
until "Save report".
"""

from __future__ import annotations

from flask import flash, g, redirect, render_template, request, url_for

from app.blueprints.file_forms import file_from_request_form
from app.blueprints.fragments import fragment_of
from app.blueprints.guards import visible_or_404, workspace_member
from app.blueprints.reports import bp
from app.blueprints.reports.forms import ReportForm
from app.domain.errors import AccessDenied, ChangedMeanwhile, DomainError, ValidationError
from app.domain.people.access import can_change
from app.domain.sources.catalog import get_dataset
from app.domain.sources.report_spec import FIGURE_FUNCTIONS, KIND_LABELS
from app.domain.values import text_rules
from app.models.report import PAGE_SIZES
from app.services.files import report_files
from app.services.pages import list_pages
from app.services.schedules import source_removal
from app.services.sources import reports
from app.services.sources.reports import ReportListing


@bp.context_processor
def vocabulary() -> dict:
    return {"get_dataset": get_dataset}


def _listing_or_404(report_id: int) -> ReportListing:
    return visible_or_404(reports.get_report, report_id)


def _changeable_or_404(report_id: int) -> ReportListing:
    """The report, or 404 unless the person may also change it (its owner or an administrator)."""
    return visible_or_404(reports.get_report, report_id, to_change=lambda listing: listing.report)


def _render_form(
    form: ReportForm,
    report: ReportListing | None,
    error: DomainError | None = None,
    status: int = 200,
    preview: dict | None = None,
    reload_url: str | None = None,
):
    queries = reports.usable_queries(g.access)
    query = next((q for q in queries if str(q.id) == form.source_query_id), None)
    return (
        render_template(
            "reports/form.html",
            form=form,
            listing=report,
            queries=queries,
            query=query,
            error=error,
            reload_url=reload_url,
            preview=preview,
            kinds=KIND_LABELS,
            functions=FIGURE_FUNCTIONS,
            page_sizes=PAGE_SIZES,
        ),
        status,
    )


def _draft_preview(form: ReportForm) -> dict:
    """The preview fragment's context for what the form describes, or the reason there is none."""
    try:
        report, query = reports.draft_report(g.access, form.data())
        return {"preview": reports.preview_report(g.access, report, query), "error": None}
    except (ValidationError, AccessDenied) as exc:
        return {"preview": None, "error": str(exc)}


def _rework(form: ReportForm, action: str, listing: ReportListing | None):
    """A form button other than save, posted without JavaScript: show the form again."""
    return _render_form(form, listing, preview=_draft_preview(form) if action == "preview" else None)


@bp.get("/")
@workspace_member
def index(workspace_id: int):
    return render_template(
        "reports/index.html",
        page=reports.page_reports(g.access, list_pages.read_request(reports.REPORT_LIST, request.args)),
        spec=reports.REPORT_LIST,
        has_queries=bool(reports.usable_queries(g.access)),
        kinds=KIND_LABELS,
    )


@bp.route("/new", methods=["GET", "POST"])
@workspace_member
def new(workspace_id: int):
    if request.method == "GET":
        queries = reports.usable_queries(g.access)
        wanted = request.args.get("query", "")
        query = next((q for q in queries if str(q.id) == wanted), queries[0] if queries else None)
        return _render_form(ReportForm.blank(query), None)
    form = ReportForm.from_request(request.form)
    action = request.form.get("action", "save")
    if action != "save":
        return _rework(form, action, None)
    try:
        report = reports.create_report(g.access, form.data())
    except ValidationError as exc:
        return _render_form(form, None, exc, 400)
    flash(f"Report “{report.name}” saved.")
    return redirect(url_for("reports.detail", workspace_id=workspace_id, report_id=report.id))


@bp.post("/form")
@fragment_of("reports.new")
@workspace_member
def form_fields(workspace_id: int):
    """The part of the form that depends on the chosen query and kind (htmx)."""
    form = ReportForm.from_request(request.form)
    queries = reports.usable_queries(g.access)
    query = next((q for q in queries if str(q.id) == form.source_query_id), None)
    if query is not None and request.form.get("changed") == "source_query_id":
        # A different query has different columns: start from all of them.
        form.columns, form.widths = list(query.columns), {}
    return render_template(
        "reports/_layout_fields.html", form=form, query=query, functions=FIGURE_FUNCTIONS, kinds=KIND_LABELS
    )


@bp.post("/preview")
@fragment_of("reports.new")
@workspace_member
def draft_preview(workspace_id: int):
    """The first page of the report as the form describes it, before it is saved (htmx)."""
    return render_template("reports/_preview.html", **_draft_preview(ReportForm.from_request(request.form)))


@bp.get("/<int:report_id>")
@workspace_member
def detail(workspace_id: int, report_id: int):
    listing = _listing_or_404(report_id)
    return _render_detail(listing)


def _render_detail(listing: ReportListing, error: ValidationError | None = None, status: int = 200):
    return (
        render_template(
            "reports/detail.html",
            listing=listing,
            formats=report_files.format_choices(listing.report),
            files=report_files.recent_files(g.access, listing.report.id),
            can_change=can_change(g.access, listing.report),
            kinds=KIND_LABELS,
            error=error,
            request_token=text_rules.new_request_token(),
        ),
        status,
    )


@bp.get("/<int:report_id>/preview")
@fragment_of("reports.detail")
@workspace_member
def preview(workspace_id: int, report_id: int):
    listing = _listing_or_404(report_id)
    try:
        result = reports.preview_report(g.access, listing.report, listing.query)
    except (ValidationError, AccessDenied) as exc:
        return render_template("reports/_preview.html", preview=None, error=str(exc))
    return render_template("reports/_preview.html", preview=result, error=None)


@bp.route("/<int:report_id>/edit", methods=["GET", "POST"])
@workspace_member
def edit(workspace_id: int, report_id: int):
    listing = _changeable_or_404(report_id)
    if request.method == "GET":
        return _render_form(ReportForm.from_report(listing.report), listing)
    form = ReportForm.from_request(request.form)
    action = request.form.get("action", "save")
    if action != "save":
        return _rework(form, action, listing)
    try:
        report = reports.update_report(g.access, listing.report, form.data(), form.expected_version)
    except ValidationError as exc:
        return _render_form(form, listing, exc, 400)
    except ChangedMeanwhile as changed:
        reload_url = url_for(".edit", workspace_id=workspace_id, report_id=report_id)
        return _render_form(form, listing, changed, 409, reload_url=reload_url)
    flash(f"Report “{report.name}” saved (version {report.version}).")
    return redirect(url_for("reports.detail", workspace_id=workspace_id, report_id=report.id))


@bp.route("/<int:report_id>/delete", methods=["GET", "POST"])
@workspace_member
def delete(workspace_id: int, report_id: int):
    listing = _changeable_or_404(report_id)
    if request.method == "GET":
        return render_template("reports/delete.html", listing=listing)
    source_removal.delete_report(g.access, listing.report)
    flash(f"Report “{listing.report.name}” deleted. Its files stay on the Files page.")
    return redirect(url_for("reports.index", workspace_id=workspace_id))


@bp.post("/<int:report_id>/files")
@workspace_member
def request_file(workspace_id: int, report_id: int):
    listing = _listing_or_404(report_id)
    file_format = request.form.get("format", "")
    try:
        return file_from_request_form(
            {"format": file_format},
            lambda key: report_files.request_report_file(g.access, listing.report, file_format, key),
        )
    except ValidationError as exc:
        return _render_detail(listing, exc, 400)
