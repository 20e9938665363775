"""The forms of the workspace export pages: buttons that carry only their CSRF token, and the
early deletion's confirmation."""

from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import BooleanField
from wtforms.validators import DataRequired


class ActionForm(FlaskForm):
    """Export now and Cancel: nothing to fill in but the CSRF token."""


class DeletePackageForm(FlaskForm):
    confirm = BooleanField(
        "I understand the package's files are removed for good",
        validators=[DataRequired("Tick the box to confirm that the package's files are removed for good.")],
    )
