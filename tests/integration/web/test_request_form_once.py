"""A file request form is sent once: sent again with the same choices (a double click, a repeated POST,
the form the browser restores on Back) it finds the first file; with a choice changed, or from a
freshly loaded form, it makes another."""

from __future__ import annotations

import re
import threading

from sqlalchemy import func, select

from app.extensions import db
from app.models import ExportFile
from tests import factories

_TOKEN = re.compile(r'name="request_token" value="([^"]+)"')


def _files_count() -> int:
    db.session.expire_all()
    return db.session.scalar(select(func.count()).select_from(ExportFile))


def _form_token(client, world, query) -> str:
    page = client.get(f"/w/{world.workspace.id}/queries/{query.id}").get_data(as_text=True)
    return _TOKEN.search(page).group(1)


def _request_file(client, world, query, **form):
    return client.post(f"/w/{world.workspace.id}/queries/{query.id}/files", data={"format": "csv", **form})


def test_twelve_posts_of_one_form_make_one_file_and_all_redirect_to_it(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    auth.login(world.member.email)
    token = _form_token(client, world, query)
    answers = [_request_file(client, world, query, request_token=token) for _ in range(12)]
    only = db.session.execute(select(ExportFile)).scalar_one()
    assert {answer.status_code for answer in answers} == {302}
    assert {answer.headers["Location"] for answer in answers} == {f"/w/{world.workspace.id}/files/{only.id}"}


def test_a_form_sent_again_says_the_file_was_already_asked_for_and_offers_another(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    auth.login(world.member.email)
    token = _form_token(client, world, query)
    _request_file(client, world, query, request_token=token, heading="labels")
    page = _request_file(client, world, query, request_token=token, heading="labels")
    assert page.status_code == 302
    shown = client.get(page.headers["Location"]).get_data(as_text=True)
    assert "This form was already sent with these choices, so no second file was made" in shown
    assert f'href="/w/{world.workspace.id}/queries/{query.id}#request-title">Request another file</a>' in shown


def test_the_same_form_sent_with_a_choice_changed_makes_a_second_file_once(client, auth, world):
    """Back to the form, Excel instead of CSV: another file, and that changed form sent twice makes it once."""
    query = factories.make_query(world.workspace, world.member)
    auth.login(world.member.email)
    token = _form_token(client, world, query)
    first = _request_file(client, world, query, request_token=token)
    changed = [_request_file(client, world, query, request_token=token, format="xlsx") for _ in range(2)]
    formats = db.session.execute(select(ExportFile.format).order_by(ExportFile.id)).scalars().all()
    assert formats == ["csv", "xlsx"]
    assert first.headers["Location"] != changed[0].headers["Location"] == changed[1].headers["Location"]


def test_posts_of_one_form_at_the_same_moment_make_one_file(app, world):
    """Parallel clients pass the lookup together; the unique index lets one in and the rest find its file."""
    query = factories.make_query(world.workspace, world.member)
    clients = [app.test_client() for _ in range(6)]
    # One sign-in shared by every client: signing in again would end the earlier sessions.
    clients[0].post("/login", data={"email": world.member.email, "password": "password"})
    session = clients[0].get_cookie("session")
    for each in clients[1:]:
        each.set_cookie(session.key, session.value, domain=session.domain)
    token = _form_token(clients[0], world, query)
    start = threading.Barrier(len(clients))
    answers: list = [None] * len(clients)

    def send(index: int) -> None:
        start.wait()
        answers[index] = _request_file(clients[index], world, query, request_token=token)

    threads = [threading.Thread(target=send, args=(index,)) for index in range(len(clients))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    only = db.session.execute(select(ExportFile)).scalar_one()
    assert {answer.status_code for answer in answers} == {302}
    assert {answer.headers["Location"] for answer in answers} == {f"/w/{world.workspace.id}/files/{only.id}"}


def test_two_forms_make_two_files(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    auth.login(world.member.email)
    first, second = _form_token(client, world, query), _form_token(client, world, query)
    assert first != second
    _request_file(client, world, query, request_token=first)
    _request_file(client, world, query, request_token=second)
    assert _files_count() == 2


def test_a_form_without_a_token_still_makes_a_file_each_time(client, auth, world):
    """Pages rendered before tokens existed carry none; they keep working as before."""
    query = factories.make_query(world.workspace, world.member)
    auth.login(world.member.email)
    assert _request_file(client, world, query).status_code == 302
    assert _request_file(client, world, query).status_code == 302
    assert _files_count() == 2


def test_one_persons_token_does_not_answer_with_another_persons_file(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    token = "t" * 32
    auth.login(world.member.email)
    _request_file(client, world, query, request_token=token)
    auth.logout()
    auth.login(world.admin.email)
    _request_file(client, world, query, request_token=token)
    requesters = db.session.execute(select(ExportFile.requester_id)).scalars().all()
    assert sorted(requesters) == sorted([world.member.id, world.admin.id])


def test_a_damaged_token_is_refused_with_a_message_and_makes_no_file(client, auth, world):
    query = factories.make_query(world.workspace, world.member)
    auth.login(world.member.email)
    for damaged in ("short", "x" * 65, "bad token with spaces!!", "nul\x00" * 8, "é" * 30):
        page = _request_file(client, world, query, request_token=damaged)
        assert page.status_code == 400
        assert "The form was damaged on its way here, so no file was requested." in page.get_data(as_text=True)
    assert _files_count() == 0
