"""Workspace export destinations: add, edit, enable or disable, remove, replace the secret, test,
pin an SFTP server's host key, make a webhook's signing secret anew.

At most five live destinations per workspace, counted under a lock on the workspace row so two
concurrent adds cannot make six; unique by connection and path (a clear message, the partial
unique index behind it). The secret is encrypted with CREDENTIALS_KEY, never shown again, never
logged and never put in the audit details; a webhook's signing secret is made here
(`add_and_show_secret`, `new_signing_secret`) and handed back to be shown that once. Removing
keeps the row (removed_at) for the delivery history. Every change is audited in its transaction
(INV-11) and refused while the workspace may not have export settings (INV-10) or staff have
suspended them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from flask import current_app
from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError

from app.destinations import DestinationRefused, ProbeResult, refuse_internal_endpoint, test_connection, webhook
from app.destinations.endpoint_rule import refuse_internal_host
from app.destinations.sftp import fingerprint, load_private_key
from app.domain.destinations.destination_input import (
    CheckedDestination,
    DestinationInput,
    check_destination,
    check_secret,
)
from app.domain.errors import ChangedMeanwhile, DomainError, ValidationError
from app.domain.people.access import RequesterContext
from app.extensions import db, execute_dml
from app.models import Workspace
from app.models.export_destination import (
    ANNOUNCING_KINDS,
    MAX_DESTINATIONS,
    DestinationKind,
    ExportDestination,
    S3Access,
    SftpLogin,
)
from app.models.types import SUMMARY_LIMIT, utcnow
from app.security.credentials import encrypt_secret
from app.services.accounts import audit
from app.services.destinations import role_access
from app.services.destinations.configuration_gate import refuse_changes


def list_destinations(workspace_id: int) -> list[ExportDestination]:
    """The workspace's live destinations, oldest first."""
    return list(
        db.session.scalars(
            select(ExportDestination)
            .where(ExportDestination.workspace_id == workspace_id, ExportDestination.removed_at.is_(None))
            .order_by(ExportDestination.created_at, ExportDestination.id)
        )
    )


def get_destination(access: RequesterContext, destination_id: int) -> ExportDestination | None:
    """A live destination of the person's workspace, for its administrators; None otherwise."""
    if not access.is_admin:
        return None
    return db.session.scalar(
        select(ExportDestination).where(
            ExportDestination.id == destination_id,
            ExportDestination.workspace_id == access.workspace_id,
            ExportDestination.removed_at.is_(None),
        )
    )


def directory_root_configured() -> bool:
    return current_app.config["SETTINGS"].destinations_root is not None


def _checked(data: DestinationInput, *, creating: bool) -> CheckedDestination:
    """The form's destination by the domain's rules and the endpoint rule (no server's own network)."""
    allowed_hosts = current_app.config["SETTINGS"].destination_allowed_hosts
    checked = check_destination(
        data,
        creating=creating,
        directory_root_configured=directory_root_configured(),
        role_access_available=role_access.principal_arn() is not None,
        http_hosts=allowed_hosts,
    )
    # Every URL the destination connects to: an S3 endpoint, a webhook's, a Slack webhook's (its secret).
    for url, field in (
        (checked.endpoint_url, "endpoint_url"),
        (checked.url, "url"),
        (checked.secret if checked.kind == DestinationKind.SLACK else None, "slack_url"),
    ):
        try:
            refuse_internal_endpoint(url, allowed_hosts)
        except DestinationRefused as exc:
            raise ValidationError(str(exc), field) from None
    if checked.host is not None and checked.port is not None:
        try:
            refuse_internal_host(checked.host, checked.port, allowed_hosts)
        except DestinationRefused as exc:
            raise ValidationError(str(exc), "host") from None
    if checked.sftp_login == SftpLogin.PRIVATE_KEY and checked.secret is not None:
        try:  # a key an SSH client cannot read is refused now, not at the first delivery
            load_private_key(checked.secret)
        except DestinationRefused as exc:
            raise ValidationError(str(exc), "private_key") from None
    return checked


@dataclass(frozen=True)
class Added:
    destination: ExportDestination
    # A webhook's signing secret, made by Rhythm: shown to the administrator this once, never again.
    signing_secret: str | None = None


