"""Message template pages (issue 9, item 5): draft → published, versions kept, managed by schedule authority."""

from __future__ import annotations

import pytest
from markupsafe import escape
from sqlalchemy import func, select

from app.domain.errors import TransitionRefused
from app.domain.schedules import communication_template
from app.extensions import db
from app.models import AuditEvent, CommunicationTemplate, CommunicationTemplateVersion
from tests import factories


def _count(model) -> int:
    db.session.rollback()
    return db.session.scalar(select(func.count()).select_from(model))


def _versions(template_id: int) -> list[tuple[int, str, str, str]]:
    db.session.rollback()
    return list(
        db.session.execute(
            select(
                CommunicationTemplateVersion.number,
                CommunicationTemplateVersion.status,
                CommunicationTemplateVersion.subject,
                CommunicationTemplateVersion.body,
            )
            .where(CommunicationTemplateVersion.template_id == template_id)
            .order_by(CommunicationTemplateVersion.number)
        ).tuples()
    )


@pytest.fixture
def manager(world):
    """A member holding schedules.manage, signed in."""
    membership = factories.make_member(world.workspace, grants=["schedules.manage"])
    return membership.person


def _url(world, tail: str = "") -> str:
    return f"/w/{world.workspace.id}/templates/{tail}"


def test_the_navigation_links_to_templates(client, auth, world):
    auth.login(world.member.email)
    page = client.get(f"/w/{world.workspace.id}/").get_data(as_text=True)
    assert f'href="/w/{world.workspace.id}/templates/"' in page


def test_a_manager_creates_a_template_as_draft_version_1(client, auth, world, manager):
    auth.login(manager.email)
    data = {"name": "Weekly note", "subject": "Hours", "body": "Hello\r\nthere"}
    response = client.post(_url(world, "new"), data=data)
    template = db.session.execute(select(CommunicationTemplate)).scalar_one()
    assert response.status_code == 302
    assert response.headers["Location"].endswith(f"/templates/{template.id}")
    assert (template.name, template.workspace_id) == ("Weekly note", world.workspace.id)
    assert template.created_by_id == manager.id
    assert _versions(template.id) == [(1, "draft", "Hours", "Hello\nthere")]


def test_an_administrator_manages_templates_without_the_grant(client, auth, world):
    auth.login(world.admin.email)
    response = client.post(_url(world, "new"), data={"name": "Admin's", "subject": "S", "body": "B"})
    assert response.status_code == 302
    assert _count(CommunicationTemplate) == 1


def test_a_plain_member_sees_templates_but_cannot_manage_them(client, auth, world):
    template = factories.make_template(world.workspace, world.admin, name="Shared note")
    draft = template.versions[0]
    auth.login(world.member.email)
    listing = client.get(_url(world)).get_data(as_text=True)
    detail = client.get(_url(world, str(template.id))).get_data(as_text=True)
    assert "Shared note" in listing and "New template" not in listing
    assert draft.subject in detail and "Publish" not in detail
    assert client.get(_url(world, "new")).status_code == 404
    assert client.post(_url(world, "new"), data={"name": "x", "subject": "s", "body": "b"}).status_code == 404
    assert client.post(_url(world, f"{template.id}/versions/{draft.id}/publish")).status_code == 404
    assert (
        client.post(
            _url(world, f"{template.id}/versions/{draft.id}/edit"), data={"subject": "Changed", "body": "b"}
        ).status_code
        == 404
    )
    assert _versions(template.id) == [(1, "draft", draft.subject, draft.body)]
    assert _count(CommunicationTemplate) == 1


def test_the_list_shows_each_templates_latest_version_and_status(client, auth, world, manager):
    template = factories.make_template(world.workspace, manager, published=True, name="Monthly")
    db.session.add(
        CommunicationTemplateVersion(
            template_id=template.id,
            number=2,
            status="draft",
            subject="Next subject",
            body="b",
            created_by_id=manager.id,
        )
    )
    db.session.commit()
    auth.login(world.member.email)
    page = client.get(_url(world)).get_data(as_text=True)
    row = page[page.index("Monthly") :]
    row = row[: row.index("</tr>")]
    assert '<td class="num">2</td>' in row and "draft" in row and "Next subject" in row


def test_a_draft_is_edited_in_place(client, auth, world, manager):
    template = factories.make_template(world.workspace, manager)
    draft = template.versions[0]
    auth.login(manager.email)
    response = client.post(
        _url(world, f"{template.id}/versions/{draft.id}/edit"), data={"subject": "New subject", "body": "New body"}
    )
    assert response.status_code == 302
    assert _versions(template.id) == [(1, "draft", "New subject", "New body")]


