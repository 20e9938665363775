"""Route guards shared by the workspace areas.

`workspace_member` loads the signed-in person's membership of the workspace in the URL and
puts it on `g`; anyone who is not a member gets 404 (NotVisible), so the workspace's existence
does not leak. `workspace_administrator` also asks for the administrator role, with the same 404.
`visible_or_404` is the one loader of a workspace's queries, reports and files: whatever the
person may not see (or, asked for a change, may not change) answers 404 alike.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import TypeVar

from flask import g
from flask_login import current_user, login_required

from app.domain.errors import NotVisible
from app.domain.people.access import Owned, RequesterContext, can_change, current_context
from app.domain.values.text_rules import database_id

Found = TypeVar("Found")


def workspace_member(view: Callable) -> Callable:
    @wraps(view)
    @login_required
    def wrapped(workspace_id: int, *args, **kwargs):
        # An id the database cannot hold names no workspace; asking would only fail.
        context = current_context(workspace_id, current_user.id) if database_id(workspace_id) else None
        if context is None:
            raise NotVisible("not a member of the workspace in the URL")
        g.access = context
        g.workspace_id = workspace_id
        return view(workspace_id, *args, **kwargs)

    return wrapped


def workspace_administrator(view: Callable) -> Callable:
    """`workspace_member`, and an administrator of it: workspace export, the audit log and the
    activity charts are theirs; anyone else gets the same 404 as a stranger."""

    @wraps(view)
    def wrapped(workspace_id: int, *args, **kwargs):
        if not g.access.is_admin:
            raise NotVisible("not an administrator of the workspace in the URL")
        return view(workspace_id, *args, **kwargs)

    return workspace_member(wrapped)


def visible_or_404(
    load: Callable[[RequesterContext, int], Found | None],
    object_id: int | None,
    to_change: Callable[[Found], Owned] | None = None,
) -> Found:
    """What `load` finds under `object_id` for the signed-in person in the URL's workspace, or 404.

    `load` answers None for what is not there, is in another workspace, reads a dataset the person
    may not read, or is someone else's file. With `to_change` (the owned record of what was
    found), a person who may not change it gets the same 404. No id (a query string without it)
    or an id beyond the database's integer range answers 404 without a query.
    """
    checked_id = database_id(object_id)
    if checked_id is None:
        raise NotVisible("no id, or one beyond the database's range")
    found = load(g.access, checked_id)
    if found is None:
        raise NotVisible(f"id {checked_id}: nothing this person may see")
    if to_change is not None and not can_change(g.access, to_change(found)):
        raise NotVisible(f"id {checked_id}: not this person's to change")
    return found
