"""The staff console: attention counts, cross-workspace lists and details, actions, queue health
and the coverage registry. Routes parse, authorise (guards.py), call a service and render."""

from __future__ import annotations

from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from app.blueprints.fragments import fragment_of
from app.blueprints.staff import bp
from app.blueprints.staff.forms import SupersedeForm
from app.blueprints.staff.guards import is_staff_with, staff_executor, staff_viewer
from app.domain.errors import AccessDenied, Conflict, NotVisible, TransitionRefused, ValidationError
from app.domain.people.staff_rules import REASON_LIMIT, STAFF_EXECUTE
from app.domain.values.text_rules import database_id
from app.models import (
    ExportExecution,
    ExportFile,
    ExportPackage,
    ScheduleRun,
    Workspace,
)
from app.models.export_execution import ACTIVE_EXECUTION_STATUSES
from app.services.pages import list_pages
from app.services.staff import coverage_view, queue_health, staff_actions, staff_lists
from app.services.workspace_export import package_delivery_actions, package_history


def _record_or_404(model, record_id: int):
    record = staff_lists.find_record(model, record_id)
    if record is None:
        raise NotVisible(f"no {model.__name__} under that id")
    return record


def reason_error_category(form_id: str) -> str:
    """The flash category of a refused reason on the staff form `form_id`: the form shows it beside
    its field, and the page's own messages leave it out (base.html shows category "message")."""
    return f"reason:{form_id}"


@bp.app_context_processor
def staff_permissions():
    return {
        "staff_can_act": is_staff_with(STAFF_EXECUTE),
        "staff_reason_limit": REASON_LIMIT,
        "reason_error_category": reason_error_category,
    }


@bp.get("/")
@staff_viewer
def index():
    return render_template("staff/index.html", attention=staff_lists.attention(), queues=queue_health.all_queues())


@bp.get("/<any(files, runs, schedules, executions, packages, deliveries):kind>")
@staff_viewer
def records(kind: str):
    staff_list = staff_lists.LISTS[kind]
    page = staff_lists.list_page(staff_list, list_pages.read_request(staff_list.spec, request.args))
    return render_template(
        "staff/list.html",
        staff_list=staff_list,
        page=page,
        workspaces=staff_lists.workspace_choices(),
    )


@bp.get("/files/<int:file_id>")
@staff_viewer
def file(file_id: int):
    return render_template("staff/file.html", file=_record_or_404(ExportFile, file_id))


@bp.get("/runs/<int:run_id>")
@staff_viewer
def run(run_id: int):
    return render_template("staff/run.html", run=_record_or_404(ScheduleRun, run_id))


@bp.get("/executions/<int:execution_id>")
@staff_viewer
def execution(execution_id: int):
    found = _record_or_404(ExportExecution, execution_id)
    return render_template(
        "staff/execution.html",
        execution=found,
        package=package_history.package_of(found),
        stoppable=found.status in ACTIVE_EXECUTION_STATUSES,
    )


@bp.get("/packages/<int:package_id>")
@staff_viewer
def package(package_id: int):
    return render_template("staff/package.html", package=_record_or_404(ExportPackage, package_id))


@bp.post("/packages/<int:package_id>/delete")
@staff_executor
def delete_package(package_id: int):
    found = _record_or_404(ExportPackage, package_id)
    return _act(
        lambda: staff_actions.delete_package(found, current_user, request.form.get("reason")),
        "The package is deleted: its files are removed, and the workspace's administrators are told.",
        url_for("staff.package", package_id=found.id),
        "delete",
    )