def test_publishing_a_draft_publishes_it_once(client, auth, world, manager):
    template = factories.make_template(world.workspace, manager)
    draft = template.versions[0]
    auth.login(manager.email)
    url = _url(world, f"{template.id}/versions/{draft.id}/publish")
    assert client.post(url).status_code == 302
    version = db.session.get(CommunicationTemplateVersion, draft.id)
    published_at = version.published_at
    assert version.status == "published" and published_at is not None
    again = client.post(url)
    assert again.status_code == 409
    assert "Version 1 is already published." in again.get_data(as_text=True)
    db.session.expire_all()
    assert db.session.get(CommunicationTemplateVersion, draft.id).published_at == published_at


def test_a_published_version_never_changes(client, auth, world, manager):
    template = factories.make_template(world.workspace, manager, published=True, subject="Fixed", body="Kept")
    version = template.versions[0]
    auth.login(manager.email)
    response = client.post(
        _url(world, f"{template.id}/versions/{version.id}/edit"), data={"subject": "Changed", "body": "Changed"}
    )
    assert response.status_code == 409
    assert "can no longer change" in response.get_data(as_text=True)
    assert _versions(template.id) == [(1, "published", "Fixed", "Kept")]
    opened = client.get(_url(world, f"{template.id}/versions/{version.id}/edit"))
    assert opened.status_code == 302


def test_the_guard_is_in_the_statement(world, manager):
    """Publishing or editing a version that is published already is refused by the UPDATE itself."""
    template = factories.make_template(world.workspace, manager, published=True)
    version_id = template.versions[0].id
    text = communication_template.validate_text("Other", "Other")
    with pytest.raises(TransitionRefused):
        communication_template.edit_draft(version_id, text)
    with pytest.raises(TransitionRefused):
        communication_template.publish(version_id, template.created_at)


def test_a_new_version_from_a_published_one_is_the_next_draft(client, auth, world, manager):
    template = factories.make_template(world.workspace, manager, published=True, subject="S1", body="B1")
    published = template.versions[0]
    auth.login(manager.email)
    response = client.post(_url(world, f"{template.id}/versions/{published.id}/new-version"))
    assert response.status_code == 302
    assert _versions(template.id) == [(1, "published", "S1", "B1"), (2, "draft", "S1", "B1")]
    draft = db.session.execute(
        select(CommunicationTemplateVersion).where(CommunicationTemplateVersion.number == 2)
    ).scalar_one()
    assert response.headers["Location"].endswith(f"/versions/{draft.id}/edit")
    refused = client.post(_url(world, f"{template.id}/versions/{published.id}/new-version"))
    assert refused.status_code == 409
    assert "Version 2 is already a draft" in refused.get_data(as_text=True)
    assert len(_versions(template.id)) == 2


def test_every_version_is_listed_on_the_template_page(client, auth, world, manager):
    template = factories.make_template(world.workspace, manager, published=True, subject="First words")
    db.session.add(
        CommunicationTemplateVersion(
            template_id=template.id,
            number=2,
            status="draft",
            subject="Second words",
            body="b",
            created_by_id=manager.id,
        )
    )
    db.session.commit()
    auth.login(manager.email)
    page = client.get(_url(world, str(template.id))).get_data(as_text=True)
    assert "Version 1" in page and "Version 2" in page
    assert "First words" in page and "Second words" in page


@pytest.mark.parametrize("value", factories.hostile_values())
def test_hostile_text_is_stored_and_shown_escaped(client, auth, world, manager, value):
    """Every hostile value the house keeps either saves as a subject/body and shows escaped, or is refused clearly."""
    auth.login(manager.email)
    subject = value.strip()[:200] or "Subject"
    response = client.post(_url(world, "new"), data={"name": "Hostile", "subject": subject, "body": value or "Body"})
    if response.status_code == 400:
        assert "Nothing was saved." in response.get_data(as_text=True)
        assert _count(CommunicationTemplate) == 0
        return
    assert response.status_code == 302
    page = client.get(response.headers["Location"]).get_data(as_text=True)
    stored = db.session.execute(select(CommunicationTemplateVersion)).scalar_one()
    assert str(escape(stored.subject)) in page


BAD_INPUT = [
    ({"name": ""}, "name", "Give the template a name."),
    ({"name": "   "}, "name", "Give the template a name."),
    ({"name": "x" * 201}, "name", "The name can be at most 200 characters long."),
    ({"name": "a\x00b"}, "name", "a NUL or another invalid character"),
    ({"subject": ""}, "subject", "Give the message a subject."),
    ({"subject": "x" * 201}, "subject", "The subject can be at most 200 characters long."),
    ({"subject": "Hours\r\nBcc: everyone@example.test"}, "subject", "The subject must be a single line."),
    ({"subject": "a\x00"}, "subject", "a NUL or another invalid character"),
    ({"body": ""}, "body", "Write the message."),
    ({"body": "x" * 20_001}, "body", "The message can be at most 20,000 characters long."),
    ({"body": "\x00"}, "body", "a NUL or another invalid character"),
]


