"""A record's page: its text, phrase edits with a diff preview, field edits, skill and rule ops."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from memoryadmin.web.access import AgentScope, agent_view
from memoryadmin.web.forms import PhraseEditForm, RuleForm, SectionForm
from memoryadmin.web.rendering import diff_pieces
from memoryadmin.web.selectors import text_at_version
from memoryadmin.web.surfaces import SurfaceUI, surface_ui
from memoryadmin.web.views.common import (
    detail_url,
    flash_for,
    form_refusal,
    history_url,
    load_record,
    outcome,
    read_only_refusal,
    refusal,
    require_record,
    swap_into,
)
from stores.editing import Status, TextEditError, TooLong, apply_edit
from stores.models import Memory, Revision, RulesDocument, VersionedRecord
from stores.services import (
    WriteResult,
    memory_invalidate,
    memory_reinforce,
    memory_set_importance,
    record_edit,
    record_forget,
    record_update,
    rules_add,
    rules_document,
    rules_remove,
    rules_replace,
    skill_append,
    skill_delete_section,
    skill_replace_section,
    working_set_ttl,
)
from stores.services.engine import text_limit
from stores.services.policy import allowed_ops

# Why an action is absent, in the words a reviewer needs (the service refuses the same ops).
STORE_NOTES = {
    Memory.Store.FACT: "Fact rows are read-only: this memory is a projection of another store, "
    "so no edit is offered.",
    Memory.Store.EPISODIC: "Episodic memories can only be invalidated: they are history, so "
    "they are not rewritten, re-weighted or deleted.",
}
OPS = (
    "edit",
    "update",
    "set_importance",
    "invalidate",
    "reinforce",
    "forget",
    "set_ttl",
    "revert",
    "section",
    "rule",
)


def record_context(
    scope: AgentScope,
    ui: SurfaceUI,
    record: VersionedRecord,
    *,
    flash: dict[str, Any] | None = None,
) -> dict[str, Any]:
    notes: list[str] = []
    allowed: frozenset[str] | None = None
    if not scope.can_write:
        notes.append("You have read-only access to this agent: nothing here can be changed.")
    if ui.spec.store_policy:
        allowed = allowed_ops(record.store, actor=scope.actor)
        if allowed is not None and scope.can_write:
            notes.append(STORE_NOTES[record.store])
    expired = ui.spec.expires and record.is_expired()
    if expired:
        notes.append(
            "This entry has expired: it is no longer editable and the next sweep purges it."
        )
    can = {op: scope.can_write and not expired and (allowed is None or op in allowed) for op in OPS}
    text = getattr(record, ui.text_field)
    context: dict[str, Any] = {
        "scope": scope,
        "agent": scope.agent,
        "ui": ui,
        "record": record,
        "title": ui.title(record),
        "text": text,
        "text_fields": ui.spec.text_fields,
        "notes": notes,
        "can": can,
        "expired": expired,
        "flash": flash,
        "pending": Revision.objects.filter(
            agent=scope.agent, surface=ui.key, record_id=record.pk, review=Revision.Review.PENDING
        ).count(),
    }
    context.update(ui.text_context(text))
    return context


def _render_panel(
    request: HttpRequest, scope: AgentScope, ui: SurfaceUI, pk: int, result: WriteResult
) -> HttpResponse:
    """After a successful write: the whole record panel, showing the new version and its diff."""
    if not request.htmx:
        messages.success(request, f"{result.status}: now version {result.version}.")
        return redirect(detail_url(scope, ui, pk))
    record = require_record(scope, ui, pk)
    context = record_context(scope, ui, record, flash=flash_for(result))
    response = render(request, "web/record_detail.html#panel", context)
    return swap_into(response, "#record-panel")


@require_GET
@agent_view
def record_detail(request: HttpRequest, scope: AgentScope, surface: str, pk: int) -> HttpResponse:
    ui = surface_ui(surface)
    record = load_record(scope, ui, pk)
    if record is None:
        # A forgotten record stays findable: its history shows the last text and can restore it.
        if Revision.objects.filter(agent=scope.agent, surface=ui.key, record_id=pk).exists():
            return redirect(history_url(scope, ui, pk))
        return render(request, "web/not_found.html", {"agent": scope.agent, "ui": ui}, status=404)
    return render(request, "web/record_detail.html", record_context(scope, ui, record))


@require_GET
@agent_view
def rules_page(request: HttpRequest, scope: AgentScope) -> HttpResponse:
    """The agent's one rules document (created empty on first visit by someone who may write)."""
    document = RulesDocument.objects.filter(agent=scope.agent).first()
    if document is None and scope.can_write:
        document = rules_document(agent=scope.agent, actor=scope.actor)
    if document is None:
        return render(
            request, "web/not_found.html", {"agent": scope.agent, "ui": surface_ui("rules")}
        )
    return redirect(detail_url(scope, surface_ui("rules"), document.pk))


def _phrase_field(ui: SurfaceUI, form: PhraseEditForm) -> str | None:
    field = form.cleaned_data.get("field") or ui.text_field
    return field if field in ui.spec.text_fields else None


