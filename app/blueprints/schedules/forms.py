"""The schedule form. WTForms reads the request and refuses text no column can hold; what each
value means (a source the person may read, a timetable, recipients) is judged by
app.services.schedules, whose ValidationError names the field it belongs to."""

from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import BooleanField, HiddenField, SelectMultipleField, StringField, TextAreaField
from wtforms.validators import Length

from app.blueprints.form_validators import StorableText, declared_text
from app.domain.schedules.schedule_rules import CUSTOM_MESSAGE, NAME
from app.domain.timing.timetable import TimetableKind
from app.models.schedule import SendCondition
from app.services.schedules.schedules import ScheduleInput
from app.vocabulary import Heading

# Generous bounds: the service gives the precise message; these only stop absurd posts early.
_SHORT = [Length(max=300, message="This is too long."), StorableText()]


class TimetableFields(FlaskForm):
    """The timetable part of the form, also posted alone for the live preview."""

    frequency = StringField("How often", validators=_SHORT)
    minute = StringField("Minute past the hour", validators=_SHORT)
    time = StringField("Time", validators=_SHORT)
    days = SelectMultipleField("Days", validate_choice=False, validators=[StorableText()])
    day = StringField("Day of the month", validators=_SHORT)
    expression = StringField("Cron expression", validators=_SHORT)
    zone = StringField("Time zone", validators=_SHORT)
    # Beside the timetable, so the next five runs say what it means as it changes.
    send_condition = StringField("When to send", validators=_SHORT)
    viewer_zone = HiddenField(validators=_SHORT)

    def timetable(self) -> dict:
        return {
            "kind": self.frequency.data or "",
            "minute": self.minute.data or "",
            "time": self.time.data or "",
            "days": list(self.days.data or []),
            "day": self.day.data or "",
            "expression": self.expression.data or "",
            "zone": self.zone.data or "",
        }

    def fill_timetable(self, timetable: dict) -> None:
        self.frequency.data = timetable.get("kind", TimetableKind.DAILY)
        self.minute.data = str(timetable.get("minute", ""))
        self.time.data = timetable.get("time", "")
        self.days.data = list(timetable.get("days", []))
        self.day.data = str(timetable.get("day", ""))
        self.expression.data = timetable.get("expression", "")
        self.zone.data = timetable.get("zone", "")


class ScheduleForm(TimetableFields):
    name = StringField(NAME.title, validators=declared_text(NAME))
    source = StringField("Sends", validators=_SHORT)
    format = StringField("Format", validators=_SHORT)
    heading = StringField("Heading row", validators=_SHORT)
    people = SelectMultipleField("People", validate_choice=False, validators=[StorableText()])
    addresses = TextAreaField(
        "Email addresses", validators=[Length(max=20000, message="This is too long."), StorableText()]
    )
    template_version_id = StringField("Template", validators=_SHORT)
    custom_message = TextAreaField(CUSTOM_MESSAGE.title, validators=declared_text(CUSTOM_MESSAGE))
    attach_file = BooleanField("Attach the file")
    destinations = SelectMultipleField("Destinations", validate_choice=False, validators=[StorableText()])
    alert_with_file = BooleanField("With an alert, the empty file too")
    run_as_recipients = BooleanField("Run as each recipient")
    version = HiddenField(validators=_SHORT)

    def schedule_input(self) -> ScheduleInput:
        return ScheduleInput(
            name=self.name.data or "",
            source=self.source.data or "",
            format=self.format.data or "",
            heading=self.heading.data or Heading.NAMES,
            timetable=self.timetable(),
            people=list(self.people.data or []),
            addresses=self.addresses.data or "",
            template_version_id=self.template_version_id.data or "",
            custom_message=self.custom_message.data or "",
            # The page always checks one choice; a post without any means the default, as on a new schedule.
            send_condition=self.send_condition.data or SendCondition.ALWAYS,
            attach_file=bool(self.attach_file.data),
            destinations=list(self.destinations.data or []),
            alert_with_file=bool(self.alert_with_file.data),
            run_as_recipients=bool(self.run_as_recipients.data),
        )

    def fill(self, data: ScheduleInput, version: int) -> None:
        self.name.data = data.name
        self.source.data = data.source
        self.format.data = data.format
        self.heading.data = data.heading
        self.fill_timetable(data.timetable)
        self.people.data = data.people
        self.addresses.data = data.addresses
        self.template_version_id.data = data.template_version_id
        self.custom_message.data = data.custom_message
        self.send_condition.data = data.send_condition
        self.attach_file.data = data.attach_file
        self.destinations.data = data.destinations
        self.alert_with_file.data = data.alert_with_file
        self.run_as_recipients.data = data.run_as_recipients
        self.version.data = str(version)


class ConfirmForm(FlaskForm):
    """The buttons of the schedule page (pause, resume, take ownership, run now, refresh, delete)."""

    legacy_switched_off = BooleanField("The old system no longer sends this")
