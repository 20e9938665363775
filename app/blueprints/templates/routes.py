"""Message templates: the list, a template's versions, and (for those who manage them) creating,
editing a draft, publishing it and starting a new version from a published one.

Members see the templates; a person who may not manage them gets 404 from the pages that change
them, as for anything else they may not change.
"""

from __future__ import annotations

from flask import flash, g, redirect, render_template, request, url_for

from app.blueprints.guards import visible_or_404, workspace_member
from app.blueprints.templates import bp
from app.domain.errors import NotVisible, TransitionRefused, ValidationError
from app.domain.values.text_rules import database_id
from app.models.schedule import CommunicationTemplate, CommunicationTemplateVersion, TemplateStatus
from app.services.schedules import templates


@bp.context_processor
def _vocabulary() -> dict:
    # Error pages of this area render without a membership on `g`: they offer nothing to manage.
    access = g.get("access")
    manages = access is not None and templates.can_manage(access)
    return {"TemplateStatus": TemplateStatus, "can_manage_templates": manages}


@bp.get("/")
@workspace_member
def index(workspace_id: int):
    return render_template("message_templates/index.html", listings=templates.list_templates(g.access))


@bp.route("/new", methods=["GET", "POST"])
@workspace_member
def new(workspace_id: int):
    _require_manager()
    form = _posted_text(with_name=True)
    if request.method == "GET":
        return render_template("message_templates/form.html", form=form, template=None, version=None)
    try:
        template = templates.create_template(g.access, form["name"], form["subject"], form["body"])
    except ValidationError as error:
        return render_template("message_templates/form.html", form=form, template=None, version=None, error=error), 400
    flash(f"Saved “{template.name}” as a draft (version 1). Publish it to use it in schedules.")
    return redirect(url_for(".detail", workspace_id=workspace_id, template_id=template.id))


@bp.get("/<int:template_id>")
@workspace_member
def detail(workspace_id: int, template_id: int):
    template = _visible_template(template_id)
    return render_template("message_templates/detail.html", template=template)


@bp.route("/<int:template_id>/versions/<int:version_id>/edit", methods=["GET", "POST"])
@workspace_member
def edit_draft(workspace_id: int, template_id: int, version_id: int):
    _require_manager()
    template = _visible_template(template_id)
    version = _version(template, version_id)
    if request.method == "GET":
        if version.status != TemplateStatus.DRAFT:
            flash(f"Version {version.number} is published and never changes. Make a new version to change the text.")
            return redirect(url_for(".detail", workspace_id=workspace_id, template_id=template.id))
        form = {"subject": version.subject, "body": version.body}
        return render_template("message_templates/form.html", form=form, template=template, version=version)
    form = _posted_text(with_name=False)
    try:
        templates.edit_draft(g.access, version, form["subject"], form["body"])
    except ValidationError as error:
        page = render_template(
            "message_templates/form.html", form=form, template=template, version=version, error=error
        )
        return page, 400
    except TransitionRefused:
        published = ValidationError(
            f"Version {version.number} was published meanwhile and can no longer change. "
            "Make a new version to change the text."
        )
        page = render_template(
            "message_templates/form.html", form=form, template=template, version=version, error=published
        )
        return page, 409
    flash(f"Saved version {version.number} of “{template.name}” (still a draft).")
    return redirect(url_for(".detail", workspace_id=workspace_id, template_id=template.id))


@bp.post("/<int:template_id>/versions/<int:version_id>/publish")
@workspace_member
def publish(workspace_id: int, template_id: int, version_id: int):
    _require_manager()
    template = _visible_template(template_id)
    version = _version(template, version_id)
    try:
        templates.publish(g.access, version)
    except TransitionRefused:
        return _detail_refused(template, f"Version {version.number} is already published.")
    flash(f"Published version {version.number} of “{template.name}”. Schedules can now use it.")
    return redirect(url_for(".detail", workspace_id=workspace_id, template_id=template.id))


@bp.post("/<int:template_id>/versions/<int:version_id>/new-version")
@workspace_member
def new_version(workspace_id: int, template_id: int, version_id: int):
    _require_manager()
    template = _visible_template(template_id)
    source = _version(template, version_id)
    try:
        version = templates.new_version(g.access, template, source)
    except TransitionRefused as refusal:
        return _detail_refused(template, str(refusal))
    flash(f"Version {version.number} is a draft copied from version {source.number}.")
    return redirect(url_for(".edit_draft", workspace_id=workspace_id, template_id=template.id, version_id=version.id))


def _require_manager() -> None:
    if not templates.can_manage(g.access):
        raise NotVisible("the pages that change templates are for those who manage them")


def _visible_template(template_id: int) -> CommunicationTemplate:
    return visible_or_404(templates.get_template, template_id)


def _version(template: CommunicationTemplate, version_id: int) -> CommunicationTemplateVersion:
    version = templates.version_of(template, version_id) if database_id(version_id) else None
    if version is None:
        raise NotVisible(f"template {template.id} has no such version")
    return version


def _posted_text(with_name: bool) -> dict[str, str]:
    fields = ("name", "subject", "body") if with_name else ("subject", "body")
    return {field: request.form.get(field, "") for field in fields}


def _detail_refused(template: CommunicationTemplate, message: str):
    # The template as the database now holds it, after the refused change rolled back.
    fresh = visible_or_404(templates.get_template, template.id)
    return render_template("message_templates/detail.html", template=fresh, refusal=message), 409
