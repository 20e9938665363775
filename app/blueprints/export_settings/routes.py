"""Workspace export settings and destinations, for the workspace's administrators only.

Anyone else, a plain member included, gets 404 as from the rest of the console. A sandbox
workspace sees why it cannot export; settings suspended by staff show read-only with the reason.
"Test connection" answers an htmx fragment with the store's own message.
"""

from __future__ import annotations

from zoneinfo import ZoneInfo

from flask import flash, g, make_response, redirect, render_template, url_for

from app.blueprints.export_settings import bp
from app.blueprints.export_settings.forms import (
    AttachmentPolicyForm,
    ConfirmForm,
    DestinationForm,
    PinHostKeyForm,
    SecretForm,
    SettingsForm,
)
from app.blueprints.fragments import fragment_of
from app.blueprints.guards import visible_or_404, workspace_administrator
from app.destinations.sftp import fingerprint
from app.domain.errors import ChangedMeanwhile, DomainError, ValidationError
from app.domain.schedules import attachment_rules
from app.domain.timing.timetable import WEEKDAY_NAMES, wall_clock_label
from app.domain.values.text_rules import opened_version, saved_version
from app.domain.workspace_export.export_settings_rules import CHOOSABLE_STATUSES, active_datasets, describe_cadence
from app.extensions import htmx
from app.models.export_destination import (
    ANNOUNCING_KINDS,
    MAX_DESTINATIONS,
    DestinationKind,
    S3Access,
    SftpLogin,
)
from app.models.export_settings import (
    MAX_NOTIFY_PEOPLE,
    PACKAGE_FORMAT_DESCRIPTIONS,
    RETENTION_DAYS,
    VOLUME_SIZE_MB,
    Cadence,
)
from app.services.accounts import workspaces
from app.services.destinations import configuration_gate, registry, role_access
from app.services.schedules import attachment_policy
from app.services.workspace_export import export_settings

CADENCES = {Cadence.OFF: "Off", Cadence.DAILY: "Daily", Cadence.WEEKLY: "Weekly", Cadence.MONTHLY: "Monthly"}
STATUSES = {"active": "Active: the cadence runs", "paused": "Paused: no cadence executions; Export now still works"}
KINDS = {
    DestinationKind.S3: "S3-compatible bucket",
    DestinationKind.SFTP: "SFTP server",
    DestinationKind.DIRECTORY: "Directory on this server",
    DestinationKind.WEBHOOK: "Webhook (a signed message with a download link)",
    DestinationKind.SLACK: "Slack channel (an incoming webhook)",
}
SFTP_LOGINS = {SftpLogin.PASSWORD: "Password", SftpLogin.PRIVATE_KEY: "Private key (Ed25519 or RSA)"}
S3_ACCESSES = {
    S3Access.ACCESS_KEY: "A stored access key",
    S3Access.ROLE: "A role in your AWS account (no stored secret)",
}


@bp.context_processor
def vocabulary() -> dict:
    return {
        "formats": PACKAGE_FORMAT_DESCRIPTIONS,
        "cadences": CADENCES,
        "statuses": {key: STATUSES[key] for key in CHOOSABLE_STATUSES},
        "kinds": KINDS,
        "DestinationKind": DestinationKind,
        "ANNOUNCING_KINDS": ANNOUNCING_KINDS,
        "sftp_logins": SFTP_LOGINS,
        "s3_accesses": S3_ACCESSES,
        "S3Access": S3Access,
        "host_key_fingerprint": fingerprint,
        "weekday_names": WEEKDAY_NAMES,
        "volume_bounds": VOLUME_SIZE_MB,
        "retention_bounds": RETENTION_DAYS,
        "max_notify": MAX_NOTIFY_PEOPLE,
        "max_destinations": MAX_DESTINATIONS,
        "attachment_choices": attachment_rules.CHOICES,
        "attachment_bounds": attachment_rules.LIMIT_MB,
    }


def _form_error(form) -> ValidationError | None:
    """WTForms' first refusal as a ValidationError naming its field, so the page shows both kinds alike."""
    for name, messages in form.errors.items():
        if messages:
            if name == "csrf_token":
                return ValidationError(
                    "The form expired or was damaged on its way here. Reload the page and try again.", "form"
                )
            return ValidationError(str(messages[0]), name)
    return None


