"""Errors the domain raises; routes turn them into messages, jobs into failure codes."""

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class DomainError(Exception):
    """Base class: the message is meant for the person who caused it."""


class ValidationError(DomainError):
    """Input that cannot be accepted; `field` names the form field when there is one."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


class TransitionRefused(DomainError):
    """A lifecycle change whose starting status did not hold in the database."""


class AccessDenied(DomainError):
    """The person may not see or do this."""


class ValidationErrors(ValidationError):
    """Every refusal of one form at once, one a field, so the page can show each beside its field.

    Its own message and field are the first refusal's, for a caller that shows only one.
    """

    def __init__(self, refusals: list[ValidationError]):
        super().__init__(str(refusals[0]), refusals[0].field)
        self.errors = tuple(refusals)


class FieldChecks:
    """Runs a form's checks one after another and keeps every refusal (the first of each field),
    instead of stopping at the first: `check` answers None for a refused value, `raise_any`
    raises what was refused once every check has run."""

    def __init__(self) -> None:
        self.refusals: list[ValidationError] = []

    def check(self, check: Callable[..., T], *args: object) -> T | None:
        try:
            return check(*args)
        except ValidationErrors as refused:
            self._keep(*refused.errors)
        except ValidationError as refused:
            self._keep(refused)
        return None

    def _keep(self, *refusals: ValidationError) -> None:
        known = {refusal.field for refusal in self.refusals}
        for refusal in refusals:
            if refusal.field not in known:
                self.refusals.append(refusal)
                known.add(refusal.field)

    def raise_any(self) -> None:
        if len(self.refusals) == 1:
            raise self.refusals[0]
        if self.refusals:
            raise ValidationErrors(self.refusals)
