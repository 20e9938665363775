"""The one retry rule every kind of background work and every notice uses."""

from datetime import timedelta

import pytest

from app.domain.timing.retry_policy import RetryPolicy

BACKOFF = (timedelta(minutes=1), timedelta(minutes=5), timedelta(minutes=30))


def test_a_record_has_attempts_left_until_it_used_the_allowed_number():
    policy = RetryPolicy(max_attempts=3)
    assert [policy.exhausted(used) for used in (1, 2, 3, 4)] == [False, False, True, True]


def test_the_nth_failure_waits_the_nth_delay():
    policy = RetryPolicy(max_attempts=4, backoff=BACKOFF)
    assert [policy.delay_after(used) for used in (1, 2, 3)] == list(BACKOFF)


def test_failures_past_the_table_wait_its_last_delay():
    policy = RetryPolicy(max_attempts=10, backoff=BACKOFF)
    assert policy.delay_after(7) == BACKOFF[-1]


def test_a_policy_without_backoff_tries_again_at_once():
    assert RetryPolicy(max_attempts=5).delay_after(2) == timedelta(0)


def test_a_policy_allowing_no_attempt_is_refused():
    with pytest.raises(ValueError, match="at least one attempt"):
        RetryPolicy(max_attempts=0)