# Settings


@bp.route("/settings", methods=["GET", "POST"])
@workspace_administrator
def settings(workspace_id: int):
    current = export_settings.get_or_default(workspace_id)
    form = SettingsForm()
    if form.is_submitted():
        if not form.validate():
            return _settings_page(form, current, _form_error(form), 400)
        try:
            saved = export_settings.save(g.access, form.settings_input(), opened_version(form.version.data or ""))
        except ValidationError as error:
            return _settings_page(form, export_settings.get_or_default(workspace_id), error, 400)
        except ChangedMeanwhile as changed:
            latest = export_settings.get_or_default(workspace_id)
            reload_url = url_for(".settings", workspace_id=workspace_id)
            return _settings_page(form, latest, changed, 409, reload_url=reload_url)
        flash(f"Export settings saved (version {saved.version}).")
        return redirect(url_for(".settings", workspace_id=workspace_id))
    form.fill(current)
    return _settings_page(form, current)


@bp.post("/settings/attachments")
@workspace_administrator
def attachment_policy_settings(workspace_id: int):
    """The email attachment policy: a form of its own, so it is saved without the package settings."""
    policy_form = AttachmentPolicyForm()
    current = export_settings.get_or_default(workspace_id)
    settings_form = SettingsForm(formdata=None)
    settings_form.fill(current)
    if not policy_form.validate():
        return _settings_page(
            settings_form, current, status=400, policy_form=policy_form, policy_error=_form_error(policy_form)
        )
    try:
        changed = attachment_policy.save(g.access, policy_form.choice.data or "", policy_form.limit_mb.data or "")
    except ValidationError as error:
        return _settings_page(settings_form, current, status=400, policy_form=policy_form, policy_error=error)
    limit = attachment_policy.limit_mb(workspace_id)
    flash(
        f"Email attachments: {attachment_rules.describe(limit)}."
        if changed
        else "The attachment policy was already so."
    )
    return redirect(url_for(".settings", workspace_id=workspace_id))


def _policy_form(workspace_id: int) -> AttachmentPolicyForm:
    limit = attachment_policy.limit_mb(workspace_id)
    choice = attachment_rules.LINKS_ONLY if limit is None else attachment_rules.ATTACH
    return AttachmentPolicyForm(formdata=None, data={"choice": choice, "limit_mb": "" if limit is None else str(limit)})


def _settings_page(
    form: SettingsForm,
    current,
    error: DomainError | None = None,
    status: int = 200,
    policy_form: AttachmentPolicyForm | None = None,
    policy_error: ValidationError | None = None,
    reload_url: str | None = None,
):
    zone = export_settings.workspace_zone(g.workspace_id)
    return render_template(
        "export_settings/settings.html",
        form=form,
        policy_form=policy_form or _policy_form(g.workspace_id),
        policy_error=policy_error,
        current=current,
        error=error,
        reload_url=reload_url,
        refusal=configuration_gate.ineligibility(g.workspace_id),
        suspension=configuration_gate.suspension(current),
        datasets=active_datasets(),
        people=workspaces.members_by_name(g.workspace_id),
        zone=zone,
        cadence_text=describe_cadence(
            current.cadence, current.cadence_time, current.cadence_weekday, current.cadence_day, zone
        ),
        next_cadence_label=_in_zone(current.next_cadence_at, zone),
    ), status


def _in_zone(moment, zone: str) -> str | None:
    """A time as the workspace's clock reads it, its offset shown ("Fri 4 Dec 2026, 04:15 GMT (UTC+00:00)")."""
    return None if moment is None else wall_clock_label(moment.astimezone(ZoneInfo(zone)))


# Destinations


@bp.get("/destinations")
@workspace_administrator
def destinations(workspace_id: int):
    form = DestinationForm(
        formdata=None,
        data={
            "kind": DestinationKind.S3,
            "region": "us-east-1",
            "port": "22",
            "sftp_login": SftpLogin.PASSWORD,
            "s3_access": S3Access.ACCESS_KEY,
        },
    )
    return _destinations_page(form)