def add(access: RequesterContext, data: DestinationInput) -> ExportDestination:
    """A new destination; ValidationError (nothing written) for bad input, a sixth one or a taken connection."""
    return add_and_show_secret(access, data).destination


def add_and_show_secret(access: RequesterContext, data: DestinationInput) -> Added:
    """`add`, with a webhook's signing secret (made here) to show once."""
    workspace_id = access.workspace_id
    refuse_changes(workspace_id)
    checked = _checked(data, creating=True)
    if checked.kind == DestinationKind.WEBHOOK:
        checked = dataclasses.replace(checked, secret=webhook.new_signing_secret())
    if checked.s3_access == S3Access.ROLE:
        role_access.external_id(workspace_id)  # the one its role trusts, if no page showed it yet
    try:
        # The workspace row's lock serialises adds: the count below sees every committed add.
        db.session.execute(select(Workspace.id).where(Workspace.id == workspace_id).with_for_update())
        live = db.session.execute(
            select(func.count())
            .select_from(ExportDestination)
            .where(ExportDestination.workspace_id == workspace_id, ExportDestination.removed_at.is_(None))
        ).scalar_one()
        if live >= MAX_DESTINATIONS:
            raise ValidationError(
                f"A workspace has at most {MAX_DESTINATIONS} destinations; remove one before adding another.", "form"
            )
        _refuse_taken(workspace_id, checked, None)
        now = utcnow()
        destination = ExportDestination(
            workspace_id=workspace_id,
            created_at=now,
            updated_at=now,
            enabled=True,
            version=1,
            secret_ciphertext=encrypt_secret(checked.secret) if checked.secret else None,
            **_connection_values(checked),
        )
        db.session.add(destination)
        db.session.flush()
        audit.record(
            workspace_id=workspace_id,
            actor_id=access.person_id,
            action="export_destination.added",
            subject_type="export_destination",
            subject_id=destination.id,
            details={"destination": _audited(checked), "secret_set": checked.secret is not None},
        )
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        _refuse_taken(workspace_id, checked, None)
        raise ValidationError(
            "The destination could not be added because another change happened at the same time. Try again.", "form"
        ) from None
    except ValidationError:
        db.session.rollback()
        raise
    return Added(destination, checked.secret if checked.kind == DestinationKind.WEBHOOK else None)


def edit(
    access: RequesterContext, destination: ExportDestination, data: DestinationInput, expected_version: int
) -> ExportDestination:
    """Change a destination's connection, path or name; an empty secret keeps the stored one."""
    workspace_id = access.workspace_id
    refuse_changes(workspace_id)
    checked = _checked(data, creating=False)
    _refuse_missing_secret(destination, checked)
    if checked.kind == DestinationKind.SLACK and checked.secret is None:
        checked = dataclasses.replace(checked, connection_key=destination.connection_key)
    before = _current_audited(destination)
    values = _connection_values(checked)
    if checked.kind == DestinationKind.DIRECTORY or checked.s3_access == S3Access.ROLE:
        values["secret_ciphertext"] = None
    elif checked.secret is not None:
        values["secret_ciphertext"] = encrypt_secret(checked.secret)
    if (checked.kind, checked.host, checked.port) != (destination.kind, destination.host, destination.port):
        # Another server: the key pinned for the old one says nothing about it.
        values.update(host_key=None, offered_host_key=None)
    after = _audited(checked)
    changed = {key: {"from": before[key], "to": after[key]} for key in after if before[key] != after[key]}
    try:
        _refuse_taken(workspace_id, checked, destination.id)
        _guarded_update(destination, expected_version, updated_at=utcnow(), **values)
        audit.record(
            workspace_id=workspace_id,
            actor_id=access.person_id,
            action="export_destination.changed",
            subject_type="export_destination",
            subject_id=destination.id,
            details={"changed": changed, "secret_replaced": checked.secret is not None},
        )
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        _refuse_taken(workspace_id, checked, destination.id)
        raise ChangedMeanwhile("destination") from None
    except DomainError:
        db.session.rollback()
        raise
    db.session.refresh(destination)
    return destination


