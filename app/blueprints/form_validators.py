"""WTForms validators shared by the forms of every area."""

from __future__ import annotations

from wtforms import Field, Form
from wtforms.validators import ValidationError

from app.domain.values.text_rules import TextField, has_unstorable_character


class StorableText:
    """Refuses text the database cannot hold (a NUL, an invalid character): see app.domain.values.text_rules.

    Put it on every text field, so such a value gets a message before it reaches a query.
    """

    def __call__(self, form: Form, field: Field) -> None:
        if isinstance(field.data, str) and has_unstorable_character(field.data):
            raise ValidationError("This contains a character that cannot be used (a NUL or another invalid character).")


class WithinLimit:
    """Refuses a value longer (once trimmed, as the field's check counts) than the limit its
    declaration states, with the declaration's own sentence, so the form and the rule never hold
    two limits for one field."""

    def __init__(self, declared: TextField) -> None:
        self.declared = declared

    def __call__(self, form: Form, field: Field) -> None:
        if isinstance(field.data, str) and len(field.data.strip()) > self.declared.limit:
            raise ValidationError(self.declared.too_long)


def declared_text(declared: TextField) -> list:
    """The validators of a form field declared in the domain: its limit, and storable text."""
    return [WithinLimit(declared), StorableText()]
