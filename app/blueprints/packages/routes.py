"""Workspace export: the overview with Export now, an execution's page (live while it runs), the
package list (search, filters, pages), a package's page with its volumes, checksums and
deliveries (Retry a failed one, Deliver a withheld one), downloads, and early deletion.

Workspace administrators only: everyone else gets 404, as for anything they may not see. Every
execution and package is loaded within the URL's workspace, so another workspace's id is 404 too.
"""

from __future__ import annotations

from collections.abc import Callable

from flask import current_app, flash, g, redirect, render_template, request, url_for
from flask_htmx.responses import HTMXResponseStopPolling
from flask_login import current_user

from app.blueprints.downloads import stored_file_response
from app.blueprints.fragments import fragment_of
from app.blueprints.guards import visible_or_404, workspace_administrator, workspace_member
from app.blueprints.packages import bp
from app.blueprints.packages.forms import ActionForm, DeletePackageForm, RetryDeliveryForm
from app.domain.errors import TransitionRefused
from app.domain.people.access import RequesterContext
from app.models.export_destination import ANNOUNCING_KINDS
from app.models.export_execution import (
    ACTIVE_EXECUTION_STATUSES,
    ExecutionPhase,
    ExecutionStatus,
    ExecutionTrigger,
    ExportExecution,
)
from app.models.export_package import ExportPackage, ExportVolume, PackageStatus
from app.models.export_settings import PACKAGE_FORMAT_DESCRIPTIONS
from app.models.package_delivery import ExportDelivery
from app.services.pages import list_pages
from app.services.workspace_export import (
    execution_admission,
    export_notices,
    package_delivery,
    package_delivery_actions,
    package_history,
    package_retention,
)
from app.services.workspace_export.execution_admission import AdmissionRefused
from app.services.workspace_export.package_history import PackageUnavailable
from app.storage import StorageError

# How often the execution page asks for its live part while the execution has not settled.
POLL_SECONDS = 2


@bp.context_processor
def vocabulary() -> dict:
    return {
        "phases": list(ExecutionPhase),
        "ExecutionStatus": ExecutionStatus,
        "failure_sentence": package_history.failure_sentence,
        "settings_url": _settings_url,
        "poll_seconds": POLL_SECONDS,
    }


def _settings_url() -> str:
    return url_for("export_settings.settings", workspace_id=g.workspace_id)


def _execution_or_404(execution_id: int) -> ExportExecution:
    return visible_or_404(package_history.get_execution, execution_id)


def _package_or_404(package_id: int) -> ExportPackage:
    return visible_or_404(package_history.get_package, package_id)


# Overview and Export now


@bp.get("/")
@workspace_administrator
def overview(workspace_id: int):
    return _overview_page()


def _overview_page(refusal: AdmissionRefused | None = None, status: int = 200):
    return render_template(
        "packages/overview.html",
        settings=package_history.settings_of(g.workspace_id),
        allowance=execution_admission.allowance(g.workspace_id),
        running_id=execution_admission.active_execution_id(g.workspace_id),
        executions=package_history.recent_executions(g.workspace_id),
        packages=package_history.recent_packages(g.workspace_id),
        form=ActionForm(formdata=None),
        refusal=refusal,
    ), status


@bp.post("/executions")
@workspace_administrator
def export_now(workspace_id: int):
    form = ActionForm()
    if not form.validate():
        return _overview_page(AdmissionRefused("The form expired. Reload the page and try again."), 400)
    try:
        execution = execution_admission.admit(workspace_id, current_user, ExecutionTrigger.MANUAL)
    except AdmissionRefused as refusal:
        return _overview_page(refusal, 409)
    flash("The export was started. Its progress shows below.")
    return redirect(url_for(".execution", workspace_id=workspace_id, execution_id=execution.id))


# Executions


@bp.get("/executions/<int:execution_id>")
@workspace_administrator
def execution(workspace_id: int, execution_id: int):
    return _execution_page(_execution_or_404(execution_id))


def _execution_page(execution: ExportExecution, error: str | None = None, status: int = 200):
    return render_template("packages/execution.html", error=error, **_live_values(execution)), status