def _refuse_missing_secret(destination: ExportDestination, checked: CheckedDestination) -> None:
    """An edit keeps the stored secret only while it is still the same kind of secret."""
    if checked.kind == DestinationKind.DIRECTORY or checked.s3_access == S3Access.ROLE or checked.secret is not None:
        return
    same_secret = (
        destination.secret_ciphertext is not None
        and destination.kind == checked.kind
        and destination.sftp_login == checked.sftp_login
        and destination.s3_access == checked.s3_access
    )
    if same_secret:
        return
    if checked.kind == DestinationKind.WEBHOOK:
        raise ValidationError(
            "A webhook's signing secret is made when the webhook is added: add a webhook destination rather than "
            "changing this one into one.",
            "kind",
        )
    if checked.kind == DestinationKind.SLACK:
        raise ValidationError("Enter the incoming webhook URL: this destination has none stored.", "slack_url")
    if checked.kind == DestinationKind.S3:
        raise ValidationError("Enter the secret access key: this destination has none yet.", "secret")
    if checked.sftp_login == SftpLogin.PASSWORD:
        raise ValidationError("Enter the password: this destination has none stored.", "password")
    raise ValidationError("Paste the private key: this destination has none stored.", "private_key")


def set_enabled(access: RequesterContext, destination: ExportDestination, enabled: bool) -> ExportDestination:
    """Enable or disable deliveries to the destination (a disabled one's deliveries are withheld)."""
    refuse_changes(access.workspace_id)
    return _simple_change(
        access,
        destination,
        "export_destination.enabled" if enabled else "export_destination.disabled",
        {},
        enabled=enabled,
    )


def remove(access: RequesterContext, destination: ExportDestination) -> ExportDestination:
    """Remove the destination from the workspace; its row stays for the deliveries' history."""
    refuse_changes(access.workspace_id)
    return _simple_change(
        access,
        destination,
        "export_destination.removed",
        {"name": destination.name},
        removed_at=utcnow(),
        enabled=False,
    )


def replace_secret(access: RequesterContext, destination: ExportDestination, secret: str) -> ExportDestination:
    """Store a new secret access key for an S3 destination; the old one is gone."""
    refuse_changes(access.workspace_id)
    if destination.kind != DestinationKind.S3 or destination.s3_access == S3Access.ROLE:
        raise ValidationError("Only a bucket destination signing with an access key has a secret access key.", "secret")
    ciphertext = encrypt_secret(check_secret(secret))
    return _simple_change(access, destination, "export_destination.secret_replaced", {}, secret_ciphertext=ciphertext)


def new_signing_secret(access: RequesterContext, destination: ExportDestination) -> str:
    """Make a webhook's signing secret anew and store it encrypted; returned to be shown this once.
    Messages are signed with it from now on; the old one is gone."""
    refuse_changes(access.workspace_id)
    if destination.kind != DestinationKind.WEBHOOK:
        raise ValidationError("Only a webhook destination has a signing secret.", "secret")
    secret = webhook.new_signing_secret()
    _simple_change(
        access, destination, "export_destination.signing_secret_replaced", {}, secret_ciphertext=encrypt_secret(secret)
    )
    return secret


def test(access: RequesterContext, destination: ExportDestination) -> ProbeResult:
    """Write, read back and delete a probe object at the destination; record and return the outcome.

    The store is called outside any transaction, so a slow store holds no lock.
    """
    refuse_changes(access.workspace_id)
    db.session.commit()
    result = test_connection(destination)
    message = (result.message or ("Connected." if result.ok else "The test failed."))[:SUMMARY_LIMIT]
    now = utcnow()
    changed = execute_dml(
        update(ExportDestination)
        .where(
            ExportDestination.id == destination.id,
            ExportDestination.workspace_id == access.workspace_id,
            ExportDestination.removed_at.is_(None),
        )
        .values(
            last_tested_at=now,
            last_test_ok=result.ok,
            last_test_message=message,
            offered_host_key=result.offered_host_key,
        )
        .execution_options(synchronize_session=False)
    )
    if changed.rowcount == 1:
        audit.record(
            workspace_id=access.workspace_id,
            actor_id=access.person_id,
            action="export_destination.tested",
            subject_type="export_destination",
            subject_id=destination.id,
            details={"ok": result.ok, "message": message},
        )
    db.session.commit()
    db.session.refresh(destination)
    return result


