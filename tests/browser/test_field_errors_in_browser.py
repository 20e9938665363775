"""Every refused field is tied to its message in Chromium: the field is marked invalid and its
`aria-describedby` names the message, which is an alert, so a screen reader reads the message
when the field has focus and announces it when the page shows it."""

from __future__ import annotations

import re

import pytest

from tests import factories
from tests.fixtures.browser import sign_in


def described_error(field) -> str:
    """The text of the alert the field's `aria-describedby` names; fails unless the field is marked invalid."""
    assert field.get_attribute("aria-invalid") == "true"
    message_id = field.get_attribute("aria-describedby")
    assert message_id, "the field names no message"
    message = field.page.locator(f"[id='{message_id}']")
    assert message.count() == 1, f"{message_id} is on {message.count()} elements"
    assert message.get_attribute("role") == "alert"
    return message.text_content().strip()


@pytest.mark.browser
def test_sign_in_ties_a_missing_email_to_the_email_field(world, live_server, browser_page):
    page = browser_page
    page.goto(f"{live_server}/login")
    page.get_by_label("Password").fill(factories.PASSWORD)
    page.get_by_role("button", name="Sign in").click()

    assert described_error(page.get_by_label("Email")) == "This field is required."


@pytest.mark.browser
def test_sign_in_ties_a_wrong_password_to_the_password_field(world, live_server, browser_page):
    page = browser_page
    page.goto(f"{live_server}/login")
    page.get_by_label("Email").fill(world.member.email)
    page.get_by_label("Password").fill("not the password")
    page.get_by_role("button", name="Sign in").click()

    assert described_error(page.get_by_label("Password")) == "That email and password do not match."
    assert page.get_by_label("Email").input_value() == world.member.email


@pytest.mark.browser
def test_change_password_ties_each_refusal_to_its_field(world, live_server, browser_page):
    page = browser_page
    sign_in(page, live_server, world.member.email)
    page.goto(f"{live_server}/account/password")
    page.get_by_label("Current password").fill("not the password")
    page.get_by_label("New password", exact=True).fill("a brand new password")
    page.get_by_label("New password again").fill("a brand new password")
    page.get_by_role("button", name="Change password").click()

    assert described_error(page.get_by_label("Current password")) == "Your current password is not right."


@pytest.mark.browser
def test_change_password_ties_a_missing_value_to_its_field(world, live_server, browser_page):
    page = browser_page
    sign_in(page, live_server, world.member.email)
    page.goto(f"{live_server}/account/password")
    page.get_by_label("Current password").fill(factories.PASSWORD)
    page.get_by_role("button", name="Change password").click()

    assert described_error(page.get_by_label("New password", exact=True)) == "Enter a new password."
    assert described_error(page.get_by_label("New password again")) == "Enter the new password a second time."


@pytest.mark.browser
def test_the_schedule_forms_frequency_names_its_own_message(world, live_server, browser_page):
    factories.make_query(world.workspace, world.member, name="Hours")
    page = browser_page
    sign_in(page, live_server, world.member.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/schedules/new")
    # A frequency no choice offers, as a hand-made post would send: WTForms refuses it as too long.
    page.get_by_label("How often").evaluate(
        "select => { select.options[0].value = 'x'.repeat(301); select.value = select.options[0].value; }"
    )
    page.get_by_role("button", name="Save schedule").click()
    page.wait_for_url(re.compile(r"/schedules/new$"))

    assert described_error(page.get_by_label("How often")) == "This is too long."


@pytest.mark.browser
def test_a_staff_action_without_a_reason_ties_the_refusal_to_the_reason_field(world, live_server, browser_page):
    """The form leaves the judging to the server (no browser bubble): the page comes back with the
    refusal beside the reason field, which has focus."""
    staff = factories.make_person(name="Sam Okafor", is_staff=True, staff_permissions=["staff.view", "staff.execute"])
    page = browser_page
    sign_in(page, live_server, staff.email, lands_on=r"/staff/$")
    page.goto(f"{live_server}/staff/workspaces/{world.workspace.id}")

    page.get_by_role("button", name="Suspend export").click()

    page.locator("#error-reason-suspend").wait_for()
    refusal = described_error(page.locator("#reason-suspend"))
    assert refusal == "Give a reason: it is kept in the audit log with the action."
    assert page.evaluate("document.activeElement.id") == "reason-suspend"
    assert page.locator(".flash").count() == 0
