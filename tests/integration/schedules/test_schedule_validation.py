"""Bad input on the schedule form: a clear message each, no 500, nothing half-saved."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models.schedule import MAX_RECIPIENTS, Schedule, ScheduleRecipient
from tests import factories
from tests.integration.schedules.forms import schedule_form, schedules_url


def _rows() -> tuple[int, int]:
    return (
        db.session.scalar(select(func.count()).select_from(Schedule)),
        db.session.scalar(select(func.count()).select_from(ScheduleRecipient)),
    )


@pytest.fixture
def setup(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    auth.login(world.member.email)
    return world, query


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"name": "  "}, "Give the schedule a name."),
        ({"name": "x" * 201}, "at most 200 characters"),
        ({"name": "a\x00b"}, "cannot be used"),
        ({"source": "query:999999"}, "Choose the saved query or report"),
        ({"source": "query:٣"}, "Choose the saved query or report"),
        ({"source": "report:9" * 30}, "Choose the saved query or report"),
        ({"format": "pdf"}, "this query can be sent as CSV or Excel (XLSX)"),
        ({"heading": "titles"}, "Choose the heading row"),
        ({"frequency": "fortnightly"}, "hourly, daily, weekly, monthly or cron"),
        ({"time": "25:00"}, "24-hour clock"),
        ({"frequency": "hourly", "minute": "60"}, "from 0 to 59"),
        ({"frequency": "hourly", "minute": "²"}, "whole number from 0 to 59"),
        ({"frequency": "weekly", "days": []}, "at least one day"),
        ({"frequency": "monthly", "day": "31"}, "choose the last day"),
        ({"frequency": "cron", "expression": "*/10 * * * *"}, "at most once an hour"),
        ({"frequency": "cron", "expression": "0 7 * *"}, "five fields"),
        ({"zone": "Europe/Londn"}, "is not a time zone"),
        ({"zone": "europe/london"}, "did you mean Europe/London?"),
        ({"people": ["2147483648"]}, "Choose recipients from the people of this workspace."),
        ({"addresses": "not-an-address"}, "is not an email address"),
        ({"addresses": "h2-f@examрle.com"}, "mixes writing systems in its domain"),
        ({"addresses": "山田@example.com"}, "the part before the @ must be in plain Latin letters"),
        ({"custom_message": "x" * 5001}, "at most 5,000 characters"),
        ({"template_version_id": "12"}, "published version"),
    ],
)
def test_a_bad_field_gets_its_message_and_nothing_is_saved(client, setup, overrides, message):
    world, query = setup
    response = client.post(
        schedules_url(world, "new"), data=schedule_form(query, **{"people": [str(world.member.id)], **overrides})
    )
    assert response.status_code == 400
    assert message in response.get_data(as_text=True)
    assert _rows() == (0, 0)


def test_no_recipient_is_refused(client, setup):
    world, query = setup
    response = client.post(schedules_url(world, "new"), data=schedule_form(query))
    assert response.status_code == 400 and "Choose at least one recipient." in response.get_data(as_text=True)


def test_a_duplicate_address_in_another_case_is_refused(client, setup):
    world, query = setup
    world.member_membership.grants = ["schedules.external_recipients"]
    db.session.commit()
    response = client.post(
        schedules_url(world, "new"), data=schedule_form(query, addresses="Ann@Example.org\nann@example.org")
    )
    assert response.status_code == 400
    assert "ann@example.org is a recipient twice" in response.get_data(as_text=True)
    assert _rows() == (0, 0)


def test_a_members_address_is_the_same_recipient_as_the_person_picked(client, setup):
    world, query = setup
    response = client.post(
        schedules_url(world, "new"),
        data=schedule_form(query, people=[str(world.admin.id)], addresses=world.admin.email.upper()),
    )
    assert response.status_code == 400
    assert "is a recipient twice" in response.get_data(as_text=True)


def test_an_external_address_needs_the_savers_grant(client, setup):
    """INV-06: without schedules.external_recipients, an address outside the workspace is refused."""
    world, query = setup
    response = client.post(
        schedules_url(world, "new"), data=schedule_form(query, addresses="someone@elsewhere.example")
    )
    assert response.status_code == 400
    assert "external-recipients permission" in response.get_data(as_text=True)
    assert _rows() == (0, 0)


def test_with_the_grant_an_external_address_is_kept(client, setup):
    world, query = setup
    world.member_membership.grants = ["schedules.external_recipients"]
    db.session.commit()
    response = client.post(
        schedules_url(world, "new"), data=schedule_form(query, addresses="Someone@Elsewhere.example")
    )
    assert response.status_code == 302
    recipient = db.session.scalar(select(ScheduleRecipient))
    assert (recipient.email, recipient.address_key, recipient.person_id) == (
        "Someone@Elsewhere.example",
        "someone@elsewhere.example",
        None,
    )


def test_fifty_recipients_are_accepted_and_the_fifty_first_is_refused(client, setup):
    world, query = setup
    world.member_membership.grants = ["schedules.external_recipients"]
    db.session.commit()
    addresses = [f"person{n}@elsewhere.example" for n in range(MAX_RECIPIENTS + 1)]
    refused = client.post(schedules_url(world, "new"), data=schedule_form(query, addresses="\n".join(addresses)))
    assert refused.status_code == 400
    assert "at most 50 recipients; person50@elsewhere.example would be number 51" in refused.get_data(as_text=True)
    assert _rows() == (0, 0)
    accepted = client.post(
        schedules_url(world, "new"), data=schedule_form(query, addresses="\n".join(addresses[:MAX_RECIPIENTS]))
    )
    assert accepted.status_code == 302
    assert _rows() == (1, MAX_RECIPIENTS)


def test_a_taken_name_is_refused(client, setup):
    world, query = setup
    factories.make_schedule(query, world.admin, name="Morning hours")
    response = client.post(
        schedules_url(world, "new"), data=schedule_form(query, name="MORNING HOURS", people=[str(world.member.id)])
    )
    assert response.status_code == 400
    assert "already has that name" in response.get_data(as_text=True)
    assert _rows() == (1, 1)


def test_a_query_the_person_cannot_read_is_refused(client, auth, world):
    ungranted = factories.make_member(world.workspace, dataset_grants=["people"]).person
    query = factories.make_query(world.workspace, world.admin)
    auth.login(ungranted.email)
    response = client.post(schedules_url(world, "new"), data=schedule_form(query, people=[str(ungranted.id)]))
    assert response.status_code == 400
    assert _rows() == (0, 0)


def test_a_refused_edit_changes_nothing(client, setup):
    world, query = setup
    schedule = factories.make_schedule(query, world.member, name="Kept")
    response = client.post(
        schedules_url(world, f"{schedule.id}/edit"),
        data=schedule_form(
            query, name="Changed", zone="Mars/Olympus", people=[str(world.admin.id)], version=str(schedule.version)
        ),
    )
    assert response.status_code == 400
    db.session.expire_all()
    kept = db.session.get(Schedule, schedule.id)
    assert kept.name == "Kept" and [r.person_id for r in kept.recipients] == [world.member.id]


def test_an_edit_from_a_stale_page_is_a_conflict(client, setup):
    world, query = setup
    schedule = factories.make_schedule(query, world.member, name="Kept", version=3)
    response = client.post(
        schedules_url(world, f"{schedule.id}/edit"),
        data=schedule_form(query, name="Changed", people=[str(world.member.id)], version="2"),
    )
    assert response.status_code == 409
    assert "Someone else changed this schedule after you opened it" in response.get_data(as_text=True)
    db.session.expire_all()
    assert db.session.get(Schedule, schedule.id).name == "Kept"


def test_a_damaged_version_field_is_still_bad_input(client, setup):
    world, query = setup
    schedule = factories.make_schedule(query, world.member, name="Kept")
    response = client.post(
        schedules_url(world, f"{schedule.id}/edit"),
        data=schedule_form(query, name="Changed", people=[str(world.member.id)], version="two"),
    )
    assert response.status_code == 400
    assert "The form was damaged" in response.get_data(as_text=True)
