"""The public pages behind the links in a schedule's emails (download and unsubscribe) and in a
webhook's message (download).

Nobody signs in here: the signed token in the path is what authorises the visit, and
app/services/schedules/public_links.py decides whether it still does. Every refusal is the same plain
page (404 for a link that names nothing, 410 for one that no longer opens), so a visitor learns
nothing about the workspace, its people or its files.
"""

from __future__ import annotations

from flask import current_app, render_template, request

from app.blueprints.downloads import starts_a_download, stored_file_response
from app.blueprints.public_links import bp
from app.extensions import csrf
from app.models.types import utcnow
from app.observability.context import LOGGED_PATH
from app.services.schedules import public_links
from app.services.schedules.public_links import LinkInvalid
from app.storage import StorageError

# RFC 8058: a mail client unsubscribes by POSTing exactly this form field to the List-Unsubscribe URL.
ONE_CLICK_FIELD, ONE_CLICK_VALUE = "List-Unsubscribe", "One-Click"


@bp.before_request
def _log_the_route_not_the_token() -> None:
    # Whoever reads the access log must not be able to follow the links it lists.
    if request.url_rule is not None:
        request.environ[LOGGED_PATH] = request.url_rule.rule


@bp.get("/d/<token>")
def download(token: str):
    try:
        opened = public_links.open_delivered_file(token, utcnow())
    except LinkInvalid as refusal:
        return _invalid_link(refusal)
    except StorageError:
        current_app.logger.exception("a delivery link's file could not be read from storage")
        return render_template("public_links/unreadable.html"), 503
    response = stored_file_response(opened.download)
    # A link checker's HEAD, or a resumed download's later Range, is not another download.
    if starts_a_download(response):
        public_links.count_download(opened, utcnow())
    response.headers["X-Robots-Tag"] = "noindex"
    return response


# The one route without Flask-WTF's CSRF check: a mail client's one-click unsubscribe (RFC 8058)
# POSTs `List-Unsubscribe=One-Click` with no cookie and no form token, and must succeed. That
# gives a forger nothing: no session authorises this route, only the unguessable signed token in
# its path, which a forger would have to hold already. The confirm page's own form still sends
# its CSRF token, and it is checked when the POST is not the one-click one.
@bp.route("/u/<token>", methods=["GET", "POST"])
@csrf.exempt
def unsubscribe(token: str):
    try:
        target = public_links.unsubscribe_target(token)
    except LinkInvalid as refusal:
        return _invalid_link(refusal)
    if request.method == "GET":
        if public_links.is_unsubscribed(target):
            return render_template("public_links/unsubscribed.html", schedule=target.schedule, already=True)
        return render_template("public_links/unsubscribe.html", schedule=target.schedule, token=token)
    if request.form.get(ONE_CLICK_FIELD) != ONE_CLICK_VALUE and current_app.config["WTF_CSRF_ENABLED"]:
        csrf.protect()
    recorded = public_links.unsubscribe(target)
    return render_template("public_links/unsubscribed.html", schedule=target.schedule, already=not recorded)


def _invalid_link(refusal: LinkInvalid):
    current_app.logger.info("a delivery link was refused: %s", refusal.reason)
    status = 410 if refusal.gone else 404
    response = current_app.make_response((render_template("public_links/invalid.html"), status))
    response.headers["X-Robots-Tag"] = "noindex"
    return response
