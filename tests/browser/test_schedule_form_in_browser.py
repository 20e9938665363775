"""The schedule form in Chromium under the Content-Security-Policy: the browser's own time zone
reaches the live preview, the preview follows the timetable as it is typed, and a saved schedule's
"Run now" shows its run on the page, which polls while the run is queued. The form shows only the
fields of the chosen frequency and the formats of the chosen source, finds people by a search,
marks every wrong field at once, sets each send condition, the preview saying what it means (a late
answer never covers a newer one), and runs as each recipient only for people, with destinations
that get the owner's file."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from app.domain.schedules.schedule_rules import RUN_AS_RECIPIENTS_DESTINATIONS
from app.domain.schedules.send_conditions import MEANINGS
from app.extensions import db
from app.models.schedule import Schedule, ScheduleDestination, ScheduleRun
from tests import factories
from tests.fixtures.browser import accessibility_violations, fresh, htmx_swap, sign_in

REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
  window.reportCspViolation(`${event.violatedDirective} blocked ${event.blockedURI || "inline"}`);
});
"""


@pytest.mark.browser
def test_the_schedule_form_previews_in_the_viewers_zone_and_run_now_shows_the_run(
    world, live_server, browser_page, browser_console_errors
):
    factories.make_query(world.workspace, world.member, name="Hours")
    # Without the browser's zone the preview would fall back to the workspace's: make them differ.
    world.workspace.time_zone = "Pacific/Chatham"
    db.session.commit()
    page = browser_page
    violations: list[str] = []
    page.context.expose_binding("reportCspViolation", lambda _source, text: violations.append(text))
    page.add_init_script(REPORT_VIOLATIONS)
    browser_zone = page.evaluate("Intl.DateTimeFormat().resolvedOptions().timeZone")
    assert browser_zone != "Pacific/Chatham"
    sign_in(page, live_server, world.member.email)

    page.get_by_role("link", name="Schedules").click()
    page.get_by_role("link", name="New schedule").first.click()
    # viewer_zone.js fills the hidden field and asks for the preview again in the browser's zone.
    page.locator("#upcoming", has_text=f"In yours ({browser_zone})").wait_for()
    page.get_by_label("Name", exact=True).fill("Morning hours")
    page.get_by_label(world.member.name).check()
    page.get_by_label("Time zone").fill("America/New_York")
    htmx_swap(page, lambda: page.get_by_label("How often").select_option("hourly"))
    htmx_swap(page, lambda: page.get_by_label("Minute past the hour").fill("15"))
    page.locator("#upcoming", has_text="Every hour at 15 minutes past the hour (America/New_York)").wait_for()
    assert page.locator("#upcoming tbody tr").count() == 5
    page.get_by_role("button", name="Save schedule").click()
    page.wait_for_url(re.compile(r"/schedules/\d+$"))
    schedule = fresh(select(Schedule)).scalar_one()
    assert schedule.timetable == {"kind": "hourly", "minute": 15, "zone": "America/New_York"}
    assert [r.person_id for r in schedule.recipients] == [world.member.id]

    with page.expect_request(re.compile(rf"/schedules/{schedule.id}/runs$")):
        page.get_by_role("button", name="Run now").click()
    run = fresh(select(ScheduleRun)).scalar_one()
    assert run.trigger == "manual"
    assert page.locator(f"#run-{run.id} .status").text_content() == "queued"
    assert violations == []
    assert browser_console_errors == []


