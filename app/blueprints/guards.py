"""Route guards shared by the workspace areas.

`workspace_member` loads the signed-in person's membership of the workspace in the URL and
puts it on `g`; anyone who is not a member gets 404, so the workspace's existence does not leak.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from flask import abort, g
from flask_login import current_user, login_required

from app.domain.access import current_context


def workspace_member(view: Callable) -> Callable:
    @wraps(view)
    @login_required
    def wrapped(workspace_id: int, *args, **kwargs):
        context = current_context(workspace_id, current_user.id)
        if context is None:
            abort(404)
        g.access = context
        g.workspace_id = workspace_id
        return view(workspace_id, *args, **kwargs)

    return wrapped
