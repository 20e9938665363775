"""The staff action forms."""

from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import TextAreaField
from wtforms.validators import Length

from app.blueprints.form_validators import StorableText
from app.domain.people.staff_rules import REASON_LIMIT


class SupersedeForm(FlaskForm):
    # Whether a reason was given is the service's to judge, with its own sentence.
    reason = TextAreaField(
        "Reason", validators=[Length(max=REASON_LIMIT, message="The reason is too long."), StorableText()]
    )
