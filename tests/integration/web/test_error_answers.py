"""One map from errors to answers (app/blueprints/errors.py), through real routes.

What a person may not see, and what they may not do, answer the plain 404 page every unknown
address answers. A refusal no route shows on its own page answers with its category's status and
its sentence: 400 for a validation error, 409 for a refused transition or a conflict; an htmx
request gets the sentence as a fragment. The log gets the error with the ids in the URL.

No route lets a validation error, a refused transition or a conflict through today (each shows it
on its own page), so those three are raised from the service a real route calls.
"""

from __future__ import annotations

import logging
import re

import pytest

from app.domain.errors import Conflict, TransitionRefused, ValidationError
from app.extensions import db
from app.models.schedule import Schedule
from app.services.schedules import schedules
from tests import factories
from tests.integration.schedules.forms import schedules_url

HTMX = {"HX-Request": "true"}
CHANGED_MEANWHILE = "This schedule changed meanwhile. Reload the page and try again."


def _main(page: str) -> str:
    """What the page says, inside <main>: the header around it carries per-request tokens."""
    found = re.search(r"<main\b.*?</main>", page, re.S)
    assert found is not None, page
    return found.group(0)


def _unknown_address_page(client, world) -> str:
    response = client.get(f"/w/{world.workspace.id}/no-such-page")
    assert response.status_code == 404
    return _main(response.get_data(as_text=True))


def test_another_persons_file_answers_the_page_of_an_address_that_names_nothing(client, auth, world):
    query = factories.make_query(world.workspace, world.admin, name="Payroll of the directors")
    export = factories.make_export(query, world.admin)
    auth.login(world.member.email)

    response = client.get(f"/w/{world.workspace.id}/files/{export.id}")

    assert response.status_code == 404
    assert _main(response.get_data(as_text=True)) == _unknown_address_page(client, world)
    assert "Payroll of the directors" not in response.get_data(as_text=True)


def test_an_action_the_person_may_not_take_answers_404_like_what_they_may_not_see(client, auth, world, caplog):
    """Taking ownership needs schedule authority: refused with AccessDenied, answered as not there."""
    schedule = factories.make_schedule(factories.make_query(world.workspace, world.member), world.member)
    auth.login(world.member.email)

    with caplog.at_level(logging.INFO, logger="app"):
        response = client.post(schedules_url(world, f"{schedule.id}/take-ownership"))

    assert response.status_code == 404
    page = response.get_data(as_text=True)
    assert _main(page) == _unknown_address_page(client, world)
    assert "schedule-management authority" not in page
    logged = [record.getMessage() for record in caplog.records if "AccessDenied" in record.getMessage()]
    assert len(logged) == 1
    assert "schedule-management authority" in logged[0] and f"'schedule_id': {schedule.id}" in logged[0]


@pytest.fixture
def own_schedule(world):
    return factories.make_schedule(factories.make_query(world.workspace, world.member), world.member)


def _refuse_deletion_with(monkeypatch, error: Exception) -> None:
    def refuse(access, schedule):
        raise error

    monkeypatch.setattr(schedules, "delete_schedule", refuse)


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (ValidationError("Give the schedule a name before deleting it.", "name"), 400),
        (TransitionRefused(CHANGED_MEANWHILE), 409),
        (Conflict("A run of this schedule is sending its messages now. Try again once it has finished."), 409),
    ],
    ids=["validation", "refused transition", "conflict"],
)
def test_a_refusal_answers_its_categorys_status_with_its_sentence(
    client, auth, world, own_schedule, monkeypatch, caplog, error, status
):
    _refuse_deletion_with(monkeypatch, error)
    auth.login(world.member.email)

    with caplog.at_level(logging.INFO, logger="app"):
        response = client.post(schedules_url(world, f"{own_schedule.id}/delete"))

    assert response.status_code == status
    page = response.get_data(as_text=True)
    assert str(error) in _main(page)
    assert "Traceback" not in page and type(error).__name__ not in page
    assert db.session.get(Schedule, own_schedule.id) is not None
    logged = [record.getMessage() for record in caplog.records if type(error).__name__ in record.getMessage()]
    assert len(logged) == 1 and str(error) in logged[0] and f"'schedule_id': {own_schedule.id}" in logged[0]


def test_an_htmx_request_gets_the_sentence_beside_its_field_as_a_fragment(
    client, auth, world, own_schedule, monkeypatch
):
    _refuse_deletion_with(monkeypatch, ValidationError("Give the schedule a name before deleting it.", "name"))
    auth.login(world.member.email)

    response = client.post(schedules_url(world, f"{own_schedule.id}/delete"), headers=HTMX)

    assert response.status_code == 400
    fragment = response.get_data(as_text=True)
    assert "<html" not in fragment and "<main" not in fragment
    assert re.search(
        r'<p class="field-error" id="error-name" role="alert">Give the schedule a name before deleting it\.</p>',
        fragment,
    )


def test_an_htmx_request_gets_a_refused_transitions_sentence_as_a_fragment(
    client, auth, world, own_schedule, monkeypatch
):
    _refuse_deletion_with(monkeypatch, TransitionRefused(CHANGED_MEANWHILE))
    auth.login(world.member.email)

    response = client.post(schedules_url(world, f"{own_schedule.id}/delete"), headers=HTMX)

    assert response.status_code == 409
    fragment = response.get_data(as_text=True)
    assert "<html" not in fragment
    assert f'<p class="error" role="alert">{CHANGED_MEANWHILE}</p>' in fragment


def test_an_htmx_request_for_what_is_not_visible_gets_the_same_404_page(client, auth, world):
    query = factories.make_query(world.workspace, world.admin)
    export = factories.make_export(query, world.admin)
    auth.login(world.member.email)

    response = client.get(f"/w/{world.workspace.id}/files/{export.id}/progress", headers=HTMX)

    assert response.status_code == 404
    assert _main(response.get_data(as_text=True)) == _unknown_address_page(client, world)
