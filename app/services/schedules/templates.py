"""Message templates: listing, creating, editing a draft, publishing, and starting a new version.

Everyone in the workspace sees its templates; administrators and people with schedule-management
authority manage them (app.domain.people.access.has_schedule_authority). A template's text lives in
numbered versions; a schedule names a published one, which never changes again
(app/domain/schedules/communication_template.py), so editing a template never alters what a schedule sends.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import selectinload

from app.domain.errors import AccessDenied, TransitionRefused, ValidationError
from app.domain.people.access import RequesterContext, has_schedule_authority
from app.domain.schedules import communication_template
from app.extensions import db
from app.models.schedule import CommunicationTemplate, CommunicationTemplateVersion, TemplateStatus
from app.models.types import utcnow
from app.services.accounts import audit


@dataclass(frozen=True)
class TemplateListing:
    template: CommunicationTemplate
    latest: CommunicationTemplateVersion
    published_count: int


def can_manage(access: RequesterContext) -> bool:
    return has_schedule_authority(access)


def _require_manager(access: RequesterContext) -> None:
    if not can_manage(access):
        raise AccessDenied("Only administrators and people who manage schedules manage templates.")


def list_templates(access: RequesterContext) -> list[TemplateListing]:
    """The workspace's templates by name, each with its latest version."""
    templates = db.session.execute(
        select(CommunicationTemplate)
        .where(CommunicationTemplate.workspace_id == access.workspace_id)
        .options(selectinload(CommunicationTemplate.versions))
        .order_by(func.lower(CommunicationTemplate.name), CommunicationTemplate.id)
    ).scalars()
    return [
        TemplateListing(
            template=template,
            latest=template.versions[-1],
            published_count=sum(v.status == TemplateStatus.PUBLISHED for v in template.versions),
        )
        for template in templates
        if template.versions
    ]


def get_template(access: RequesterContext, template_id: int) -> CommunicationTemplate | None:
    """The template if it is in this workspace; otherwise None."""
    return db.session.execute(
        select(CommunicationTemplate)
        .where(CommunicationTemplate.id == template_id, CommunicationTemplate.workspace_id == access.workspace_id)
        .options(selectinload(CommunicationTemplate.versions))
    ).scalar_one_or_none()


def version_of(template: CommunicationTemplate, version_id: int) -> CommunicationTemplateVersion | None:
    return next((version for version in template.versions if version.id == version_id), None)


def create_template(access: RequesterContext, name: str, subject: str, body: str) -> CommunicationTemplate:
    """A new template with its text as draft version 1; ValidationError and nothing saved otherwise."""
    _require_manager(access)
    name = communication_template.validate_name(name)
    text = communication_template.validate_text(subject, body)
    template = CommunicationTemplate(workspace_id=access.workspace_id, name=name, created_by_id=access.person_id)
    template.versions.append(
        CommunicationTemplateVersion(
            number=1, status=TemplateStatus.DRAFT, subject=text.subject, body=text.body, created_by_id=access.person_id
        )
    )
    db.session.add(template)
    try:
        db.session.flush()
        _audit(access, "template.created", template.id, {"name": name, "version": 1, "subject": text.subject})
        db.session.commit()
    except IntegrityError:
        db.session.rollback()
        raise ValidationError("Another template of this workspace already has this name.", "name") from None
    return template


def edit_draft(access: RequesterContext, version: CommunicationTemplateVersion, subject: str, body: str) -> None:
    """The draft's subject and body replaced; ValidationError, or TransitionRefused once published."""
    _require_manager(access)
    text = communication_template.validate_text(subject, body)
    communication_template.edit_draft(version.id, text)
    _audit(access, "template.draft_changed", version.template_id, {"version": version.number, "subject": text.subject})
    db.session.commit()


def publish(access: RequesterContext, version: CommunicationTemplateVersion) -> None:
    """The draft published for good; TransitionRefused when it was published already."""
    _require_manager(access)
    communication_template.publish(version.id, utcnow())
    _audit(access, "template.published", version.template_id, {"version": version.number})
    db.session.commit()


def new_version(
    access: RequesterContext, template: CommunicationTemplate, source: CommunicationTemplateVersion
) -> CommunicationTemplateVersion:
    """The next numbered draft, starting from a published version's text.

    Refused (TransitionRefused) while the template has a draft: that draft is the next version.
    """
    _require_manager(access)
    if source.status != TemplateStatus.PUBLISHED:
        raise TransitionRefused(f"Version {source.number} is a draft: change it instead of copying it.")
    draft = next((v for v in template.versions if v.status == TemplateStatus.DRAFT), None)
    if draft is not None:
        raise TransitionRefused(f"Version {draft.number} is already a draft: change that one.")
    number = max(v.number for v in template.versions) + 1
    version = CommunicationTemplateVersion(
        template_id=template.id,
        number=number,
        status=TemplateStatus.DRAFT,
        subject=source.subject,
        body=source.body,
        created_by_id=access.person_id,
    )
    db.session.add(version)
    try:
        db.session.flush()
        _audit(access, "template.version_started", template.id, {"version": number, "from_version": source.number})
        db.session.commit()
    except IntegrityError:
        # Someone made the next version at the same moment; theirs is the draft to change.
        db.session.rollback()
        raise TransitionRefused(f"Version {number} was made meanwhile: change that one.") from None
    return version


def _audit(access: RequesterContext, action: str, template_id: int, details: dict) -> None:
    """What the workspace's messages say changed: audited in the change's own transaction."""
    audit.record(
        workspace_id=access.workspace_id,
        actor_id=access.person_id,
        action=action,
        subject_type="communication_template",
        subject_id=template_id,
        details=details,
    )