@pytest.mark.parametrize(("change", "field", "message"), BAD_INPUT)
def test_bad_input_on_create_gets_a_clear_message_and_saves_nothing(
    client, auth, world, manager, change, field, message
):
    auth.login(manager.email)
    data = {"name": "Good name", "subject": "Good subject", "body": "Good body", **change}
    response = client.post(_url(world, "new"), data=data)
    page = response.get_data(as_text=True)
    assert response.status_code == 400
    assert message in page
    assert f'id="error-{field}"' in page
    assert _count(CommunicationTemplate) == 0
    assert _count(CommunicationTemplateVersion) == 0


@pytest.mark.parametrize(("change", "field", "message"), [case for case in BAD_INPUT if "name" not in case[0]])
def test_bad_input_on_edit_gets_a_clear_message_and_changes_nothing(
    client, auth, world, manager, change, field, message
):
    template = factories.make_template(world.workspace, manager, subject="Kept", body="Kept body")
    draft = template.versions[0]
    auth.login(manager.email)
    data = {"subject": "Good subject", "body": "Good body", **change}
    response = client.post(_url(world, f"{template.id}/versions/{draft.id}/edit"), data=data)
    assert response.status_code == 400
    assert message in response.get_data(as_text=True)
    assert _versions(template.id) == [(1, "draft", "Kept", "Kept body")]


def test_a_taken_name_is_refused_and_saves_nothing(client, auth, world, manager):
    factories.make_template(world.workspace, manager, name="Weekly")
    auth.login(manager.email)
    response = client.post(_url(world, "new"), data={"name": "Weekly", "subject": "S", "body": "B"})
    assert response.status_code == 400
    assert "Another template of this workspace already has this name." in response.get_data(as_text=True)
    assert _count(CommunicationTemplate) == 1


def test_a_version_of_another_template_is_not_found(client, auth, world, manager):
    first = factories.make_template(world.workspace, manager)
    second = factories.make_template(world.workspace, manager)
    auth.login(manager.email)
    response = client.post(_url(world, f"{first.id}/versions/{second.versions[0].id}/publish"))
    assert response.status_code == 404
    assert _versions(second.id)[0][1] == "draft"


@pytest.mark.parametrize("version_id", ["2147483648", "9" * 30])
def test_an_out_of_range_version_id_is_not_found(client, auth, world, manager, version_id):
    template = factories.make_template(world.workspace, manager)
    auth.login(manager.email)
    assert client.post(_url(world, f"{template.id}/versions/{version_id}/publish")).status_code == 404


def test_a_template_of_another_workspace_is_not_found(client, auth, world):
    template = factories.make_template(world.other_workspace, world.outsider, name="Elsewhere")
    auth.login(world.admin.email)
    response = client.get(_url(world, str(template.id)))
    assert response.status_code == 404
    assert "Elsewhere" not in response.get_data(as_text=True)


def _audited() -> list[tuple[str, int, int, dict]]:
    db.session.rollback()
    events = db.session.scalars(select(AuditEvent).order_by(AuditEvent.id))
    return [(event.action, event.actor_id, event.subject_id, event.details) for event in events]


def test_creating_editing_publishing_and_starting_a_version_are_each_audited(client, auth, world, manager):
    auth.login(manager.email)
    client.post(_url(world, "new"), data={"name": "Weekly note", "subject": "Hours", "body": "Hello"})
    template = db.session.execute(select(CommunicationTemplate)).scalar_one()
    draft = template.versions[0]
    client.post(_url(world, f"{template.id}/versions/{draft.id}/edit"), data={"subject": "Hours v1", "body": "Hi"})
    client.post(_url(world, f"{template.id}/versions/{draft.id}/publish"))
    client.post(_url(world, f"{template.id}/versions/{draft.id}/new-version"))

    assert _audited() == [
        ("template.created", manager.id, template.id, {"name": "Weekly note", "version": 1, "subject": "Hours"}),
        ("template.draft_changed", manager.id, template.id, {"version": 1, "subject": "Hours v1"}),
        ("template.published", manager.id, template.id, {"version": 1}),
        ("template.version_started", manager.id, template.id, {"version": 2, "from_version": 1}),
    ]


def test_a_refused_publication_writes_no_event(client, auth, world, manager):
    template = factories.make_template(world.workspace, manager, published=True)
    auth.login(manager.email)
    response = client.post(_url(world, f"{template.id}/versions/{template.versions[0].id}/publish"))
    assert response.status_code == 409
    assert _audited() == []
