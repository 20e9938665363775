"""Schedules: list, create, edit and delete them, pause, resume, take ownership, run now, and
see their runs.

Every route loads the schedule through `visible_or_404`: a person without schedule-management
authority finds only their own schedules, and anything else answers 404. With htmx the form
shows the next five occurrences as the timetable is typed (`upcoming`), and the schedule page
refreshes its run history while a run is active (`runs`, which answers 286 once none is).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import abort, flash, g, redirect, render_template, request, url_for
from flask_htmx.responses import HTMXResponseStopPolling

from app.blueprints.form_refusals import form_refusals
from app.blueprints.fragments import fragment_of
from app.blueprints.guards import visible_or_404, workspace_member
from app.blueprints.schedules import bp
from app.blueprints.schedules.forms import ConfirmForm, ScheduleForm, TimetableFields
from app.domain.errors import ChangedMeanwhile, DomainError, TransitionRefused, ValidationError
from app.domain.schedules import attachment_rules, schedule_rules, send_conditions
from app.domain.timing.timetable import WEEKDAY_KEYS, WEEKDAY_NAMES, TimetableKind
from app.domain.values import text_rules
from app.domain.values.text_rules import opened_version
from app.domain.values.time_zones import zone_suggestions
from app.models.export_destination import MAX_DESTINATIONS
from app.models.export_file import FORMAT_LABELS, FileFormat
from app.models.schedule import ACTIVE_RUN_STATUSES, MAX_RECIPIENTS
from app.services.accounts import workspaces
from app.services.destinations import registry
from app.services.files.file_requests import HEADINGS
from app.services.pages import list_pages
from app.services.schedules import (
    attachment_policy,
    destination_deliveries,
    destination_work,
    schedule_form,
    schedule_history,
    schedules,
)
from app.services.schedules.schedules import ScheduleListing

FREQUENCIES = {
    TimetableKind.HOURLY: "Every hour",
    TimetableKind.DAILY: "Every day",
    TimetableKind.WEEKLY: "On chosen days of the week",
    TimetableKind.MONTHLY: "Once a month",
    TimetableKind.CRON: "Cron expression",
}


@bp.context_processor
def vocabulary() -> dict:
    return {
        "frequencies": FREQUENCIES,
        "weekdays": list(zip(WEEKDAY_KEYS, WEEKDAY_NAMES, strict=True)),
        "formats": FORMAT_LABELS,
        "headings": HEADINGS,
        "send_condition_labels": send_conditions.LABELS,
        "send_condition_meanings": send_conditions.MEANINGS,
        "run_as_recipients_people_only": schedule_rules.RUN_AS_RECIPIENTS_PEOPLE_ONLY,
        "run_as_recipients_destinations": schedule_rules.RUN_AS_RECIPIENTS_DESTINATIONS,
        "max_recipients": MAX_RECIPIENTS,
        "max_destinations": MAX_DESTINATIONS,
        "in_schedule_zone": _in_schedule_zone,
    }


def _in_schedule_zone(schedule, moment) -> str:
    """A time as the schedule's own clock reads it (its zone named), for lists and run history."""
    shown = schedule_history.in_schedule_zone(schedule, moment)
    return shown.schedule_label if shown else "—"


def _visible_or_404(schedule_id: int) -> ScheduleListing:
    return visible_or_404(schedules.get_schedule, schedule_id)


def _render_form(
    form: ScheduleForm,
    listing: ScheduleListing | None,
    error: DomainError | None = None,
    status: int = 200,
    reload_url: str | None = None,
):
    return render_template(
        "schedules/form.html",
        form=form,
        listing=listing,
        error=error,
        reload_url=reload_url,
        sources=schedules.source_choices(g.access),
        people=workspaces.members_by_name(g.workspace_id),
        templates=schedules.published_template_versions(g.workspace_id),
        workspace_zone=schedules.workspace_zone(g.workspace_id),
        zone_suggestions=zone_suggestions(),
        may_add_addresses=g.access.has_grant(schedules.EXTERNAL_GRANT),
        attachment_limit_mb=attachment_policy.limit_mb(g.workspace_id),
        attachment_not_allowed=attachment_rules.NOT_ALLOWED,
        destinations=registry.list_destinations(g.workspace_id),
        chosen_destinations=listing.schedule.destinations if listing else [],
        may_choose_destinations=g.access.is_admin,
        **_upcoming(form),
    ), status


def _upcoming(form: TimetableFields) -> dict:
    try:
        return {
            "upcoming": schedule_history.upcoming(
                form.timetable(), g.workspace_id, form.viewer_zone.data or "", form.send_condition.data or ""
            ),
            "upcoming_error": None,
        }
    except ValidationError as error:
        return {"upcoming": None, "upcoming_error": error}