def _edit_error(error: TextEditError) -> WriteResult:
    details: dict[str, Any] = {}
    near_miss = getattr(error, "near_miss", None)
    if near_miss is not None:
        details["near_miss"] = {"line": near_miss.line, "text": near_miss.text}
    if hasattr(error, "count"):
        details["count"] = error.count
        details["lines"] = list(error.lines)
    if isinstance(error, TooLong):
        details["limit"] = error.limit
        details["length"] = error.length
    return WriteResult(status=error.status, message=error.message, details=details)


@require_POST
@agent_view
def record_preview(request: HttpRequest, scope: AgentScope, surface: str, pk: int) -> HttpResponse:
    """The word diff a phrase edit would make to the whole text; nothing is written."""
    ui = surface_ui(surface)
    record = require_record(scope, ui, pk)
    form = PhraseEditForm(request.POST)
    back = detail_url(scope, ui, pk)
    if not form.is_valid():
        return outcome(request, form_refusal(form), back=back)
    field = _phrase_field(ui, form)
    if field is None:
        return outcome(
            request, refusal(Status.INVALID, "Not a text field of this record."), back=back
        )
    data = form.cleaned_data
    if record.version != data["expected_version"]:
        return _conflict(request, scope, ui, record, data, field)
    old, new = data["old_string"], data["new_string"]
    if not old:
        return render(request, "web/partials/_hint.html", {"hint": "select"})
    if old == new:
        return render(request, "web/partials/_hint.html", {"hint": "replacement"})
    current = getattr(record, field)
    try:
        applied = apply_edit(
            current, old, new, replace_all=data["replace_all"], max_length=text_limit(ui.spec)
        )
    except TextEditError as error:
        return outcome(request, _edit_error(error), back=back)
    return render(
        request,
        "web/partials/_preview.html",
        {
            "diff": diff_pieces(current, applied.text),
            "applied": applied,
            "record": record,
            "can_apply": scope.can_write,
            "apply_url": back + "edit/",
        },
    )


def _conflict(
    request: HttpRequest,
    scope: AgentScope,
    ui: SurfaceUI,
    record: VersionedRecord,
    data: dict[str, Any],
    field: str,
) -> HttpResponse:
    """Someone changed the record since the page was loaded: show what, and offer to re-apply."""
    loaded_version = data["expected_version"]
    current = getattr(record, field)
    loaded = text_at_version(scope.agent, ui.key, record.pk, loaded_version, field)
    changes = list(
        Revision.objects.filter(
            agent=scope.agent,
            surface=ui.key,
            record_id=record.pk,
            version_after__gt=loaded_version,
        ).order_by("version_after")[:20]
    )
    reapply_diff = reapply_error = None
    if data.get("old_string"):
        try:
            applied = apply_edit(
                current,
                data["old_string"],
                data["new_string"],
                replace_all=data["replace_all"],
                max_length=text_limit(ui.spec),
            )
            reapply_diff = diff_pieces(current, applied.text)
        except TextEditError as error:
            reapply_error = _edit_error(error)
    context = {
        "record": record,
        "loaded_version": loaded_version,
        "changes": changes,
        "changed_diff": diff_pieces(loaded, current) if loaded is not None else None,
        "reapply_diff": reapply_diff,
        "reapply_error": reapply_error,
        "can_apply": scope.can_write,
        "apply_url": detail_url(scope, ui, record.pk) + "edit/",
        "reload_url": detail_url(scope, ui, record.pk),
    }
    return render(request, "web/partials/_conflict.html", context, status=409)


@require_POST
@agent_view
def record_apply_edit(
    request: HttpRequest, scope: AgentScope, surface: str, pk: int
) -> HttpResponse:
    """Apply a phrase edit with the version the page was loaded with."""
    ui = surface_ui(surface)
    back = detail_url(scope, ui, pk)
    if not scope.can_write:
        return outcome(request, read_only_refusal(), back=back)
    form = PhraseEditForm(request.POST)
    if not form.is_valid():
        return outcome(request, form_refusal(form), back=back)
    field = _phrase_field(ui, form)
    if field is None:
        return outcome(
            request, refusal(Status.INVALID, "Not a text field of this record."), back=back
        )
    data = form.cleaned_data
    result = record_edit(
        surface_key=ui.key,
        agent=scope.agent,
        ref=pk,
        actor=scope.actor,
        old_string=data["old_string"],
        new_string=data["new_string"],
        replace_all=data["replace_all"],
        field=field,
        expected_version=data["expected_version"],
    )
    if result.ok:
        return _render_panel(request, scope, ui, pk, result)
    if result.status == Status.CONFLICT and request.htmx:
        record = load_record(scope, ui, pk)
        if record is not None:
            return _conflict(request, scope, ui, record, data, field)
    return outcome(request, result, back=back)


