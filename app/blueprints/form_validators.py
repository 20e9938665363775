"""WTForms validators shared by the forms of every area."""

from __future__ import annotations

from wtforms import Field, Form
from wtforms.validators import ValidationError

from app.domain.values.text_rules import has_unstorable_character


class StorableText:
    """Refuses text the database cannot hold (a NUL, an invalid character): see app.domain.values.text_rules.

    Put it on every text field, so such a value gets a message before it reaches a query.
    """

    def __call__(self, form: Form, field: Field) -> None:
        if isinstance(field.data, str) and has_unstorable_character(field.data):
            raise ValidationError("This contains a character that cannot be used (a NUL or another invalid character).")