@bp.post("/destinations")
@workspace_administrator
def add_destination(workspace_id: int):
    form = DestinationForm()
    if not form.validate():
        return _destinations_page(form, _form_error(form), 400)
    try:
        added = registry.add_and_show_secret(g.access, form.destination_input())
    except ValidationError as error:
        return _destinations_page(form, error, 400)
    if added.signing_secret is not None:
        flash(f"Destination “{added.destination.name}” added.")
        return _signing_secret_page(added.destination, added.signing_secret)
    flash(f"Destination “{added.destination.name}” added. Test its connection below.")
    return redirect(url_for(".destination", workspace_id=workspace_id, destination_id=added.destination.id))


def _signing_secret_page(destination, secret: str):
    """A webhook's signing secret, this once: the answer to the post that made it, kept by no
    cache, and no page that a reload or a link reaches shows it again."""
    page = render_template("export_settings/signing_secret.html", destination=destination, secret=secret)
    response = make_response(page)
    response.headers["Cache-Control"] = "no-store"
    return response


def _destinations_page(form: DestinationForm, error: ValidationError | None = None, status: int = 200):
    current = configuration_gate.export_settings_of(g.workspace_id)
    return render_template(
        "export_settings/destinations.html",
        form=form,
        error=error,
        destinations=registry.list_destinations(g.workspace_id),
        refusal=configuration_gate.ineligibility(g.workspace_id),
        suspension=configuration_gate.suspension(current),
        directory_allowed=registry.directory_root_configured(),
        role_setup=role_access.role_setup(g.workspace_id),
    ), status


def _visible_or_404(destination_id: int):
    return visible_or_404(registry.get_destination, destination_id)


@bp.route("/destinations/<int:destination_id>", methods=["GET", "POST"])
@workspace_administrator
def destination(workspace_id: int, destination_id: int):
    found = _visible_or_404(destination_id)
    form = DestinationForm()
    if not form.is_submitted():
        form.fill(found)
        return _destination_page(found, form)
    if not form.validate():
        return _destination_page(found, form, _form_error(form), 400)
    try:
        expected = saved_version(form.version.data or "")
        registry.edit(g.access, found, form.destination_input(), expected)
    except ValidationError as error:
        return _destination_page(found, form, error, 400)
    except ChangedMeanwhile as changed:
        return _destination_page(found, form, changed, 409, reload_url=_reload_url(destination_id))
    flash(f"Destination “{found.name}” saved.")
    return redirect(url_for(".destination", workspace_id=workspace_id, destination_id=destination_id))


# The destination page's forms: a refusal is shown beside the form that was sent, and only there.
EDIT, STATUS, SECRET, TEST = "edit", "status", "secret", "test"


def _destination_page(
    found,
    form: DestinationForm,
    error: DomainError | None = None,
    status: int = 200,
    refused_at: str = EDIT,
    reload_url: str | None = None,
):
    current = configuration_gate.export_settings_of(g.workspace_id)
    return render_template(
        "export_settings/destination.html",
        destination=found,
        form=form,
        error=error,
        reload_url=reload_url,
        refused_at=refused_at,
        refusal=configuration_gate.ineligibility(g.workspace_id),
        suspension=configuration_gate.suspension(current),
        directory_allowed=registry.directory_root_configured(),
        role_setup=role_access.role_setup(g.workspace_id),
    ), status


def _act(destination_id: int, action, done: str, refused_at: str, form_class=ConfirmForm):
    """Run one of the destination page's buttons; a refusal shows the page with its message beside
    the form it came from (`refused_at`)."""
    found = _visible_or_404(destination_id)
    form = form_class()
    if not form.validate():
        return _destination_page(found, _filled(found), _form_error(form), 400, refused_at)
    try:
        action(found, form)
    except ValidationError as error:
        return _destination_page(found, _filled(found), error, 400, refused_at)
    except ChangedMeanwhile as changed:
        return _destination_page(found, _filled(found), changed, 409, refused_at, _reload_url(destination_id))
    flash(done)
    return found


