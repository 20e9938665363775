"""Error pages: a readable page for people, JSON-free and with no internals."""

from flask import Flask, render_template
from flask_wtf.csrf import CSRFError


def register_error_pages(app: Flask) -> None:
    messages = {
        400: ("Bad request", "The request could not be understood."),
        403: ("Not allowed", "You do not have access to this."),
        404: ("Not found", "There is nothing here, or you do not have access to it."),
        405: ("Not allowed", "That action is not available here."),
        410: ("Gone", "This is no longer available."),
        413: ("Too large", "The request is too large."),
        429: ("Slow down", "Too many requests. Try again in a moment."),
        500: ("Something went wrong", "The error was logged. Try again, or contact support."),
    }

    def render(code: int, detail: str | None = None):
        title, message = messages[code]
        # An error page names no workspace: a 404 must not tell whose workspace the address is in.
        page = render_template(
            "errors/error.html", code=code, title=title, message=detail or message, plain_header=True
        )
        return page, code

    for code in messages:
        app.register_error_handler(code, lambda error, code=code: render(code))

    @app.errorhandler(413)
    def too_large(error):
        limit = app.config.get("MAX_CONTENT_LENGTH")
        if not limit:
            return render(413)
        size = _readable_size(limit)
        return render(413, f"The request is larger than {size}, the most this site accepts. Send less at once.")

    @app.errorhandler(CSRFError)
    def csrf_error(error: CSRFError):
        return render(400, "The form expired or was sent from elsewhere. Reload the page and try again.")


def _readable_size(size: int) -> str:
    for unit, scale in (("MB", 1024 * 1024), ("KB", 1024)):
        if size >= scale:
            return f"{size / scale:,.1f}".removesuffix(".0") + f" {unit}"
    return f"{size:,} bytes"