def _live_values(execution: ExportExecution) -> dict:
    package = package_history.package_of(execution)
    return {
        "execution": execution,
        "events": package_history.execution_events(execution),
        "package": package,
        "failed_deliveries": package_history.failed_deliveries_of(package) if package else 0,
        "requester_name": package_history.requester_name(execution),
        "form": ActionForm(formdata=None),
        "settled": execution.status not in ACTIVE_EXECUTION_STATUSES,
    }


@bp.get("/executions/<int:execution_id>/live")
@fragment_of("packages.execution")
@workspace_administrator
def execution_live(workspace_id: int, execution_id: int):
    """The live part of the execution page; HTTP 286 tells htmx to stop polling once it settled.

    The actions are swapped too (out of band) only once the export left the queue: while it waits,
    the polls leave the cancel button, and the focus a person may have put on it, alone.
    """
    values = _live_values(_execution_or_404(execution_id))
    body = render_template("packages/_execution_live.html", **values)
    if values["execution"].status != ExecutionStatus.QUEUED:
        body += render_template("packages/_execution_actions.html", oob=True, **values)
    return HTMXResponseStopPolling(body) if values["settled"] else body


@bp.post("/executions/<int:execution_id>/cancel")
@workspace_administrator
def cancel_execution(workspace_id: int, execution_id: int):
    execution = _execution_or_404(execution_id)
    form = ActionForm()
    if not form.validate():
        return _execution_page(execution, "The form expired. Reload the page and try again.", 400)
    try:
        execution_admission.cancel(workspace_id, execution.id, current_user)
    except TransitionRefused as refusal:
        package_history.read_afresh()
        return _execution_page(_execution_or_404(execution_id), str(refusal), 409)
    flash("The export was cancelled before it started. It does not count against the allowance.")
    return redirect(url_for(".execution", workspace_id=workspace_id, execution_id=execution_id))


# Packages


@bp.get("/packages/")
@workspace_administrator
def package_list(workspace_id: int):
    listing = list_pages.read_request(package_history.PACKAGE_LIST, request.args)
    return render_template(
        "packages/packages.html",
        page=package_history.page_packages(workspace_id, listing),
        spec=package_history.PACKAGE_LIST,
    )


@bp.get("/packages/<int:package_id>")
@workspace_administrator
def package(workspace_id: int, package_id: int):
    return _package_page(_package_or_404(package_id))


def _package_page(package: ExportPackage, error: str | None = None, status: int = 200):
    volumes = package_history.package_volumes(package)
    return render_template(
        "packages/package.html",
        package=package,
        format_description=PACKAGE_FORMAT_DESCRIPTIONS[package.format],
        volumes=volumes,
        datasets=package_history.package_datasets(volumes),
        deliveries=package_history.package_deliveries(package),
        package_folder=package_delivery.package_folder(package),
        announcing_kinds=ANNOUNCING_KINDS,
        failure_class_words=package_history.DELIVERY_FAILURE_WORDS,
        message_failure_words=package_history.MESSAGE_FAILURE_WORDS,
        deliverable=package_history.deliverable(package),
        deletion=package_retention.deletion_of(package.id) if package.status == PackageStatus.DELETED else None,
        error=error,
    ), status


@bp.get("/packages/<int:package_id>/manifest")
@workspace_administrator
def download_manifest(workspace_id: int, package_id: int):
    package = _package_or_404(package_id)
    return _download(package, lambda: package_history.open_manifest(package))


@bp.get("/packages/<int:package_id>/checksums")
@workspace_administrator
def download_checksums(workspace_id: int, package_id: int):
    package = _package_or_404(package_id)
    return _download(package, lambda: package_history.open_checksums(package))


@bp.get("/packages/<int:package_id>/volume")
@workspace_administrator
def download_volume(workspace_id: int, package_id: int):
    """A volume, named by its id in the query string (`?volume=<id>`)."""
    package = _package_or_404(package_id)
    volume = visible_or_404(_volumes_of(package), request.args.get("volume", type=int))
    return _download(package, lambda: package_history.open_volume(package, volume))


def _volumes_of(package: ExportPackage) -> Callable[[RequesterContext, int], ExportVolume | None]:
    """The loader of the package's volumes (the package itself was loaded for this person)."""
    return lambda _access, volume_id: package_history.find_volume(package, volume_id)


