"""Schedule runs in this process, mailing through the real aiosmtpd server: what arrives, retries
while the server refuses, each skip reason, and the owner's lost access."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import delete, select, update

from app.communications import Mailer, message_id_for
from app.extensions import db
from app.models import ExportFile, Membership
from app.models.schedule import (
    MAIL_UNAVAILABLE,
    CommunicationTemplate,
    CommunicationTemplateVersion,
    RecipientDelivery,
    RunTrigger,
    Schedule,
    ScheduleRun,
    ScheduleUnsubscribe,
)
from app.models.types import utcnow
from app.services.pages.public_link_tokens import nonce_from_token
from app.services.schedules.schedule_admission import admit_run
from app.services.schedules.schedule_runs import RETRIES, process_run
from tests.fixtures.smtp import free_port

# The attempts a run makes while the mail server stays unavailable: the first and one per delay.
MAIL_ATTEMPTS = RETRIES[MAIL_UNAVAILABLE].max_attempts
LINK = re.compile(r"https?://[^\s\"<>]+/([du])/([A-Za-z0-9_.\-]+)")


def reloaded(model, row_id):
    db.session.rollback()
    return db.session.get(model, row_id, populate_existing=True)


def deliveries(run_id: int) -> dict[str, RecipientDelivery]:
    db.session.rollback()
    rows = db.session.scalars(select(RecipientDelivery).where(RecipientDelivery.run_id == run_id)).all()
    return {row.address_key: row for row in rows}


def test_run_mails_each_recipient_a_message_with_its_own_links(run_scenario, mail_to_smtp_server, smtp_server):
    schedule = run_scenario.make_schedule(recipients=("colleague", "Auditor@Example.org"))
    run = run_scenario.admit(schedule)

    assert process_run(run.id) == "succeeded"

    settled = reloaded(ScheduleRun, run.id)
    assert (settled.status, settled.attempt_count, settled.row_count) == ("succeeded", 1, 5)
    export = db.session.get(ExportFile, settled.export_id)
    assert (export.status, export.schedule_id, export.requester_id) == ("succeeded", schedule.id, run_scenario.owner.id)
    rows = deliveries(run.id)
    by_address = {m.recipients[0]: m for m in smtp_server.messages}
    assert sorted(by_address) == sorted([run_scenario.colleague.email, "Auditor@Example.org"])
    for address_key, row in rows.items():
        address = run_scenario.colleague.email if address_key.startswith("person:") else "Auditor@Example.org"
        arrived = by_address[address]
        assert row.status == "submitted" and row.submission_id == arrived.queue_id
        message = arrived.message
        assert message["Message-ID"] == message_id_for("schedule-delivery", row.id, row.created_at, "rhythm.test")
        assert message["Subject"].startswith("Weekly hours “Zoë” <b>&amp;")
        text, html = arrived.part("text/plain"), arrived.part("text/html")
        assert "here is this week's file." in text and "Rows" in text and "5" in text
        assert "&lt;b&gt;&amp;amp;" in html
        links = dict(LINK.findall(text))
        assert nonce_from_token(links["d"], "download") == row.link_nonce
        assert nonce_from_token(links["u"], "unsubscribe") == row.link_nonce
        unsubscribe_url = re.search(r"https?://\S+/u/\S+", text).group(0)
        assert message["List-Unsubscribe"] == f"<{unsubscribe_url}>"
        assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"


def test_run_processed_again_emails_nobody_twice(run_scenario, mail_to_smtp_server, smtp_server):
    schedule = run_scenario.make_schedule(recipients=("colleague", "owner"))
    run = run_scenario.admit(schedule)
    process_run(run.id)
    # As if the job were delivered again while the run was still running.
    db.session.execute(update(ScheduleRun).where(ScheduleRun.id == run.id).values(status="running"))
    db.session.commit()

    process_run(run.id)

    assert len(smtp_server.messages) == 2
    assert reloaded(ScheduleRun, run.id).attempt_count == 2


def test_job_delivered_again_while_the_holder_is_alive_starts_no_second_attempt(
    run_scenario, mail_to_smtp_server, smtp_server
):
    schedule = run_scenario.make_schedule(recipients=("colleague",))
    run = run_scenario.admit(schedule)
    live_lease = utcnow() + timedelta(minutes=5)
    db.session.execute(
        update(ScheduleRun)
        .where(ScheduleRun.id == run.id)
        .values(status="running", attempt_count=1, lease_holder="alive", lease_expires_at=live_lease)
    )
    db.session.commit()

    assert process_run(run.id) == "not_due"

    assert reloaded(ScheduleRun, run.id).attempt_count == 1
    assert smtp_server.messages == []


def test_server_refusing_for_a_while_retries_and_each_recipient_gets_one_message(
    run_scenario, mail_to_smtp_server, smtp_server
):
    schedule = run_scenario.make_schedule(recipients=("colleague", "owner"))
    run = run_scenario.admit(schedule)
    smtp_server.refuse(3)

    assert process_run(run.id) == "retry_later"
    waiting = reloaded(ScheduleRun, run.id)
    assert waiting.status == "queued" and waiting.next_attempt_at > utcnow()
    assert process_run(run.id) == "not_due"
    assert process_run(run.id, now=waiting.next_attempt_at) == "retry_later"
    assert process_run(run.id, now=utcnow() + timedelta(hours=1)) == "succeeded"

    assert sorted(m.recipients[0] for m in smtp_server.messages) == sorted(
        [run_scenario.colleague.email, run_scenario.owner.email]
    )
    settled = reloaded(ScheduleRun, run.id)
    assert [attempt.outcome for attempt in settled.attempts] == ["failed", "failed", "succeeded"]
    assert settled.attempts[0].error_code == "mail_unavailable"
    assert {row.status for row in deliveries(run.id).values()} == {"submitted"}


def test_row_claimed_by_an_attempt_that_died_before_sending_is_sent_by_the_next(
    run_scenario, mail_to_smtp_server, smtp_server
):
    schedule = run_scenario.make_schedule(recipients=("colleague",))
    run = run_scenario.admit(schedule)
    smtp_server.refuse(1)
    process_run(run.id)
    # As if attempt 2 had claimed the row and its worker died before sending.
    db.session.execute(
        update(RecipientDelivery)
        .where(RecipientDelivery.run_id == run.id)
        .values(claimed_at=utcnow(), claimed_attempt=2)
    )
    db.session.execute(
        update(ScheduleRun)
        .where(ScheduleRun.id == run.id)
        .values(status="running", attempt_count=2, next_attempt_at=None)
    )
    db.session.commit()

    assert process_run(run.id, now=utcnow() + timedelta(minutes=5)) == "succeeded"

    assert [m.recipients for m in smtp_server.messages] == [[run_scenario.colleague.email]]
    assert [row.send_attempts for row in deliveries(run.id).values()] == [2]


def test_server_unavailable_past_the_whole_backoff_fails_the_run_and_its_rows(
    run_scenario, mail_to_smtp_server, smtp_server
):
    schedule = run_scenario.make_schedule(recipients=("colleague",))
    run = run_scenario.admit(schedule)
    smtp_server.refuse(MAIL_ATTEMPTS)
    later = utcnow()
    for _ in range(MAIL_ATTEMPTS):
        later += timedelta(hours=1)
        process_run(run.id, now=later)

    settled = reloaded(ScheduleRun, run.id)
    assert (settled.status, settled.failure_code, settled.attempt_count) == (
        "failed",
        "mail_unavailable",
        MAIL_ATTEMPTS,
    )
    assert [row.status for row in deliveries(run.id).values()] == ["failed"]
    assert reloaded(Schedule, schedule.id).failure_streak == 1
    assert smtp_server.messages == []


@pytest.fixture
def mail_server_down(app, smtp_settings):
    """Switch this process's mailer to an address where no server listens (connection refused)
    and back to the test server: `mail_server_down(True)`, `mail_server_down(False)`."""

    def switch(down: bool) -> None:
        settings = dataclasses.replace(smtp_settings, port=free_port()) if down else smtp_settings
        app.extensions["rhythm_mailer"] = Mailer(settings)

    return switch


def test_a_mail_outage_of_over_an_hour_is_ridden_out_and_each_recipient_gets_one_message(
    run_scenario, mail_to_smtp_server, smtp_server, mail_server_down, client, auth
):
    schedule = run_scenario.make_schedule(recipients=("colleague", "owner", "someone@example.org"))
    run = run_scenario.admit(schedule)
    # The first two messages meet a busy server, the third is sent; then the server goes away.
    smtp_server.refuse(2)
    first_try = utcnow()
    assert process_run(run.id, now=first_try) == "retry_later"
    mail_server_down(True)
    waiting = reloaded(ScheduleRun, run.id)
    while waiting.next_attempt_at - first_try < timedelta(hours=1):
        assert process_run(run.id, now=waiting.next_attempt_at) == "retry_later"
        waiting = reloaded(ScheduleRun, run.id)

    assert (waiting.status, waiting.failure_code) == ("queued", None)
    auth.login(run_scenario.owner.email)
    page = client.get(f"/w/{run_scenario.workspace.id}/schedules/{schedule.id}").get_data(as_text=True)
    assert "waiting for the mail server" in page and "The mail server could not take the message for 2" in page
    assert ">failed<" not in page and "waited for the mail server" in page and "mail_unavailable" not in page

    mail_server_down(False)
    assert process_run(run.id, now=waiting.next_attempt_at) == "succeeded"

    received = sorted(address for m in smtp_server.messages for address in m.recipients)
    assert received == sorted([run_scenario.colleague.email, run_scenario.owner.email, "someone@example.org"])
    assert {row.status for row in deliveries(run.id).values()} == {"submitted"}


def test_each_skip_reason_is_recorded_on_its_row(run_scenario, mail_to_smtp_server, smtp_server):
    leaver = run_scenario.colleague
    unsubscribed = "gone@example.org"
    run_scenario.owner_membership.grants = []
    db.session.commit()
    schedule = run_scenario.make_schedule(recipients=("owner", "colleague", "outside@example.org", unsubscribed))
    db.session.add(ScheduleUnsubscribe(schedule_id=schedule.id, address_key=unsubscribed))
    db.session.execute(delete(Membership).where(Membership.person_id == leaver.id))
    db.session.commit()
    run = run_scenario.admit(schedule)

    assert process_run(run.id) == "succeeded"

    reasons = {key: (row.status, row.skip_reason) for key, row in deliveries(run.id).items()}
    assert reasons == {
        f"person:{run_scenario.owner.id}": ("submitted", None),
        f"person:{leaver.id}": ("skipped", "recipient_removed"),
        "outside@example.org": ("skipped", "recipient_not_allowed"),
        unsubscribed: ("skipped", "recipient_unsubscribed"),
    }
    assert [m.recipients[0] for m in smtp_server.messages] == [run_scenario.owner.email]


def test_owner_losing_the_dataset_grant_fails_the_run_and_pauses_the_schedule(
    run_scenario, mail_to_smtp_server, smtp_server
):
    schedule = run_scenario.make_schedule(recipients=("colleague",))
    run_scenario.owner_membership.dataset_grants = ["teams"]
    db.session.commit()
    run = run_scenario.admit(schedule)

    assert process_run(run.id) == "access_lost"

    settled = reloaded(ScheduleRun, run.id)
    assert (settled.status, settled.failure_code, settled.attempt_count) == ("failed", "access_lost", 1)
    paused = reloaded(Schedule, schedule.id)
    assert (paused.status, paused.pause_reason) == ("paused", "owner_access_lost")
    assert settled.export_id is None and smtp_server.messages == []


def test_owner_no_longer_a_member_pauses_the_schedule(run_scenario, mail_to_smtp_server, smtp_server):
    schedule = run_scenario.make_schedule(recipients=("colleague",))
    db.session.execute(delete(Membership).where(Membership.person_id == run_scenario.owner.id))
    db.session.commit()
    run = run_scenario.admit(schedule)

    assert process_run(run.id) == "access_lost"

    assert reloaded(Schedule, schedule.id).pause_reason == "owner_access_lost"


def test_third_failed_run_in_a_row_pauses_the_schedule(run_scenario, mail_to_smtp_server, smtp_server):
    schedule = run_scenario.make_schedule(recipients=("colleague",))
    smtp_server.refuse(3 * MAIL_ATTEMPTS)
    for hour in range(3):
        run = run_scenario.admit(schedule) if hour == 0 else _admit_at(schedule, hour)
        later = utcnow()
        for _ in range(MAIL_ATTEMPTS):
            later += timedelta(hours=1)
            process_run(run.id, now=later)

    paused = reloaded(Schedule, schedule.id)
    assert (paused.status, paused.pause_reason, paused.failure_streak) == ("paused", "failure_streak", 3)


def _admit_at(schedule, hours_ago):
    return admit_run(
        schedule_id=schedule.id,
        workspace_id=schedule.workspace_id,
        occurrence_at=utcnow() - timedelta(hours=hours_ago, minutes=30),
        trigger=RunTrigger.MANUAL,
    )


def test_message_carries_the_template_the_custom_message_and_the_occurrence_in_the_schedule_zone(
    run_scenario, mail_to_smtp_server, smtp_server
):
    template = CommunicationTemplate(
        workspace_id=run_scenario.workspace.id, name="Weekly", created_by_id=run_scenario.owner.id
    )
    template.versions.append(
        CommunicationTemplateVersion(
            number=1,
            status="published",
            published_at=utcnow(),
            created_by_id=run_scenario.owner.id,
            subject="Your hours {{ 7*7 }} <script>",
            body='Dear reader,\n=HYPERLINK("http://x")',
        )
    )
    db.session.add(template)
    db.session.commit()
    schedule = run_scenario.make_schedule(
        recipients=("colleague",),
        template_version_id=template.versions[0].id,
        custom_message="Ask Zoë if a figure looks wrong.",
    )
    run = admit_run(
        schedule_id=schedule.id,
        workspace_id=schedule.workspace_id,
        occurrence_at=datetime(2026, 7, 1, 5, 0, tzinfo=UTC),
        trigger=RunTrigger.MANUAL,
    )

    process_run(run.id)

    [arrived] = smtp_server.messages
    assert arrived.message["Subject"] == "Your hours {{ 7*7 }} <script>"
    text = arrived.part("text/plain")
    assert text.index("Dear reader,") < text.index('=HYPERLINK("http://x")') < text.index("Ask Zoë")
    assert "Wed 1 Jul 2026, 07:00 CEST (UTC+02:00)" in text
    assert "&lt;script&gt;" in arrived.part("text/html") and "<script>" not in arrived.part("text/html")


def test_an_address_our_own_check_refuses_is_recorded_as_ours_not_the_mail_servers(
    run_scenario, mail_to_smtp_server, smtp_server
):
    # Saved before the address rule refused lookalike domains: the run must still say who refused it.
    schedule = run_scenario.make_schedule(recipients=("colleague", "h2-f@examрle.com"))
    run = run_scenario.admit(schedule)

    process_run(run.id)

    refused = deliveries(run.id)["h2-f@examрle.com"]
    assert refused.status == "failed"
    assert refused.last_error.startswith("Not sent: this product's address check refused it.")
    assert "mixes writing systems" in refused.last_error and "mail server" not in refused.last_error
    assert [m.recipients[0] for m in smtp_server.messages] == [run_scenario.colleague.email]
