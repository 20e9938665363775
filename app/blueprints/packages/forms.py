"""The forms of the workspace export pages: buttons that carry only their CSRF token, a
delivery's Retry (with the attempt the page showed), and the early deletion's confirmation."""

from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import BooleanField, IntegerField
from wtforms.validators import DataRequired, InputRequired, NumberRange
from wtforms.widgets import HiddenInput


class ActionForm(FlaskForm):
    """Export now and Cancel: nothing to fill in but the CSRF token."""


class RetryDeliveryForm(FlaskForm):
    """Retry: the attempt the page showed, so a second press of the same page retries nothing."""

    attempt = IntegerField(
        widget=HiddenInput(),
        validators=[
            InputRequired("The page was out of date; reload it and try again."),
            NumberRange(min=0, max=2**31 - 1, message="The page was out of date; reload it and try again."),
        ],
    )


class DeletePackageForm(FlaskForm):
    confirm = BooleanField(
        "I understand the package's files are removed for good",
        validators=[DataRequired("Tick the box to confirm that the package's files are removed for good.")],
    )
