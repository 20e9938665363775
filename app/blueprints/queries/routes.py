"""Queries: list, build, preview, change and delete saved queries, and request a file of one.

The builder is one ordinary form. Its buttons (add a filter, move a column, switch dataset…)
post the whole form back: without JavaScript to the page, which re-renders it; with htmx to
`builder`, which re-renders only the builder. Nothing is saved until "Save query".
"""

from __future__ import annotations

from flask import abort, flash, g, redirect, render_template, request, url_for

from app.blueprints.file_forms import file_from_request_form
from app.blueprints.fragments import fragment_of
from app.blueprints.guards import visible_or_404, workspace_member
from app.blueprints.queries import bp
from app.blueprints.queries.forms import MAX_FILTER_ROWS, FilterRow, QueryForm
from app.blueprints.query_vocabulary import query_vocabulary
from app.domain.errors import AccessDenied, ChangedMeanwhile, DomainError, ValidationError
from app.domain.people.access import can_change
from app.domain.sources.catalog import get_dataset
from app.domain.sources.query_spec import VALUELESS
from app.domain.sources.report_spec import QueryInUse
from app.domain.values import text_rules
from app.models.export_file import FileFormat
from app.services.files.file_requests import QueryFileOptions, request_query_file, workspace_time_zone
from app.services.pages import list_pages
from app.services.schedules import source_removal
from app.services.schedules.schedules import schedules_using_query
from app.services.sources import saved_queries
from app.services.sources.reports import reports_using_query
from app.services.sources.saved_queries import QueryListing
from app.vocabulary import Heading

bp.context_processor(query_vocabulary)


@bp.get("/")
@workspace_member
def index(workspace_id: int):
    listing = list_pages.read_request(saved_queries.QUERY_LIST, request.args)
    page = saved_queries.page_queries(g.access, listing)
    return render_template("queries/index.html", page=page, spec=saved_queries.QUERY_LIST)


@bp.route("/new", methods=["GET", "POST"])
@workspace_member
def new(workspace_id: int):
    if request.method == "GET":
        datasets = saved_queries.readable_datasets(g.access)
        return _builder_page(QueryForm.blank(datasets[0].name if datasets else ""), None)
    form = QueryForm.from_request(request.form)
    action = request.form.get("action", "save")
    if action != "save":
        return _rework(form, action, None)
    try:
        query = saved_queries.create_query(g.access, form.name, form.definition())
    except ValidationError as error:
        return _builder_page(form, None, error=error), 400
    flash(f"Saved “{query.name}”.")
    return redirect(url_for(".show", workspace_id=workspace_id, query_id=query.id))


@bp.get("/<int:query_id>")
@workspace_member
def show(workspace_id: int, query_id: int):
    listing = _visible_query(query_id)
    return _show_page(listing, show_preview=request.args.get("preview") == "1")


@bp.route("/<int:query_id>/edit", methods=["GET", "POST"])
@workspace_member
def edit(workspace_id: int, query_id: int):
    listing = _changeable_query(query_id)
    if request.method == "GET":
        return _builder_page(QueryForm.from_query(listing.query), listing)
    form = QueryForm.from_request(request.form)
    action = request.form.get("action", "save")
    if action != "save":
        return _rework(form, action, listing)
    try:
        query = saved_queries.update_query(g.access, listing.query, form.name, form.definition(), form.expected_version)
    except ValidationError as error:
        return _builder_page(form, listing, error=error), 400
    except ChangedMeanwhile as changed:
        reload_url = url_for(".edit", workspace_id=workspace_id, query_id=query_id)
        return _builder_page(form, listing, error=changed, reload_url=reload_url), 409
    flash(f"Saved “{query.name}” as version {query.version}.")
    return redirect(url_for(".show", workspace_id=workspace_id, query_id=query.id))


@bp.route("/<int:query_id>/delete", methods=["GET", "POST"])
@workspace_member
def delete(workspace_id: int, query_id: int):
    listing = _changeable_query(query_id)
    if request.method == "GET":
        used_by = reports_using_query(workspace_id, listing.query.id)
        scheduled_by = schedules_using_query(workspace_id, listing.query.id)
        return render_template("queries/delete.html", listing=listing, used_by=used_by, scheduled_by=scheduled_by)
    try:
        source_removal.delete_query(g.access, listing.query)
    except QueryInUse as refusal:
        return render_template(
            "queries/delete.html", listing=listing, used_by=refusal.report_names, scheduled_by=refusal.schedule_names
        ), 409
    flash(f"Deleted “{listing.query.name}”.")
    return redirect(url_for(".index", workspace_id=workspace_id))


