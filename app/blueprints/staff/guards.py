"""Staff pages answer 404 to everyone who is not Rhythm staff with `staff.view`, so their
existence does not leak; actions also need `staff.execute` (403 with a sentence otherwise)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from flask import render_template
from flask_login import current_user, login_required

from app.domain.errors import NotVisible
from app.domain.people.staff_rules import STAFF_EXECUTE


def is_staff_with(permission: str) -> bool:
    """Whether the signed-in person is staff holding `permission`; `staff.execute` includes viewing."""
    if not (current_user.is_authenticated and current_user.is_staff):
        return False
    held = set(current_user.staff_permissions or [])
    return permission in held or (permission == "staff.view" and STAFF_EXECUTE in held)


def staff_viewer(view: Callable) -> Callable:
    @wraps(view)
    @login_required
    def wrapped(*args, **kwargs):
        if not is_staff_with("staff.view"):
            raise NotVisible("the staff console is for Rhythm staff with staff.view")
        return view(*args, **kwargs)

    return wrapped


def staff_executor(view: Callable) -> Callable:
    @wraps(view)
    @login_required
    def wrapped(*args, **kwargs):
        if not is_staff_with("staff.view"):
            raise NotVisible("the staff console is for Rhythm staff with staff.view")
        if not is_staff_with(STAFF_EXECUTE):
            message = "Staff actions need the staff.execute permission; with staff.view you can only look."
            return render_template("errors/error.html", code=403, title="Not allowed", message=message), 403
        return view(*args, **kwargs)

    return wrapped
