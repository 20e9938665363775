"""How often a piece of background work is tried, and how long it waits between tries: one rule
for every kind (files, runs, workspace exports, package deliveries) and for the mail the product
sends about them (docs/architecture.md "The work engine")."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta


@dataclass(frozen=True)
class RetryPolicy:
    """At most `max_attempts` tries; after the n-th failed one, the n-th delay of `backoff` (the
    last delay once the table is used up; no delay when it is empty) before the next."""

    max_attempts: int
    backoff: tuple[timedelta, ...] = ()

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("a policy allows at least one attempt")

    def exhausted(self, attempts_used: int) -> bool:
        """Whether `attempts_used` tries (the failed one included) leave none to make."""
        return attempts_used >= self.max_attempts

    def delay_after(self, attempts_used: int) -> timedelta:
        """How long the next try waits once `attempts_used` tries failed."""
        if not self.backoff or attempts_used < 1:
            return timedelta(0)
        return self.backoff[min(attempts_used, len(self.backoff)) - 1]
