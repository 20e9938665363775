"""Fragment routes: the pieces of a page htmx fetches (a poll, a preview loaded after its page, a
part of a form drawn again), rendered from a `_*.html` template alone, without the page's header
and navigation.

Each is marked `@fragment_of(page)`, the endpoint of the page it belongs to, right under its route
decorator. A person who opens a fragment's URL directly (a new tab, a bookmark, a link shared in
chat) sends no `HX-Request` header, and is sent on to that page, with the same URL values, rather
than left on an unstyled piece of it. The fragment's view answers first, so it is the one that
signs in, authorises and finds the record: whoever it refuses is refused as before (the sign-in
page, 404), and only an answer it would have given is turned into the redirect. Only GET is sent
on: a POST is a form's action and answers for itself (Cancel and Test connection answer their
page to a browser without htmx; the form fragments are only ever posted by htmx). The marker,
`FRAGMENT_PAGE` on the view, lets the tests find every fragment route.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from flask import current_app, redirect, request, url_for

from app.extensions import htmx

FRAGMENT_PAGE = "fragment_page"


def fragment_of(page: str) -> Callable[[Callable], Callable]:
    def mark(view: Callable) -> Callable:
        @wraps(view)
        def answered(**values):
            answer = view(**values)
            if htmx or request.method != "GET":
                return answer
            response = current_app.make_response(answer)
            # 286 is htmx's "stop polling", an answer like 200.
            if response.status_code not in (200, 286):
                return response
            return redirect(url_for(page, **values))

        setattr(answered, FRAGMENT_PAGE, page)
        return answered

    return mark