def _field_write(scope: AgentScope, ui: SurfaceUI, pk: int, post: Any) -> WriteResult:
    """One field action from the record page, through the matching service call."""
    action = post.get("action", "")
    try:
        version = int(post["expected_version"]) if post.get("expected_version") else None
    except ValueError:
        return refusal(Status.INVALID, "expected_version must be a whole number.")
    common = {"agent": scope.agent, "ref": pk, "actor": scope.actor, "expected_version": version}

    def update(changes: dict[str, Any]) -> WriteResult:
        return record_update(surface_key=ui.key, changes=changes, **common)

    if ui.key == "memory":
        if action == "importance":
            return memory_set_importance(importance=post.get("importance"), **common)
        if action == "invalidate":
            return memory_invalidate(replacement_ref=post.get("replacement_id") or None, **common)
        if action == "reinforce":
            return memory_reinforce(**common)
        if action == "pinned":
            return update({"pinned": post.get("pinned") == "on"})
    if ui.key in ("memory", "working"):
        if action == "category":
            return update({"category": post.get("category", "")})
        if action == "tags":
            return update({"tags": post.get("tags", "")})
    if ui.key == "working":
        if action == "ttl":
            minutes = post.get("ttl_minutes", "")
            try:
                seconds = int(float(minutes) * 60)
            except ValueError:
                return refusal(Status.INVALID, "Give the time to live in minutes.")
            return working_set_ttl(ttl=seconds, **common)
        if action == "ttl_clear":
            return working_set_ttl(clear=True, **common)
    if ui.key == "task":
        if action == "enabled":
            return update({"enabled": post.get("enabled") == "on"})
        if action == "schedule":
            return update({"schedule": post.get("schedule", "")})
    if ui.key in ("task", "skill") and action == "name":
        return update({"name": post.get("name", "")})
    if action == "forget" and ui.key != "rules":
        return record_forget(surface_key=ui.key, **common)
    return refusal(Status.INVALID, f"{action or 'That'} is not an action of a {ui.key} record.")


@require_POST
@agent_view
def record_fields(request: HttpRequest, scope: AgentScope, surface: str, pk: int) -> HttpResponse:
    ui = surface_ui(surface)
    back = detail_url(scope, ui, pk)
    if not scope.can_write:
        return outcome(request, read_only_refusal(), back=back)
    result = _field_write(scope, ui, pk, request.POST)
    if not result.ok:
        return outcome(request, result, back=back)
    if result.status == Status.DELETED:
        message = f"Deleted {ui.label.lower()} {pk}; it can be restored here."
        unlinked = [str(link["id"]) for link in result.details.get("unlinked", [])]
        if unlinked:
            message += (
                f" It superseded {', '.join(unlinked)}; each lost that link in an unlink revision."
            )
        messages.success(request, message)
        target = history_url(scope, ui, pk)
        return HttpResponseClientRedirect(target) if request.htmx else redirect(target)
    return _render_panel(request, scope, ui, pk, result)


@require_POST
@agent_view
def skill_section(request: HttpRequest, scope: AgentScope, pk: int) -> HttpResponse:
    """Replace, append to or delete one section of a skill's markdown body."""
    ui = surface_ui("skill")
    back = detail_url(scope, ui, pk)
    if not scope.can_write:
        return outcome(request, read_only_refusal(), back=back)
    form = SectionForm(request.POST)
    if not form.is_valid():
        return outcome(request, form_refusal(form), back=back)
    data = form.cleaned_data
    common = {
        "agent": scope.agent,
        "ref": pk,
        "actor": scope.actor,
        "expected_version": data["expected_version"],
    }
    heading = data["heading"] or None
    if data["op"] == "append":
        result = skill_append(content=data["content"], heading=heading, **common)
    elif heading is None:
        result = refusal(Status.INVALID, "Choose the section by its heading.")
    elif data["op"] == "replace":
        result = skill_replace_section(heading=heading, content=data["content"], **common)
    else:
        result = skill_delete_section(heading=heading, **common)
    if result.ok:
        return _render_panel(request, scope, ui, pk, result)
    return outcome(request, result, back=back)


@require_POST
@agent_view
def rules_op(request: HttpRequest, scope: AgentScope, pk: int) -> HttpResponse:
    """Add, remove or rewrite one rule; the rest of the document stays byte for byte."""
    ui = surface_ui("rules")
    back = detail_url(scope, ui, pk)
    if not scope.can_write:
        return outcome(request, read_only_refusal(), back=back)
    form = RuleForm(request.POST)
    if not form.is_valid():
        return outcome(request, form_refusal(form), back=back)
    data = form.cleaned_data
    common = {
        "agent": scope.agent,
        "actor": scope.actor,
        "expected_version": data["expected_version"],
    }
    if data["op"] == "add":
        result = rules_add(rule=data["rule"], section=data["section"] or None, **common)
    elif data["op"] == "remove":
        result = rules_remove(rule=data["rule"], **common)
    else:
        result = rules_replace(rule=data["rule"], new_rule=data["new_rule"], **common)
    if result.ok:
        return _render_panel(request, scope, ui, pk, result)
    return outcome(request, result, back=back)
