"""gunicorn's error and access logs in the product's JSON form (gunicorn.conf.py names this class).

An access line carries the request's path, or the one the app gave in its place when the path
holds a secret (a signed link's token), and the request id the app put in the response's
X-Request-ID header, so a request's access line and the app's own lines about it share one id.
"""

from __future__ import annotations

import logging

from gunicorn import glogging

from app.observability.context import LOGGED_PATH
from app.observability.logs import JsonFormatter


class JsonLogger(glogging.Logger):
    def setup(self, cfg) -> None:
        super().setup(cfg)
        formatter = JsonFormatter("web")
        for logger in (self.error_log, self.access_log):
            for handler in logger.handlers:
                handler.setFormatter(formatter)

    def access(self, resp, req, environ, request_time) -> None:
        if not (self.cfg.accesslog or self.cfg.logconfig or self.cfg.logconfig_dict or self.cfg.syslog):
            return
        headers = dict((name.lower(), value) for name, value in (resp.headers or []))
        status = resp.status.split(None, 1)[0] if isinstance(resp.status, str) else str(resp.status)
        http = {
            "method": environ.get("REQUEST_METHOD") or req.method,
            # gunicorn's own 500 (the app raised past its handlers) comes with an environ without a path.
            "path": environ.get(LOGGED_PATH) or environ.get("PATH_INFO") or req.path,
            "status": int(status) if status.isdigit() else status,
            "bytes": getattr(resp, "sent", None),
            "duration_ms": round(request_time.total_seconds() * 1000, 1),
            "remote": environ.get("REMOTE_ADDR"),
            "user_agent": environ.get("HTTP_USER_AGENT"),
        }
        self.access_log.log(
            logging.INFO,
            "%s %s %s",
            http["method"],
            http["path"],
            http["status"],
            extra={"http": http, "request_id": headers.get("x-request-id")},
        )