def _reload_url(destination_id: int) -> str:
    """The destination's page as it is now, after a save over someone else's change."""
    return url_for(".destination", workspace_id=g.workspace_id, destination_id=destination_id)


def _filled(found) -> DestinationForm:
    form = DestinationForm(formdata=None)
    form.fill(found)
    return form


def _back_to(found_or_page, destination_id: int):
    if isinstance(found_or_page, tuple):
        return found_or_page
    return redirect(url_for(".destination", workspace_id=g.workspace_id, destination_id=destination_id))


@bp.post("/destinations/<int:destination_id>/enable")
@workspace_administrator
def enable_destination(workspace_id: int, destination_id: int):
    outcome = _act(
        destination_id,
        lambda found, form: registry.set_enabled(g.access, found, True),
        "Destination enabled: new packages are delivered to it.",
        STATUS,
    )
    return _back_to(outcome, destination_id)


@bp.post("/destinations/<int:destination_id>/disable")
@workspace_administrator
def disable_destination(workspace_id: int, destination_id: int):
    outcome = _act(
        destination_id,
        lambda found, form: registry.set_enabled(g.access, found, False),
        "Destination disabled: deliveries to it are withheld until it is enabled again.",
        STATUS,
    )
    return _back_to(outcome, destination_id)


@bp.post("/destinations/<int:destination_id>/secret")
@workspace_administrator
def replace_secret(workspace_id: int, destination_id: int):
    outcome = _act(
        destination_id,
        lambda found, form: registry.replace_secret(g.access, found, form.secret.data or ""),
        "The secret access key was replaced. Test the connection to check it.",
        SECRET,
        SecretForm,
    )
    return _back_to(outcome, destination_id)


@bp.post("/destinations/<int:destination_id>/signing-secret")
@workspace_administrator
def new_signing_secret(workspace_id: int, destination_id: int):
    made: list[str] = []
    outcome = _act(
        destination_id,
        lambda found, form: made.append(registry.new_signing_secret(g.access, found)),
        "A new signing secret was made: messages are signed with it from now on.",
        SECRET,
    )
    if isinstance(outcome, tuple):
        return outcome
    return _signing_secret_page(outcome, made[0])


@bp.post("/destinations/<int:destination_id>/host-key")
@workspace_administrator
def pin_host_key(workspace_id: int, destination_id: int):
    outcome = _act(
        destination_id,
        lambda found, form: registry.pin_host_key(g.access, found, form.fingerprint.data or ""),
        "The server's host key is pinned: deliveries go only to a server that shows it. "
        "Test the connection again to check the login and the folder.",
        TEST,
        PinHostKeyForm,
    )
    return _back_to(outcome, destination_id)


@bp.get("/destinations/<int:destination_id>/remove")
@workspace_administrator
def confirm_remove_destination(workspace_id: int, destination_id: int):
    """What removing the destination does, and the button that does it."""
    found = _visible_or_404(destination_id)
    return render_template("export_settings/remove.html", destination=found, form=ConfirmForm(formdata=None))


@bp.post("/destinations/<int:destination_id>/remove")
@workspace_administrator
def remove_destination(workspace_id: int, destination_id: int):
    outcome = _act(
        destination_id,
        lambda found, form: registry.remove(g.access, found),
        "Destination removed. Its past deliveries stay in the packages' history.",
        STATUS,
    )
    if isinstance(outcome, tuple):
        return outcome
    return redirect(url_for(".destinations", workspace_id=workspace_id))


@bp.post("/destinations/<int:destination_id>/test")
@fragment_of("export_settings.destination")
@workspace_administrator
def test_destination(workspace_id: int, destination_id: int):
    """Write, read back and delete a probe object; with htmx only the outcome fragment answers."""
    found = _visible_or_404(destination_id)
    form = ConfirmForm()
    error = None
    if not form.validate():
        error = _form_error(form)
    else:
        try:
            registry.test(g.access, found)
        except ValidationError as refused:
            error = refused
    if htmx:
        return render_template("export_settings/_test_result.html", destination=found, error=error)
    if error is not None:
        return _destination_page(found, _filled(found), error, 400, TEST)
    return redirect(url_for(".destination", workspace_id=workspace_id, destination_id=destination_id))
