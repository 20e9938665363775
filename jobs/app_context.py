"""One Flask app per process for workers and the scheduler, created on first use.

RQ forks a work-horse for every job. A forked horse inherits its parent's app, but not safely
its database connections: the first use in a new process drops the inherited pool (without
closing the parent's sockets) so the horse opens connections of its own.

The app has no pages (`create_app(pages=False)`): what the worker holds before it forks, every
job holds, so the worker loads the engines, the models and the job modules (jobs/worker.py,
`ready_to_fork`) and nothing else; a writer or a store a job's work picks is loaded in its own
work-horse.
"""

from __future__ import annotations

import os
import threading

from flask import Flask

from app.extensions import db

_lock = threading.Lock()
_app: Flask | None = None
_app_pid: int | None = None


def worker_app() -> Flask:
    global _app, _app_pid
    with _lock:
        if _app is None:
            from app import create_app

            _app = create_app(pages=False)
            _app_pid = os.getpid()
        elif _app_pid != os.getpid():
            with _app.app_context():
                db.engine.dispose(close=False)
            _app_pid = os.getpid()
        return _app