def _open_new_form(page, live_server, world) -> None:
    sign_in(page, live_server, world.member.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/schedules/new")


@pytest.mark.browser
def test_the_form_shows_only_the_fields_of_the_chosen_frequency(world, live_server, browser_page):
    factories.make_query(world.workspace, world.member, name="Hours")
    page = browser_page
    _open_new_form(page, live_server, world)
    fields = {
        "Minute past the hour": page.locator("input[name=minute]"),
        "Time": page.locator("input[name=time]"),
        "Monday": page.get_by_label("Monday"),
        "Day of the month": page.locator("input[name=day]"),
        "Cron expression": page.locator("input[name=expression]"),
    }
    shown_for = {
        "hourly": {"Minute past the hour"},
        "daily": {"Time"},
        "weekly": {"Time", "Monday"},
        "monthly": {"Time", "Day of the month"},
        "cron": {"Cron expression"},
    }
    for frequency, expected in shown_for.items():
        page.get_by_label("How often").select_option(frequency)
        assert {name for name, field in fields.items() if field.is_visible()} == expected, frequency
    assert page.get_by_label("Time zone").is_visible()


@pytest.mark.browser
def test_the_form_offers_only_the_formats_the_chosen_source_allows(world, live_server, browser_page):
    query = factories.make_query(world.workspace, world.member, name="Hours")
    factories.make_report(query, world.member, name="Hours table")
    factories.make_report(query, world.member, name="Hours summary", kind="summary")
    page = browser_page
    _open_new_form(page, live_server, world)
    formats = {
        "CSV": page.get_by_label("CSV"),
        "Excel": page.get_by_label("Excel (XLSX)"),
        "PDF": page.get_by_label("PDF"),
    }

    def offered() -> set[str]:
        return {name for name, radio in formats.items() if radio.is_visible()}

    page.get_by_label("Saved query or report").select_option(label="Query: Hours")
    assert offered() == {"CSV", "Excel"}
    page.get_by_label("Saved query or report").select_option(label="Report: Hours table")
    assert offered() == {"PDF", "Excel"}
    assert formats["PDF"].is_checked()
    page.get_by_label("Saved query or report").select_option(label="Report: Hours summary")
    assert offered() == {"PDF"}
    assert formats["PDF"].is_checked()


@pytest.mark.browser
def test_people_are_found_by_search_and_ticked_with_the_keyboard_nobody_at_first(world, live_server, browser_page):
    factories.make_query(world.workspace, world.member, name="Hours")
    colleague = factories.make_member(world.workspace, person=factories.make_person(name="Grace Hopper")).person
    page = browser_page
    _open_new_form(page, live_server, world)
    people = page.locator("input[name=people]")
    assert people.count() >= 4
    assert page.locator("input[name=people]:checked").count() == 0

    page.get_by_label("Find people").fill("hopper")
    visible = [box.get_attribute("value") for box in people.all() if box.is_visible()]
    assert visible == [str(colleague.id)]
    page.get_by_label("Find people").press("Tab")
    page.keyboard.press("Space")
    assert page.get_by_label("Grace Hopper").is_checked()
    page.locator("[data-people-chosen]", has_text="1 chosen: Grace Hopper.").wait_for()
    page.get_by_label("Find people").fill("")
    assert all(box.is_visible() for box in people.all())

    page.get_by_label("Name", exact=True).fill("For Grace")
    page.get_by_role("button", name="Save schedule").click()
    page.wait_for_url(re.compile(r"/schedules/\d+$"))
    schedule = fresh(select(Schedule)).scalar_one()
    assert [r.person_id for r in schedule.recipients] == [colleague.id]


@pytest.mark.browser
def test_a_search_that_finds_nobody_is_announced(world, live_server, browser_page):
    factories.make_query(world.workspace, world.member, name="Hours")
    page = browser_page
    _open_new_form(page, live_server, world)
    # A status region that is in the page before its sentence appears is one a screen reader announces.
    page.locator("[data-people-none]").evaluate("region => { region.dataset.keptMark = 'kept'; }")

    page.get_by_label("Find people").fill("nobody-by-this-name")

    none = page.locator("[data-people-none]")
    none.filter(has_text="Nobody matches the search.").wait_for()
    assert none.evaluate("region => [region.getAttribute('role'), region.dataset.keptMark]") == ["status", "kept"]


@pytest.mark.browser
def test_a_refused_form_marks_every_wrong_field_with_its_own_message(world, live_server, browser_page):
    factories.make_query(world.workspace, world.member, name="Hours")
    page = browser_page
    _open_new_form(page, live_server, world)
    page.locator("input[name=time]").fill("25:99")
    page.get_by_label("Time zone").fill("Mars/Olympus")
    page.get_by_role("button", name="Save schedule").click()
    page.get_by_text("4 fields need a change").wait_for()
    for selector, message in (
        ("input[name=name]", "Give the schedule a name."),
        ("input[name=time]", "on the 24-hour clock"),
        ("input[name=zone]", "is not a time zone"),
        ("input[name=people] >> nth=0", "Choose at least one recipient."),
    ):
        field = page.locator(selector)
        assert field.get_attribute("aria-invalid") == "true", selector
        described = page.locator(f"#{field.get_attribute('aria-describedby')}")
        assert message in described.text_content(), selector
    # What was typed stays, and the form still shows only the daily fields.
    assert page.locator("input[name=zone]").input_value() == "Mars/Olympus"
    assert not page.locator("input[name=minute]").is_visible()
    assert accessibility_violations(page) == []


def _field_message(page, selector: str) -> str:
    field = page.locator(selector)
    assert field.get_attribute("aria-invalid") == "true", selector
    return page.locator(f"#{field.get_attribute('aria-describedby')}").text_content() or ""


@pytest.mark.browser
def test_every_address_that_is_not_one_is_named(world, live_server, browser_page):
    factories.make_query(world.workspace, world.member, name="Hours")
    world.member_membership.grants = ["schedules.external_recipients"]
    db.session.commit()
    page = browser_page
    _open_new_form(page, live_server, world)
    page.locator("textarea[name=addresses]").fill("ann@example.org\nbob.example.org\ncarol@\ndan@example.org")
    page.get_by_role("button", name="Save schedule").click()

    message = _field_message(page, "textarea[name=addresses]")
    assert "“bob.example.org” is not an email address." in message
    assert "“carol@” is not an email address." in message


@pytest.mark.browser
def test_addresses_separated_by_commas_are_told_the_field_takes_one_a_line(world, live_server, browser_page):
    factories.make_query(world.workspace, world.member, name="Hours")
    world.member_membership.grants = ["schedules.external_recipients"]
    db.session.commit()
    page = browser_page
    _open_new_form(page, live_server, world)
    page.locator("textarea[name=addresses]").fill(", ".join(f"person{n}@example.org" for n in range(60)))
    page.get_by_role("button", name="Save schedule").click()

    message = _field_message(page, "textarea[name=addresses]")
    assert "This field takes one address per line" in message
    assert "is not an email address" not in message


@pytest.mark.browser
def test_a_cron_running_every_minute_is_refused_in_the_preview_saying_so(world, live_server, browser_page):
    factories.make_query(world.workspace, world.member, name="Hours")
    page = browser_page
    _open_new_form(page, live_server, world)
    htmx_swap(page, lambda: page.get_by_label("How often").select_option("cron"))
    page.locator("input[name=expression]").fill("* * * * *")
    page.get_by_role("button", name="Save schedule").click()

    assert "runs every minute: more often than hourly" in _field_message(page, "input[name=expression]")
    upcoming = page.locator("#upcoming").text_content() or ""
    assert "runs every minute: more often than hourly" in upcoming
    assert "zone ()" not in upcoming
    assert "never runs again" not in upcoming


@pytest.mark.browser
def test_each_send_condition_is_chosen_on_the_form_and_the_preview_says_what_it_means(world, live_server, browser_page):
    factories.make_query(world.workspace, world.member, name="Hours")
    page = browser_page
    _open_new_form(page, live_server, world)
    choice = page.locator("input[name=send_condition]")
    assert choice.and_(page.locator("[value=always]")).is_checked()
    assert page.locator("#upcoming [data-send-condition]").text_content() == MEANINGS["always"]

    for condition in ("has_rows", "no_rows", "always", "changed"):
        choice.and_(page.locator(f"[value={condition}]")).check()
        # Waits for this choice's preview: htmx queues a newer choice behind the request in flight.
        expect(page.locator("#upcoming [data-send-condition]")).to_have_text(MEANINGS[condition])
    assert accessibility_violations(page) == []

    page.get_by_label("Name", exact=True).fill("Overtime alert")
    page.get_by_label(world.member.name).check()
    page.get_by_role("button", name="Save schedule").click()
    page.wait_for_url(re.compile(r"/schedules/\d+$"))
    schedule = fresh(select(Schedule)).scalar_one()
    assert schedule.send_condition == "changed"
    assert MEANINGS["changed"] in page.locator("dl").first.text_content()

    page.goto(f"{live_server}/w/{world.workspace.id}/schedules/{schedule.id}/edit")
    assert choice.and_(page.locator("[value=changed]")).is_checked()
    for condition in ("no_rows", "has_rows", "always"):
        choice.and_(page.locator(f"[value={condition}]")).check()
        page.get_by_role("button", name="Save schedule").click()
        page.wait_for_url(re.compile(r"/schedules/\d+$"))
        assert fresh(select(Schedule.send_condition)).scalar_one() == condition
        page.goto(f"{live_server}/w/{world.workspace.id}/schedules/{schedule.id}/edit")


@pytest.mark.browser
def test_a_preview_answered_late_is_followed_by_the_newest_choices_and_nothing_is_aborted(
    world, live_server, browser_page, browser_console_errors
):
    factories.make_query(world.workspace, world.member, name="Hours")
    page = browser_page
    _open_new_form(page, live_server, world)
    choice = page.locator("input[name=send_condition]")
    expect(page.locator("#upcoming [data-send-condition]")).to_have_text(MEANINGS["always"])
    held: list = []
    page.route(re.compile(r"/schedules/upcoming$"), lambda route: held.append(route) if not held else route.continue_())

    choice.and_(page.locator("[value=has_rows]")).check()
    for _ in range(250):
        if held:
            break
        page.wait_for_timeout(20)
    assert len(held) == 1
    choice.and_(page.locator("[value=no_rows]")).check()
    held[0].continue_()

    expect(page.locator("#upcoming [data-send-condition]")).to_have_text(MEANINGS["no_rows"])
    assert browser_console_errors == []


@pytest.mark.browser
def test_run_as_each_recipient_is_chosen_for_people_and_refused_with_an_outside_address(
    world, live_server, browser_page
):
    factories.make_query(world.workspace, world.member, name="Hours")
    world.member_membership.grants = ["schedules.external_recipients"]
    db.session.commit()
    page = browser_page
    _open_new_form(page, live_server, world)
    page.get_by_label("Name", exact=True).fill("Each ward its own rows")
    page.get_by_label(world.member.name).check()
    page.locator("input[name=run_as_recipients]").check()
    page.locator("textarea[name=addresses]").fill("payroll@contoso.example")
    page.get_by_role("button", name="Save schedule").click()

    message = _field_message(page, "input[name=run_as_recipients]")
    assert "an outside address has none" in message and "payroll@contoso.example" in message
    assert accessibility_violations(page) == []

    page.locator("textarea[name=addresses]").fill("")
    page.get_by_role("button", name="Save schedule").click()
    page.wait_for_url(re.compile(r"/schedules/\d+$"))
    assert fresh(select(Schedule.run_as_recipients)).scalar_one() is True
    assert "that person's own access" in page.locator("dl").first.text_content()


@pytest.mark.browser
def test_run_as_each_recipient_with_a_destination_is_saved_saying_the_destination_gets_the_owner_s_file(
    world, live_server, browser_page, browser_console_errors, destinations_root
):
    query = factories.make_query(world.workspace, world.admin, name="Hours")
    folder = factories.make_destination(world.workspace, name="Ward folder")
    page = browser_page
    sign_in(page, live_server, world.admin.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/schedules/new")
    page.get_by_label("Name", exact=True).fill("Each ward its own rows, the folder the owner's")
    page.get_by_label("Saved query or report").select_option(f"query:{query.id}")
    page.get_by_label(world.scoped.name).check()
    page.locator("input[name=run_as_recipients]").check()
    page.get_by_label("Ward folder").check()
    expect(page.locator("#destinations-hint")).to_contain_text(RUN_AS_RECIPIENTS_DESTINATIONS)
    page.get_by_role("button", name="Save schedule").click()

    page.wait_for_url(re.compile(r"/schedules/\d+$"))
    assert fresh(select(Schedule.run_as_recipients)).scalar_one() is True
    assert fresh(select(ScheduleDestination.destination_id)).scalars().all() == [folder.id]
    expect(page.locator("dl").first).to_contain_text(RUN_AS_RECIPIENTS_DESTINATIONS)
    assert accessibility_violations(page) == []
    assert browser_console_errors == []
