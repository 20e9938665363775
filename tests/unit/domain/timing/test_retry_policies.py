"""One table of waits per purpose, stated once (app/domain/timing/retry_policy.py): no other module
of the product writes a retry policy, and the senders of one purpose share its policy."""

from __future__ import annotations

import re
from pathlib import Path

from app.domain.timing import retry_policy
from app.domain.timing.retry_policy import COPY_TO_A_DESTINATION, MAIL_TO_A_PERSON
from app.models.schedule import MAIL_UNAVAILABLE
from app.services.schedules.schedule_runs import RETRIES
from app.services.workspace_export.delivery_work import DELIVERIES
from app.services.workspace_export.notice_work import NOTICES

APP = Path(__file__).resolve().parents[4] / "app"
POLICIES = Path(retry_policy.__file__).resolve()


def test_no_module_but_the_policies_one_writes_a_retry_policy():
    writers = [
        path.relative_to(APP).as_posix()
        for path in sorted(APP.rglob("*.py"))
        if path.resolve() != POLICIES and re.search(r"\bRetryPolicy\(", path.read_text())
    ]
    assert writers == []


def test_a_schedule_runs_recipients_and_export_notices_wait_for_the_mail_server_alike():
    assert RETRIES[MAIL_UNAVAILABLE] is MAIL_TO_A_PERSON
    assert NOTICES.retries is MAIL_TO_A_PERSON


def test_a_package_delivery_whose_copy_failed_or_whose_worker_stopped_waits_as_a_copy_to_a_destination():
    assert DELIVERIES.retries is COPY_TO_A_DESTINATION
