"""How often a piece of background work is tried, and how long it waits between tries: one rule
for every kind (files, runs, workspace exports, package deliveries, export notices) and for the
mail the product sends, and below it the one table of waits of each purpose
(docs/architecture.md "The work engine")."""

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


# The table of waits of each purpose, stated once: every kind and every sender names its
# purpose's policy from here (docs/architecture.md "The work engine", "Retries, one table per
# purpose").

# Mail to a person (a schedule run's recipients, an export notice) that the mail server could not
# take now: tried again after 30 s, 1 min, then every 2 min, 64 tries over 2 h 3.5 min. A send
# rides out a mail outage of two hours, and its mail flows within 2 minutes of the server's return
# (a longer wait would only keep the mail back once the server answers). The attempt that counts
# the 64th try gives the mail up.
MAIL_TO_A_PERSON = RetryPolicy(
    max_attempts=64, backoff=(timedelta(seconds=30), timedelta(minutes=1), timedelta(minutes=2))
)

# A copy to a customer's destination (a package delivery) that failed transiently, or whose worker
# stopped mid-copy: tried again after 1 min, 5 min, 30 min, then every 2 h; the fifth try is the
# last (a customer's storage that refuses for hours needs its owner, not more tries).
COPY_TO_A_DESTINATION = RetryPolicy(
    max_attempts=5, backoff=(timedelta(minutes=1), timedelta(minutes=5), timedelta(minutes=30), timedelta(hours=2))
)

# A scheduled run whose file failed transiently (storage unavailable, an unexpected error): 3 tries
# in 2.5 minutes, then the run fails (its next occurrence is the next chance).
SCHEDULED_FILE = RetryPolicy(max_attempts=3, backoff=(timedelta(seconds=30), timedelta(minutes=2)))

# An export file or a schedule run whose worker stopped (killed, its machine gone): started again
# at once; the fifth stop gives it up.
RESTART_A_FILE_OR_RUN = RetryPolicy(max_attempts=5)

# A workspace export whose worker stopped: started again at once, three attempts in all (each is
# minutes of work over the whole workspace).
RESTART_A_WORKSPACE_EXPORT = RetryPolicy(max_attempts=3)
