"""Errors a person can cause, in five categories; each category is one answer.

Every such error derives from `DomainError` through exactly one of the categories below, and the
web answers by category (`app/blueprints/errors.py`, `ANSWERS`): a route catches one only where
it shows the refusal on its own page (a form redrawn with the message beside its field, a
fragment htmx swaps in, a flash before a redirect). Jobs turn them into failure codes.

Exceptions outside this tree are not a person's doing: the store or the mail server failing, or a
signal inside a job (a stale attempt, a finished phase); each says so in its docstring.
"""

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class DomainError(Exception):
    """Base class of what a person can cause; never raised itself, only through a category."""


class ValidationError(DomainError):
    """Input that cannot be accepted; `field` names the form field when there is one.

    Answered 400 with the sentence."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


class NotVisible(DomainError):
    """Nothing this person may see answers to what was asked: not there, in another workspace, or
    someone else's. Answered 404 with the plain not-found page, whichever it is, so that whether
    it exists does not leak; the message names what was looked for, for the log only."""


class AccessDenied(DomainError):
    """The person may not see or do this. Answered 404 like `NotVisible`: a workspace's members
    learn nothing from an address they may not use (Rhythm staff's own 403 is the staff guard's)."""


class TransitionRefused(DomainError):
    """A lifecycle change whose starting status did not hold in the database.

    Answered 409 with the sentence."""


class Conflict(DomainError):
    """What was asked does not fit the state things are in now: in use, already running, not ready
    or expired, over a limit, or settings out of date. Answered 409 with the sentence."""


class ChangedMeanwhile(Conflict):
    """A save made on the version the person opened, which someone else has since replaced (its
    version-guarded UPDATE hit no row): writing it would undo their change. `thing` names what was
    changed ("schedule", "export settings"), for the sentence and for the page's link that reloads
    it; `plural` when the thing is named in the plural."""

    def __init__(self, thing: str, *, plural: bool = False):
        this, it = ("these", "them") if plural else ("this", "it")
        super().__init__(
            f"Someone else changed {this} {thing} after you opened {it}. "
            f"Reload {it} to see their changes, then make yours again."
        )
        self.thing = thing


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
