"""Whatever address the schedule form accepts, the mailer can send to (one rule for both)."""

from __future__ import annotations

from datetime import UTC, datetime
from email.headerregistry import Address

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.communications import OutgoingMessage, Recipient, build_message, message_id_for
from app.domain.errors import ValidationError
from app.domain.people.access import current_context
from app.seed_data import HOSTILE_VALUES
from app.services.schedules.schedule_form import checked_recipients

SENDER = Address("Rhythm Exports", "exports", "rhythm.test")
_LOCAL = st.from_regex(r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~\u00e9\u0440-]{1,16}", fullmatch=True)
# Latin, Latin-1 letters, Cyrillic (alone and mixed with Latin), kana and Han in domain labels.
_LABEL = st.from_regex(r"[a-z0-9\u00e0-\u00ff\u0430-\u044f\u3040-\u309f\u4e00-\u4e20-]{1,12}", fullmatch=True)
_ADDRESS = st.one_of(
    st.emails(),
    st.builds(
        lambda local, labels: f"{local}@{'.'.join(labels)}.com", _LOCAL, st.lists(_LABEL, min_size=1, max_size=2)
    ),
    st.sampled_from(HOSTILE_VALUES).map(lambda value: f"{value}@example.com"),
    st.sampled_from(["h2-f@examрle.com", "ada@bücher.de", "ada@例え.jp", "a@b", "ada@ex ample.com"]),
)


def test_whatever_the_schedule_form_accepts_the_mailer_can_send(app_context, world):
    access = current_context(world.workspace.id, world.admin.id)

    @settings(
        max_examples=300,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(_ADDRESS)
    def form_then_mailer(address):
        try:
            [recipient] = checked_recipients(access, [], address)
        except ValidationError:
            return
        if recipient.email is None:  # a member's address counts as the member
            return
        message = OutgoingMessage(
            to=Recipient(recipient.email),
            subject="Weekly hours",
            message_id=message_id_for("schedule-delivery", 1, datetime(2026, 1, 1, tzinfo=UTC), "rhythm.test"),
            heading="Your file is ready",
        )
        build_message(message, SENDER)

    form_then_mailer()