@bp.get("/")
@workspace_member
def index(workspace_id: int):
    return render_template(
        "schedules/index.html",
        page=schedules.page_schedules(g.access, list_pages.read_request(schedules.SCHEDULE_LIST, request.args)),
        spec=schedules.SCHEDULE_LIST,
        manages_all=schedules.manages_all(g.access),
    )


@bp.route("/new", methods=["GET", "POST"])
@workspace_member
def new(workspace_id: int):
    form = ScheduleForm()
    if request.method == "GET":
        wanted = request.args.get("source", "")
        form.fill(
            schedules.ScheduleInput(
                source=wanted if isinstance(wanted, str) else "",
                format=FileFormat.CSV,
                timetable={
                    "kind": TimetableKind.DAILY,
                    "time": "07:00",
                    "zone": schedules.workspace_zone(workspace_id),
                },
            ),
            0,
        )
        form.version.data = ""
        return _render_form(form, None)
    if not form.validate():
        return _render_form(form, None, form_refusals(form), 400)
    try:
        schedule = schedule_form.save_schedule(g.access, None, form.schedule_input())
    except ValidationError as error:
        return _render_form(form, None, error, 400)
    flash(f"Schedule “{schedule.name}” saved.")
    return redirect(url_for(".show", workspace_id=workspace_id, schedule_id=schedule.id))


@bp.post("/upcoming")
@fragment_of("schedules.new")
@workspace_member
def upcoming(workspace_id: int):
    """The next five occurrences of the timetable as typed, in its zone and the viewer's (htmx)."""
    form = TimetableFields()
    if not form.validate():
        return render_template("schedules/_upcoming.html", upcoming=None, upcoming_error=form_refusals(form))
    return render_template("schedules/_upcoming.html", **_upcoming(form))


@bp.get("/<int:schedule_id>")
@workspace_member
def show(workspace_id: int, schedule_id: int):
    return _show_page(_visible_or_404(schedule_id))


def _show_page(listing: ScheduleListing, error: DomainError | None = None, status: int = 200):
    schedule = listing.schedule
    history = _run_history(schedule, request.args)
    events = schedule_history.history_events(schedule)
    former_owners = {
        event.details.get("from_owner_id") for event, _ in events if event.action == "schedule.ownership_taken"
    }
    return render_template(
        "schedules/show.html",
        listing=listing,
        schedule=schedule,
        moved_on=schedules.source_moved_on(schedule),
        history=history,
        events=events,
        owner_names=schedule_history.person_names({owner for owner in former_owners if isinstance(owner, int)}),
        recipient_names=schedule_history.person_names({r.person_id for r in schedule.recipients if r.person_id}),
        unsubscribed=schedule_history.unsubscribed_since(schedule),
        template_name=_template_name(schedule),
        manages_all=schedules.manages_all(g.access),
        blockers=schedules.resume_blockers(schedule, legacy_confirmed=True) if schedule.status == "paused" else [],
        form=ConfirmForm(formdata=None),
        run_now_token=text_rules.new_request_token(),
        may_retry_destinations=g.access.is_admin,
        error=error,
    ), status


def _run_history(schedule, args) -> schedule_history.RunHistory:
    return schedule_history.run_history(
        schedule,
        list_pages.read_request(schedule_history.RUN_LIST, args),
        request.cookies.get(schedule_history.VIEWER_ZONE_COOKIE),
    )


def _template_name(schedule) -> str | None:
    for version, name in schedules.published_template_versions(schedule.workspace_id):
        if version.id == schedule.template_version_id:
            return f"{name} (version {version.number})"
    return None


@bp.get("/<int:schedule_id>/runs")
@fragment_of("schedules.show")
@workspace_member
def runs(workspace_id: int, schedule_id: int):
    """The run history's first page (only the first page polls); HTTP 286 stops htmx polling once
    no run is queued or running."""
    listing = _visible_or_404(schedule_id)
    history = _run_history(listing.schedule, {})
    body = render_template(
        "schedules/_runs.html", schedule=listing.schedule, history=history, may_retry_destinations=g.access.is_admin
    )
    return body if history.active else HTMXResponseStopPolling(body)


@bp.route("/<int:schedule_id>/edit", methods=["GET", "POST"])
@workspace_member
def edit(workspace_id: int, schedule_id: int):
    listing = _visible_or_404(schedule_id)
    form = ScheduleForm()
    if request.method == "GET":
        form.fill(schedule_form.input_of(listing.schedule), listing.schedule.version)
        return _render_form(form, listing)
    if not form.validate():
        return _render_form(form, listing, form_refusals(form), 400)
    try:
        expected = _opened_version(form.version.data)
        schedule = schedule_form.save_schedule(g.access, listing.schedule, form.schedule_input(), expected)
    except ValidationError as error:
        return _render_form(form, listing, error, 400)
    except ChangedMeanwhile as changed:
        reload_url = url_for(".edit", workspace_id=workspace_id, schedule_id=schedule_id)
        return _render_form(form, listing, changed, 409, reload_url)
    flash(f"Schedule “{schedule.name}” saved.")
    return redirect(url_for(".show", workspace_id=workspace_id, schedule_id=schedule.id))