def pin_host_key(access: RequesterContext, destination: ExportDestination, shown: str) -> ExportDestination:
    """Pin the host key the SFTP server offered at the last Test connection, if its fingerprint is
    the one the administrator was shown (`shown`): a key that changed since is not pinned unseen."""
    refuse_changes(access.workspace_id)
    offered = destination.offered_host_key
    if destination.kind != DestinationKind.SFTP or offered is None:
        raise ValidationError("There is no host key to pin: test the connection first.", "host_key")
    if fingerprint(offered) != shown:
        raise ValidationError(
            "The server offered another host key since the one you confirmed; test the connection again.", "host_key"
        )
    pinned_before = fingerprint(destination.host_key) if destination.host_key else None
    return _simple_change(
        access,
        destination,
        "export_destination.host_key_pinned",
        {"from_host_key": pinned_before, "to_host_key": fingerprint(offered)},
        host_key=offered,
        offered_host_key=None,
        last_tested_at=None,
        last_test_ok=None,
        last_test_message=None,
    )


def _simple_change(
    access: RequesterContext, destination: ExportDestination, action: str, details: dict, **values
) -> ExportDestination:
    try:
        _guarded_update(destination, destination.version, updated_at=utcnow(), **values)
        audit.record(
            workspace_id=access.workspace_id,
            actor_id=access.person_id,
            action=action,
            subject_type="export_destination",
            subject_id=destination.id,
            details=details,
        )
        db.session.commit()
    except DomainError:
        db.session.rollback()
        raise
    db.session.refresh(destination)
    return destination


def _guarded_update(destination: ExportDestination, expected_version: int, **values) -> None:
    result = execute_dml(
        update(ExportDestination)
        .where(
            ExportDestination.id == destination.id,
            ExportDestination.workspace_id == destination.workspace_id,
            ExportDestination.version == expected_version,
            ExportDestination.removed_at.is_(None),
        )
        .values(version=ExportDestination.version + 1, **values)
        .execution_options(synchronize_session=False)
    )
    if result.rowcount != 1:
        raise ChangedMeanwhile("destination")


def _refuse_taken(workspace_id: int, checked: CheckedDestination, own_id: int | None) -> None:
    query = select(ExportDestination.name).where(
        ExportDestination.workspace_id == workspace_id,
        ExportDestination.removed_at.is_(None),
        ExportDestination.connection_key == checked.connection_key,
        ExportDestination.path == checked.path,
    )
    if own_id is not None:
        query = query.where(ExportDestination.id != own_id)
    taken_by = db.session.scalar(query.limit(1))
    if taken_by is not None and checked.kind in ANNOUNCING_KINDS:
        field = "url" if checked.kind == DestinationKind.WEBHOOK else "slack_url"
        raise ValidationError(f"The destination “{taken_by}” already sends to this {_PLACES[checked.kind]}.", field)
    if taken_by is not None:
        raise ValidationError(
            f"The destination “{taken_by}” already delivers to this {_PLACES[checked.kind]} and path; "
            "choose another path.",
            "path",
        )


_PLACES: dict[str, str] = {
    DestinationKind.S3: "bucket",
    DestinationKind.DIRECTORY: "directory",
    DestinationKind.SFTP: "server login",
    DestinationKind.WEBHOOK: "webhook URL",
    DestinationKind.SLACK: "Slack webhook",
}
# What the audit trail says about a destination: everything it stores but the secret (a host key
# pinned is audited by its own action). A Slack webhook's URL is its secret, so only its SHA-256,
# inside the connection key, is audited.
_AUDITED_FIELDS = (
    "name",
    "kind",
    "bucket",
    "region",
    "endpoint_url",
    "s3_access",
    "access_key_id",
    "role_arn",
    "host",
    "port",
    "username",
    "sftp_login",
    "url",
    "path",
    "connection_key",
)


def _connection_values(checked: CheckedDestination) -> dict:
    return {field: getattr(checked, field) for field in _AUDITED_FIELDS}


def _audited(checked: CheckedDestination) -> dict:
    return _connection_values(checked)


def _current_audited(destination: ExportDestination) -> dict:
    return {field: getattr(destination, field) for field in _AUDITED_FIELDS}
