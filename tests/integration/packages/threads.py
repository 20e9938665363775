"""Running code in threads of their own, each with its own app context and database session, as
two web requests or two schedulers would."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.extensions import db


@dataclass
class Outcome:
    value: Any = None
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)


def in_thread(app, work: Callable[[], Any]) -> tuple[threading.Thread, Outcome]:
    """Start `work` in a thread with its own app context, hence its own database session."""
    outcome = Outcome()

    def run() -> None:
        with app.app_context():
            try:
                outcome.value = work()
            except BaseException as error:  # the test inspects whatever happened
                outcome.error = error
            finally:
                db.session.remove()
                outcome.done.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome
