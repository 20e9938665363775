"""The header in a real browser: switching workspace with the keyboard alone, and a current section that shows."""

from __future__ import annotations

import re

import pytest

from app.extensions import db
from tests import factories
from tests.fixtures.browser import sign_in

pytestmark = pytest.mark.browser


def test_a_person_switches_workspace_with_the_keyboard_alone(live_server, browser_page, world):
    """Tab to the switcher, open it with Enter, Tab to the other workspace, Enter: its overview, its name."""
    factories.make_member(world.other_workspace, person=world.member)
    page = browser_page
    sign_in(page, live_server, world.member.email, lands_on=r"/$")
    page.goto(f"{live_server}/w/{world.workspace.id}/queries/")

    summary = page.locator(".switcher summary")
    for _ in range(10):  # from the top of the page: skip link, brand, then the switcher
        page.keyboard.press("Tab")
        if summary.evaluate("element => element === document.activeElement"):
            break
    assert summary.evaluate("element => element === document.activeElement"), "Tab never reached the switcher"
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.textContent") == "Globex Clinics"
    page.keyboard.press("Enter")

    page.wait_for_url(re.compile(rf"/w/{world.other_workspace.id}/$"))
    assert page.locator(".switcher .workspace-name").text_content() == "Globex Clinics"


def test_escape_closes_the_switcher_and_returns_to_it(live_server, browser_page, world):
    factories.make_member(world.other_workspace, person=world.member)
    page = browser_page
    sign_in(page, live_server, world.member.email, lands_on=r"/$")
    page.goto(f"{live_server}/w/{world.workspace.id}/")
    page.locator(".switcher summary").focus()
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    assert page.get_by_role("link", name="Globex Clinics").is_visible()

    page.keyboard.press("Escape")

    assert not page.get_by_role("link", name="Globex Clinics").is_visible()
    assert page.locator(".switcher summary").evaluate("element => element === document.activeElement")


def test_the_current_section_is_marked_by_more_than_colour(live_server, browser_page, world):
    """The current entry is bold with a bar under it; the others are neither."""
    page = browser_page
    sign_in(page, live_server, world.member.email)
    page.goto(f"{live_server}/w/{world.workspace.id}/files/")

    def look(name: str) -> tuple[str, str]:
        link = page.get_by_role("navigation", name="Workspace").get_by_role("link", name=name, exact=True)
        return link.evaluate("a => [getComputedStyle(a).fontWeight, getComputedStyle(a).borderBottomColor]")

    current_weight, current_bar = look("Files")
    other_weight, other_bar = look("Queries")
    assert int(current_weight) >= 700 > int(other_weight)
    assert current_bar != "rgba(0, 0, 0, 0)" and other_bar == "rgba(0, 0, 0, 0)"


def test_keyboard_focus_is_visible_from_the_first_tab(live_server, browser_page, world):
    """The first Tab shows the skip link with a thick outline; following it moves to the page's content."""
    page = browser_page
    sign_in(page, live_server, world.member.email)

    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to the page")
    box = skip.bounding_box()
    outline = skip.evaluate("a => [getComputedStyle(a).outlineStyle, getComputedStyle(a).outlineWidth]")
    assert box is not None and box["y"] >= 0, "the focused skip link is off screen"
    assert outline == ["solid", "3px"]

    page.keyboard.press("Enter")
    assert page.evaluate("() => document.activeElement.id") == "content"


def test_every_section_fits_one_line_on_a_laptop(live_server, browser_page, world):
    """At 1280 px an administrator who is staff, with a switcher and a long name, sees every section on one line."""
    factories.make_member(world.other_workspace, role="admin", person=world.admin)
    world.admin.name = "Alexandra Montgomery-Fitzwilliam"
    world.admin.is_staff, world.admin.staff_permissions = True, ["staff.view"]
    db.session.commit()
    page = browser_page
    page.set_viewport_size({"width": 1280, "height": 800})
    sign_in(page, live_server, world.admin.email, lands_on=r"/$")
    page.goto(f"{live_server}/w/{world.workspace.id}/files/")

    links = page.get_by_role("navigation", name="Workspace").get_by_role("link")
    tops = links.evaluate_all("links => links.map(a => Math.round(a.getBoundingClientRect().top))")
    assert links.count() == 9
    assert len(set(tops)) == 1, f"the sections sit on {len(set(tops))} lines"