def _download(package: ExportPackage, open_download):
    try:
        download = open_download()
    except PackageUnavailable as unavailable:
        return _package_page(package, str(unavailable), 410)
    except StorageError:
        current_app.logger.exception("workspace export package %s could not be read from storage", package.id)
        return _package_page(package, "The package's files cannot be read right now. Try again in a moment.", 503)
    return stored_file_response(download)


@bp.route("/packages/<int:package_id>/delete", methods=["GET", "POST"])
@workspace_administrator
def delete_package(workspace_id: int, package_id: int):
    package = _package_or_404(package_id)
    if request.method == "GET":
        if package.status != "available":
            return _package_page(package, f"This package cannot be deleted: it is already {package.status}.", 409)
        return render_template("packages/delete.html", package=package, form=DeletePackageForm(formdata=None))
    form = DeletePackageForm()
    if not form.validate():
        error = next((messages[0] for messages in form.errors.values() if messages), "Confirm the deletion.")
        return render_template("packages/delete.html", package=package, form=form, error=error), 400
    try:
        package_retention.delete_early(workspace_id, package.id, current_user)
    except package_retention.PackageNotDeletable as refusal:
        package_history.read_afresh()
        return _package_page(_package_or_404(package_id), str(refusal), 409)
    flash("The package was deleted. Its files are removed and its unfinished deliveries stopped.")
    return redirect(url_for(".package", workspace_id=workspace_id, package_id=package_id))


# Deliveries: Retry a failed one, Deliver a withheld one


def _delivery_or_404(package: ExportPackage, delivery_id: int) -> ExportDelivery:
    return visible_or_404(_deliveries_of(package), delivery_id)


def _deliveries_of(package: ExportPackage) -> Callable[[RequesterContext, int], ExportDelivery | None]:
    """The loader of the package's deliveries (the package itself was loaded for this person)."""
    return lambda _access, delivery_id: package_history.find_delivery(package, delivery_id)


def _delivery_requested(package: ExportPackage, delivery: ExportDelivery, done: str):
    flash(done)
    return redirect(
        url_for(".package", workspace_id=package.workspace_id, package_id=package.id, _anchor=f"delivery-{delivery.id}")
    )


def _delivery_refused(package_id: int, message: str, status: int):
    package_history.read_afresh()
    return _package_page(_package_or_404(package_id), message, status)


@bp.post("/packages/<int:package_id>/deliveries/<int:delivery_id>/retry")
@workspace_administrator
def retry_delivery(workspace_id: int, package_id: int, delivery_id: int):
    package = _package_or_404(package_id)
    delivery = _delivery_or_404(package, delivery_id)
    form = RetryDeliveryForm()
    if not form.validate():
        message = next((messages[0] for messages in form.errors.values() if messages), "Reload the page and try again.")
        return _delivery_refused(package_id, message, 400)
    try:
        package_delivery_actions.retry(workspace_id, delivery.id, form.attempt.data, current_user)
    except TransitionRefused as refusal:
        return _delivery_refused(package_id, str(refusal), 409)
    return _delivery_requested(package, delivery, "The delivery is being retried. Its new attempt shows below.")


@bp.post("/packages/<int:package_id>/deliveries/<int:delivery_id>/deliver")
@workspace_administrator
def deliver_withheld(workspace_id: int, package_id: int, delivery_id: int):
    package = _package_or_404(package_id)
    delivery = _delivery_or_404(package, delivery_id)
    if not ActionForm().validate():
        return _delivery_refused(package_id, "The form expired. Reload the page and try again.", 400)
    try:
        package_delivery_actions.deliver_withheld(workspace_id, delivery.id, current_user)
    except TransitionRefused as refusal:
        return _delivery_refused(package_id, str(refusal), 409)
    return _delivery_requested(package, delivery, "The delivery has started. Its attempt shows below.")


# Notices


@bp.get("/notices/<int:notice_id>")
@workspace_member
def notice(workspace_id: int, notice_id: int):
    """What an export notice said, for the person it was sent to: the page its email links a
    notification person who is not an administrator to (the package's page is the administrators')."""
    return render_template("packages/notice.html", notice=visible_or_404(export_notices.notice_summary, notice_id))
