"""Rhythm staff pages: a workspace-export delivery with its attempts, and the supersede action.

Only staff (`staff.view` or `staff.execute`) see the page; everyone else, workspace
administrators included, gets 404. Superseding a failed delivery and starting its replacement
needs `staff.execute` (403 otherwise) and a reason, kept in the audit log.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import current_user, login_required

from app.blueprints.staff import bp
from app.blueprints.staff.forms import SupersedeForm
from app.domain.errors import AccessDenied, TransitionRefused, ValidationError
from app.domain.text_rules import database_id
from app.models.workspace import STAFF_PERMISSIONS
from app.services import package_delivery


def staff_only(view: Callable) -> Callable:
    @wraps(view)
    @login_required
    def wrapped(*args, **kwargs):
        if not current_user.is_staff or not set(current_user.staff_permissions or ()) & set(STAFF_PERMISSIONS):
            abort(404)
        return view(*args, **kwargs)

    return wrapped


@bp.route("/deliveries/<int:delivery_id>", methods=["GET", "POST"])
@staff_only
def delivery(delivery_id: int):
    view = package_delivery.staff_view(delivery_id) if database_id(delivery_id) else None
    if view is None:
        abort(404)
    may_supersede = package_delivery.can_supersede(current_user)
    form = SupersedeForm()
    error = None
    if request.method == "POST":
        if not may_supersede:
            abort(403)
        if form.validate():
            try:
                replacement_id = package_delivery.supersede_and_replace(delivery_id, current_user, form.reason.data)
            except (AccessDenied, ValidationError, TransitionRefused) as exc:
                error = str(exc)
            else:
                flash(f"Delivery {delivery_id} superseded; its replacement, delivery {replacement_id}, has started.")
                return redirect(url_for("staff.delivery", delivery_id=replacement_id))
        else:
            error = next(iter(form.reason.errors), "The form could not be read.")
        view = package_delivery.staff_view(delivery_id)
    status = 400 if error else 200
    return render_template(
        "staff/delivery.html", view=view, form=form, error=error, may_supersede=may_supersede
    ), status
