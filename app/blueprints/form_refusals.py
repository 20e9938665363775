"""WTForms' refusals in the shape the pages show every refusal in (`m.field_error`, `m.invalid`)."""

from __future__ import annotations

from flask_wtf import FlaskForm

from app.domain.errors import ValidationError, ValidationErrors


def form_refusals(form: FlaskForm) -> ValidationError | None:
    """WTForms' refusals as ValidationErrors naming their fields, so the page shows both kinds alike.

    The CSRF token is left out: CSRFProtect refuses a request without a good one before any form reads it.
    """
    refusals = [
        ValidationError(str(messages[0]), name)
        for name, messages in form.errors.items()
        if messages and name != "csrf_token"
    ]
    if len(refusals) > 1:
        return ValidationErrors(refusals)
    return refusals[0] if refusals else None