@bp.post("/builder")
@fragment_of("queries.new")
@workspace_member
def builder(workspace_id: int):
    """The builder part of the form, re-rendered after a builder button or a changed choice."""
    form = QueryForm.from_request(request.form)
    focus = form.apply(request.form.get("action", "refresh"))
    return render_template(
        "queries/_builder.html",
        form=form,
        datasets=saved_queries.readable_datasets(g.access),
        error=None,
        focus=focus,
    )


@bp.get("/values")
@fragment_of("queries.new")
@workspace_member
def filter_values(workspace_id: int):
    """One filter row's value field, fetched by htmx when its column or condition is chosen: a
    list of the values the column holds in the rows the person may read, when they are few."""
    try:
        # Without a row number (the address typed or shared bare) it is the first row's field.
        index = text_rules.whole_number(request.args.get("index", "0"), "index", "not a row", 0, MAX_FILTER_ROWS - 1)
    except ValidationError:
        abort(404)
    row = FilterRow(
        column=request.args.get("column", ""),
        op=request.args.get("op", ""),
        value=request.args.get("value", ""),
        picked=request.args.getlist("picked"),
    )
    dataset = get_dataset(request.args.get("dataset", ""))
    column = dataset.column(row.column) if dataset else None
    choices = None
    if dataset is not None and column is not None and row.op not in VALUELESS:
        choices = saved_queries.offered_values(g.access, dataset.name, column.name)
    return render_template("queries/_filter_value.html", i=index, f=row, column=column, choices=choices, error=None)


@bp.post("/preview")
@fragment_of("queries.new")
@workspace_member
def preview_draft(workspace_id: int):
    """Preview of the form as it is now, saved or not."""
    return render_template("queries/_preview.html", **_preview(QueryForm.from_request(request.form).definition()))


@bp.get("/<int:query_id>/preview")
@fragment_of("queries.show")
@workspace_member
def preview(workspace_id: int, query_id: int):
    listing = _visible_query(query_id)
    return render_template("queries/_preview.html", **_preview(listing.query.definition()))


@bp.post("/<int:query_id>/files")
@workspace_member
def request_file(workspace_id: int, query_id: int):
    listing = _visible_query(query_id)
    options = QueryFileOptions(
        format=request.form.get("format", ""),
        heading=request.form.get("heading", Heading.NAMES),
        include_descriptions=bool(request.form.get("include_descriptions")),
        exact_values=bool(request.form.get("exact_values")),
        time_stamps=request.form.get("time_stamps", "workspace"),
    )
    try:
        return file_from_request_form(
            options.choices(),
            lambda key: request_query_file(g.access, listing.query, options, key),
        )
    except ValidationError as error:
        return _show_page(listing, file_error=error, file_options=options), 400


def _visible_query(query_id: int) -> QueryListing:
    """The query, or 404 when it is not in this workspace or its dataset is not readable."""
    return visible_or_404(saved_queries.get_query, query_id)


def _changeable_query(query_id: int) -> QueryListing:
    """The query, or 404 unless the person may also change it (its owner or an administrator)."""
    return visible_or_404(saved_queries.get_query, query_id, to_change=lambda listing: listing.query)


def _rework(form: QueryForm, action: str, listing: QueryListing | None):
    """A builder button pressed without JavaScript: the page again, changed, nothing saved."""
    if action == "preview":
        return _builder_page(form, listing, preview=_preview(form.definition()))
    return _builder_page(form, listing, focus=form.apply(action))


def _builder_page(
    form: QueryForm,
    listing: QueryListing | None,
    error: DomainError | None = None,
    preview: dict | None = None,
    focus: str | None = None,
    reload_url: str | None = None,
):
    return render_template(
        "queries/form.html",
        form=form,
        listing=listing,
        datasets=saved_queries.readable_datasets(g.access),
        error=error,
        reload_url=reload_url,
        preview=preview,
        focus=focus,
    )


def _show_page(
    listing: QueryListing,
    file_error: Exception | None = None,
    file_options: QueryFileOptions | None = None,
    show_preview: bool = False,
):
    return render_template(
        "queries/show.html",
        listing=listing,
        dataset=get_dataset(listing.query.dataset),
        can_change=can_change(g.access, listing.query),
        file_error=file_error,
        file_options=file_options or QueryFileOptions(format=FileFormat.CSV),
        workspace_time_zone=workspace_time_zone(g.access.workspace_id),
        request_token=text_rules.new_request_token(),
        preview=_preview(listing.query.definition()) if show_preview else None,
    )


def _preview(definition: dict) -> dict:
    """What _preview.html shows: the rows, or why there are none. Bad input is a message, never a 500."""
    try:
        return {"result": saved_queries.preview(g.access, definition), "preview_error": None}
    except (ValidationError, AccessDenied) as error:
        return {"result": None, "preview_error": error}