def _opened_version(text: str | None) -> int | None:
    return opened_version(text or "")


@bp.route("/<int:schedule_id>/delete", methods=["GET", "POST"])
@workspace_member
def delete(workspace_id: int, schedule_id: int):
    listing = _visible_or_404(schedule_id)
    if request.method == "GET":
        return render_template("schedules/delete.html", listing=listing, form=ConfirmForm(formdata=None))
    schedules.delete_schedule(g.access, listing.schedule)
    flash(f"Schedule “{listing.schedule.name}” deleted. The files it made stay on the Files page.")
    return redirect(url_for(".index", workspace_id=workspace_id))


def _act(schedule_id: int, action, done: str | Callable[[Any], str]):
    """Run one of the schedule page's buttons; a refusal shows the page with its message. `done`
    is the sentence to flash, or makes it from what the action returned."""
    listing = _visible_or_404(schedule_id)
    form = ConfirmForm()
    if not form.validate():
        return _show_page(listing, form_refusals(form), 400)
    try:
        result = action(listing, form)
    except ValidationError as error:
        return _show_page(listing, error, 400)
    flash(done(result) if callable(done) else done)
    return redirect(url_for(".show", workspace_id=g.workspace_id, schedule_id=schedule_id))


@bp.post("/<int:schedule_id>/pause")
@workspace_member
def pause(workspace_id: int, schedule_id: int):
    return _act(
        schedule_id,
        lambda listing, form: schedules.pause_schedule(g.access, listing.schedule),
        "Schedule paused. It sends nothing until it is resumed.",
    )


@bp.post("/<int:schedule_id>/resume")
@workspace_member
def resume(workspace_id: int, schedule_id: int):
    return _act(
        schedule_id,
        lambda listing, form: schedules.resume_schedule(
            g.access, listing.schedule, legacy_confirmed=bool(form.legacy_switched_off.data)
        ),
        "Schedule resumed. It runs at its next occurrence.",
    )


@bp.post("/<int:schedule_id>/take-ownership")
@workspace_member
def take_ownership(workspace_id: int, schedule_id: int):
    return _act(
        schedule_id,
        lambda listing, form: schedules.take_ownership(g.access, listing.schedule),
        "You own this schedule now: its runs use your access.",
    )


@bp.post("/<int:schedule_id>/run-now")
@workspace_member
def run_now(workspace_id: int, schedule_id: int):
    return _act(
        schedule_id,
        lambda listing, form: schedules.run_now(
            g.access, listing.schedule, text_rules.request_key(request.form.get("request_token"), {})
        ),
        _run_now_sentence,
    )


def _run_now_sentence(outcome: schedules.RunNow) -> str:
    if outcome.admitted:
        return "A run was started. Its progress shows below; the timetable is unchanged."
    if outcome.run.status in ACTIVE_RUN_STATUSES:
        return "A run started by hand is already under way, so no other was started. Its progress shows below."
    return "This press of Run now was answered already: its run shows below."


@bp.post("/<int:schedule_id>/destination-deliveries/<int:delivery_id>/retry")
@workspace_member
def retry_destination_delivery(workspace_id: int, schedule_id: int, delivery_id: int):
    """An administrator's Retry of a run's failed delivery to a destination; the form names the
    attempt the page showed, so a second press of the same page is refused, not repeated."""
    listing = _visible_or_404(schedule_id)
    if not g.access.is_admin:
        abort(404)
    form = ConfirmForm()
    if not form.validate():
        return _show_page(listing, form_refusals(form), 400)
    seen_attempt = text_rules.database_id(request.form.get("attempt"))
    if seen_attempt is None:
        return _show_page(listing, ValidationError("The page was out of date; reload it and try again."), 400)
    try:
        destination_deliveries.retry(listing.schedule.id, delivery_id, seen_attempt, g.access.person_id)
    except TransitionRefused as refused:
        return _show_page(listing, refused, 409)
    destination_work.dispatch([delivery_id])
    flash("The delivery is being tried again; its new attempt shows in the run's Destinations table.")
    return redirect(url_for(".show", workspace_id=g.workspace_id, schedule_id=schedule_id))


@bp.post("/<int:schedule_id>/refresh-source")
@workspace_member
def refresh_source(workspace_id: int, schedule_id: int):
    return _act(
        schedule_id,
        lambda listing, form: schedules.refresh_from_query(g.access, listing.schedule),
        "The schedule now sends the saved query as it is now.",
    )