@bp.route("/deliveries/<int:delivery_id>", methods=["GET", "POST"])
@staff_viewer
def delivery(delivery_id: int):
    """A package delivery with its attempts; staff with `staff.execute` may supersede a failed one
    and start its replacement (POST, with a reason kept in the audit log)."""
    view = package_delivery_actions.staff_view(delivery_id) if database_id(delivery_id) else None
    if view is None:
        raise NotVisible("no package delivery under that id")
    may_supersede = package_delivery_actions.can_supersede(current_user)
    form = SupersedeForm()
    error = None
    if request.method == "POST":
        if not may_supersede:
            abort(403)
        if form.validate():
            try:
                replacement_id = package_delivery_actions.supersede_and_replace(
                    delivery_id, current_user, form.reason.data
                )
            except (AccessDenied, ValidationError, TransitionRefused) as exc:
                error = exc
            else:
                flash(f"Delivery {delivery_id} superseded; its replacement, delivery {replacement_id}, has started.")
                return redirect(url_for("staff.delivery", delivery_id=replacement_id))
        else:
            error = ValidationError(next(iter(form.reason.errors), "The form could not be read."), field="reason")
        view = package_delivery_actions.staff_view(delivery_id)
    status = 400 if error else 200
    return render_template(
        "staff/delivery.html", view=view, form=form, error=error, may_supersede=may_supersede
    ), status


@bp.get("/workspaces/<int:workspace_id>")
@staff_viewer
def workspace(workspace_id: int):
    found = _record_or_404(Workspace, workspace_id)
    return render_template("staff/workspace.html", workspace=found, settings=package_history.settings_of(found.id))


def _act(action, done: str, back: str, form_id: str):
    """Run a staff action; what it did or its refusal is flashed on the page it came from, and a
    refused reason beside the reason field of the form `form_id` (staff/_reason.html). An action
    may return its own sentence of what it did instead of `done`."""
    try:
        said = action()
    except ValidationError as refused:
        flash(str(refused), reason_error_category(form_id) if refused.field == "reason" else "message")
    except (TransitionRefused, Conflict) as problem:
        flash(str(problem))
    else:
        flash(said or done)
    return redirect(back)


@bp.post("/workspaces/<int:workspace_id>/export/suspend")
@staff_executor
def suspend_export(workspace_id: int):
    found = _record_or_404(Workspace, workspace_id)
    return _act(
        lambda: staff_actions.suspend_export(found, current_user, request.form.get("reason")),
        "The workspace's export is suspended.",
        url_for("staff.workspace", workspace_id=found.id),
        "suspend",
    )


@bp.post("/workspaces/<int:workspace_id>/export/resume")
@staff_executor
def resume_export(workspace_id: int):
    found = _record_or_404(Workspace, workspace_id)
    return _act(
        lambda: staff_actions.resume_export(found, current_user, request.form.get("reason")),
        "The workspace's export is resumed.",
        url_for("staff.workspace", workspace_id=found.id),
        "resume",
    )


@bp.post("/executions/<int:execution_id>/stop")
@staff_executor
def stop_execution(execution_id: int):
    found = _record_or_404(ExportExecution, execution_id)
    # The attempt the page showed; one the database could not hold was not written by the page.
    seen = database_id(request.form.get("attempt", ""))
    back = url_for("staff.execution", execution_id=found.id)
    if seen is None:
        flash("The page was out of date; look at the execution again before stopping it.")
        return redirect(back)
    return _act(
        lambda: staff_actions.stop_execution(found, seen, current_user, request.form.get("reason")),
        "The workspace export is marked failed.",
        back,
        "stop",
    )


@bp.get("/queues")
@staff_viewer
def queues():
    return render_template("staff/queues.html", queues=queue_health.all_queues())


@bp.get("/queues/live")
@fragment_of("staff.queues")
@staff_viewer
def queues_live():
    """The queues' figures the page refreshes every few seconds (htmx)."""
    return render_template("staff/_queues.html", queues=queue_health.all_queues())


@bp.post("/queues/requeue")
@staff_executor
def requeue():
    job_id = (request.form.get("job_id") or "")[:200]
    return _act(
        lambda: staff_actions.requeue_failed_job(job_id, current_user, request.form.get("reason")),
        "The job's record was dispatched again.",
        url_for("staff.queues"),
        f"requeue-{job_id}",
    )


@bp.get("/coverage")
@staff_viewer
def coverage():
    return render_template("staff/coverage.html", registry=coverage_view.registry())
