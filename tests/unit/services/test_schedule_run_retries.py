"""How long a schedule run waits between its tries while the mail server is unavailable
(RETRIES in app/services/schedules/schedule_runs.py): briefly at first, never more than two
minutes, for about two hours in all."""

from __future__ import annotations

from datetime import timedelta

from app.models.schedule import MAIL_UNAVAILABLE
from app.services.schedules.schedule_runs import RETRIES

MAIL = RETRIES[MAIL_UNAVAILABLE]


def _waits() -> list[timedelta]:
    """The wait after each failed try but the last, which fails the run."""
    return [MAIL.delay_after(failed) for failed in range(1, MAIL.max_attempts)]


def test_mail_tries_wait_30_seconds_then_a_minute_then_two_minutes_each_for_about_two_hours():
    waits = _waits()

    assert waits[:3] == [timedelta(seconds=30), timedelta(minutes=1), timedelta(minutes=2)]
    assert set(waits[2:]) == {timedelta(minutes=2)}
    assert timedelta(hours=2) <= sum(waits, timedelta(0)) <= timedelta(hours=2, minutes=10)


def test_mail_flows_within_two_minutes_of_the_server_coming_back_at_any_time_in_the_window():
    """Whenever the outage ends, the next try comes at most two minutes later."""
    assert max(_waits()) <= timedelta(minutes=2)
