"""What every Rhythm staff action asks (DESIGN section 10): the person holds `staff.execute`, and
gives a reason, kept in the audit log, of at most REASON_LIMIT characters.

The services check both themselves, whoever calls them (a route, a job, the command line); the
staff routes check the permission first only to answer with the staff console's own 403, and the
forms take the same limit (`maxlength`).
"""

from __future__ import annotations

from app.domain.errors import AccessDenied, ValidationError
from app.domain.values.text_rules import refuse_unstorable
from app.models import Person

STAFF_EXECUTE = "staff.execute"
REASON_LIMIT = 1000


def may_act(person: Person) -> bool:
    """Whether `person` is Rhythm staff holding `staff.execute`."""
    return bool(person.is_staff and STAFF_EXECUTE in (person.staff_permissions or ()))


def refuse_unless_staff_executor(person: Person) -> None:
    """AccessDenied unless `person` may take staff actions."""
    if not may_act(person):
        raise AccessDenied("Staff actions need Rhythm staff with the staff.execute permission.")


def staff_reason(text: str | None) -> str:
    """The reason for a staff action, trimmed; ValidationError when it is missing, too long or
    holds a character that cannot be stored."""
    reason = (text or "").strip()
    if not reason:
        raise ValidationError("Give a reason: it is kept in the audit log with the action.", field="reason")
    if len(reason) > REASON_LIMIT:
        raise ValidationError(f"Keep the reason to at most {REASON_LIMIT:,} characters.", field="reason")
    refuse_unstorable(reason, "reason", "the reason")
    return reason
