"""The workspace export settings and destination forms. WTForms reads the request, checks the
CSRF token and refuses text no column can hold; what each value means is judged by
app.domain.workspace_export.export_settings_rules, whose ValidationError names the field it belongs to."""

from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import HiddenField, PasswordField, SelectMultipleField, StringField, TextAreaField
from wtforms.validators import Length

from app.blueprints.form_validators import StorableText
from app.domain.destinations.destination_input import PRIVATE_KEY_LIMIT, DestinationInput
from app.domain.workspace_export.export_settings_rules import SettingsInput
from app.models.export_destination import (
    MESSAGE_URL_LIMIT,
    ROLE_ARN_LIMIT,
    ExportDestination,
    S3Access,
    SftpLogin,
)
from app.models.export_settings import ExportSettings

# Generous bounds: the rules give the precise message; these only stop absurd posts early.
_SHORT = [Length(max=1000, message="This is too long."), StorableText()]
_MESSAGE_URL = [Length(max=2 * MESSAGE_URL_LIMIT, message="This is too long."), StorableText()]


class SettingsForm(FlaskForm):
    datasets = SelectMultipleField("Datasets", validate_choice=False, validators=[StorableText()])
    format = StringField("Format", validators=_SHORT)
    volume_size_mb = StringField("Volume size (MB)", validators=_SHORT)
    retention_days = StringField("Keep packages for (days)", validators=_SHORT)
    cadence = StringField("Cadence", validators=_SHORT)
    cadence_time = StringField("Time", validators=_SHORT)
    cadence_weekday = StringField("Day of the week", validators=_SHORT)
    cadence_day = StringField("Day of the month", validators=_SHORT)
    notify_person_ids = SelectMultipleField("Also notify", validate_choice=False, validators=[StorableText()])
    status = StringField("Status", validators=_SHORT)
    version = HiddenField(validators=_SHORT)

    def settings_input(self) -> SettingsInput:
        return SettingsInput(
            datasets=list(self.datasets.data or []),
            format=self.format.data or "",
            volume_size_mb=self.volume_size_mb.data or "",
            retention_days=self.retention_days.data or "",
            cadence=self.cadence.data or "",
            cadence_time=self.cadence_time.data or "",
            cadence_weekday=self.cadence_weekday.data or "",
            cadence_day=self.cadence_day.data or "",
            notify_person_ids=list(self.notify_person_ids.data or []),
            status=self.status.data or "",
        )

    def fill(self, settings: ExportSettings) -> None:
        self.datasets.data = list(settings.datasets)
        self.format.data = settings.format
        self.volume_size_mb.data = str(settings.volume_size_mb)
        self.retention_days.data = str(settings.retention_days)
        self.cadence.data = settings.cadence
        self.cadence_time.data = settings.cadence_time
        self.cadence_weekday.data = "" if settings.cadence_weekday is None else str(settings.cadence_weekday)
        self.cadence_day.data = "" if settings.cadence_day is None else str(settings.cadence_day)
        self.notify_person_ids.data = [str(person_id) for person_id in settings.notify_person_ids]
        self.status.data = settings.status if settings.status != "suspended" else "active"
        self.version.data = str(settings.version) if settings.version else ""


class AttachmentPolicyForm(FlaskForm):
    choice = StringField("Email attachments", validators=_SHORT)
    limit_mb = StringField("Largest attachment (MB)", validators=_SHORT)


class DestinationForm(FlaskForm):
    name = StringField("Name", validators=_SHORT)
    kind = StringField("Kind", validators=_SHORT)
    bucket = StringField("Bucket", validators=_SHORT)
    region = StringField("Region", validators=_SHORT)
    endpoint_url = StringField("Endpoint", validators=_SHORT)
    s3_access = StringField("Sign in with", validators=_SHORT)
    access_key_id = StringField("Access key id", validators=_SHORT)
    secret = PasswordField("Secret access key", validators=_SHORT)
    host = StringField("Server", validators=_SHORT)
    port = StringField("Port", validators=_SHORT)
    username = StringField("User name", validators=_SHORT)
    sftp_login = StringField("Log in with", validators=_SHORT)
    password = PasswordField("Password", validators=_SHORT)
    role_arn = StringField(
        "Role ARN", validators=[Length(max=2 * ROLE_ARN_LIMIT, message="This is too long."), StorableText()]
    )
    private_key = TextAreaField(
        "Private key", validators=[Length(max=2 * PRIVATE_KEY_LIMIT, message="This is too long."), StorableText()]
    )
    url = StringField("Webhook URL", validators=_MESSAGE_URL)
    slack_url = PasswordField("Incoming webhook URL", validators=_MESSAGE_URL)
    path = StringField("Destination path", validators=_SHORT)
    version = HiddenField(validators=_SHORT)

    def destination_input(self) -> DestinationInput:
        return DestinationInput(
            name=self.name.data or "",
            kind=self.kind.data or "",
            bucket=self.bucket.data or "",
            region=self.region.data or "",
            endpoint_url=self.endpoint_url.data or "",
            access_key_id=self.access_key_id.data or "",
            secret=self.secret.data or "",
            path=self.path.data or "",
            host=self.host.data or "",
            port=self.port.data or "",
            username=self.username.data or "",
            sftp_login=self.sftp_login.data or "",
            password=self.password.data or "",
            private_key=self.private_key.data or "",
            s3_access=self.s3_access.data or "",
            role_arn=self.role_arn.data or "",
            url=self.url.data or "",
            slack_url=self.slack_url.data or "",
        )

    def fill(self, destination: ExportDestination) -> None:
        self.name.data = destination.name
        self.kind.data = destination.kind
        self.bucket.data = destination.bucket or ""
        self.region.data = destination.region or ""
        self.endpoint_url.data = destination.endpoint_url or ""
        self.s3_access.data = destination.s3_access or S3Access.ACCESS_KEY
        self.access_key_id.data = destination.access_key_id or ""
        self.role_arn.data = destination.role_arn or ""
        self.secret.data = ""
        self.host.data = destination.host or ""
        self.port.data = "" if destination.port is None else str(destination.port)
        self.username.data = destination.username or ""
        self.sftp_login.data = destination.sftp_login or SftpLogin.PASSWORD
        self.password.data = self.private_key.data = self.slack_url.data = ""
        self.url.data = destination.url or ""
        self.path.data = destination.path
        self.version.data = str(destination.version)


class SecretForm(FlaskForm):
    secret = PasswordField("New secret access key", validators=_SHORT)


class PinHostKeyForm(FlaskForm):
    # The fingerprint the administrator was shown: the key pinned must still be that one.
    fingerprint = HiddenField(validators=_SHORT)


class ConfirmForm(FlaskForm):
    """The buttons of the destination page (enable, disable, remove, test connection)."""
