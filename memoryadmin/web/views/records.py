"""A record's page: its text, and every op on it through one generic write view.

Each op of `web.ops` goes guard → form → service → the record panel, or the refusal in place.
Text ops preview first with the service's own dry run, so a preview is refused exactly as the
write would be, and its confirm posts the same op with the version the preview was made from.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from memoryadmin.web.access import AgentScope, HtmxHttpRequest, agent_view
from memoryadmin.web.ops import field_entries, page_ops, record_page_ops, web_op
from memoryadmin.web.surfaces import SurfaceUI, surface_ui
from memoryadmin.web.views.common import (
    UNWRITTEN,
    detail_url,
    flash_for,
    history_url,
    load_record,
    outcome,
    refusal,
    refused_post,
    require_record,
    scan_override,
    swap_into,
)
from memoryadmin.web.views.history import timeline_response
from memoryadmin.web.views.previews import conflict_response, op_url, preview_response
from memoryadmin.web.views.review import queue_response
from stores.editing import Status
from stores.engine.documents import unwritten_document
from stores.engine.policy import allowed_ops
from stores.engine.results import WriteResult
from stores.models import Memory, VersionedRecord
from stores.selectors.records import only_record_id
from stores.selectors.revisions import (
    has_history,
    pending_count,
    record_origin,
    revision_versions,
)

# Why an action is absent, in the words a reviewer needs (the service refuses the same ops).
STORE_NOTES = {
    Memory.Store.FACT: "Fact rows are read-only: this memory is a projection of another store, "
    "so no edit is offered.",
    Memory.Store.EPISODIC: "Episodic memories can only be invalidated: they are history, so "
    "they are not rewritten, re-weighted or deleted.",
}


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
    if record.pk == UNWRITTEN:
        notes.append(f"No {ui.spec.nouns[0]} yet: nothing is stored until the first change to it.")
    if ui.spec.store_policy:
        allowed = allowed_ops(record.store, actor=scope.actor)
        if allowed is not None and scope.can_write:
            notes.append(STORE_NOTES[record.store])
    expired = ui.spec.expires and record.is_expired()
    if expired:
        notes.append(
            "This entry has expired: it is no longer editable and the next sweep purges it."
        )
    offered = page_ops(ui.key)
    can = {
        op.name: scope.can_write and not expired and (allowed is None or op.name in allowed)
        for op in offered
    }
    text_ops, field_ops = record_page_ops(ui.key)
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
        "op_url": {op.name: op_url(scope, ui, record.pk, op.name) for op in offered},
        "preview_url": {
            op.name: op_url(scope, ui, record.pk, op.name, preview=True)
            for op in offered
            if op.previews
        },
        "text_ops": text_ops,
        "field_ops": field_ops,
        "op_fields": {entry.name: field_entries(entry.op, ui.key, record) for entry in field_ops},
        "pending": pending_count(scope.agent, ui.key, record.pk),
        "unwritten": record.pk == UNWRITTEN,
        # The writes that created and last changed it, and where they came from.
        "origin": record_origin(ui.key, record.pk) if record.pk != UNWRITTEN else {},
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
        if has_history(scope.agent, ui.key, pk):
            return redirect(history_url(scope, ui, pk))
        return render(request, "web/not_found.html", {"agent": scope.agent, "ui": ui}, status=404)
    return render(request, "web/record_detail.html", record_context(scope, ui, record))


def document_page(request: HttpRequest, scope: AgentScope, ui: SurfaceUI) -> HttpResponse:
    """The page of the agent's one record of a surface it has one of (its rules.md); before
    the first write to it, an empty one that is not stored."""
    document_id = only_record_id(ui.spec, scope.agent)
    if document_id is not None:
        return redirect(detail_url(scope, ui, document_id))
    unwritten = unwritten_document(ui.spec, scope.agent)
    unwritten.pk = UNWRITTEN
    return render(request, "web/record_detail.html", record_context(scope, ui, unwritten))


@require_POST
@agent_view
def record_op(
    request: HtmxHttpRequest,
    scope: AgentScope,
    surface: str,
    pk: int,
    op: str,
    preview: bool = False,
) -> HttpResponse:
    """Guard → form → service → panel (or preview), or the refusal where the form is."""
    ui = surface_ui(surface)
    action = web_op(op, ui.key)
    # An op offered in the history too (undo) answers there with the timeline.
    timeline = action is not None and (
        action.shown_in_timeline or request.POST.get("shown_in") == "history"
    )
    back = history_url(scope, ui, pk) if timeline else detail_url(scope, ui, pk)
    if action is None or (preview and not action.previews):
        refused = refusal(Status.INVALID, f"{op} is not an op the page offers on a {ui.key}.")
        return outcome(request, refused, back=back)
    form = action.form(request.POST, ui.key)
    if (refused_response := refused_post(request, scope, form, back=back)) is not None:
        return refused_response
    if preview and (hint := form.preview_hint()):
        return render(request, "web/partials/_hint.html", {"hint": hint})
    with scan_override(request):
        result = action.call(scope=scope, surface=ui.key, pk=pk, form=form, dry_run=preview)
    # A stale version is shown with what changed since; a conflict in the text itself (an
    # undo that later edits overlap, naming their revisions) is a refusal like any other.
    stale = result.status == Status.CONFLICT and not result.details.get("revisions")
    if stale and action.previews and request.htmx:
        record = load_record(scope, ui, pk)
        if record is not None:
            return conflict_response(request, scope, ui, record, op, action, form)
    if not result.ok:
        return outcome(request, result, back=back, extra=_clash(scope, result))
    if preview:
        return preview_response(request, scope, ui, op, result)
    if pk == UNWRITTEN and result.id is not None:
        pk = result.id  # the document this first op created
    if result.status == Status.DELETED:
        return _forgotten(request, scope, ui, pk, result)
    if request.POST.get("shown_in") == "review":
        return queue_response(request, scope)
    if timeline:
        return timeline_response(request, scope, ui, pk, result)
    return _render_panel(request, scope, ui, pk, result)


def _clash(scope: AgentScope, result: WriteResult) -> dict[str, Any]:
    """The later revisions an undo ran into, by the versions the history shows them with."""
    named = result.details.get("revisions") if result.status == Status.CONFLICT else None
    if not named:
        return {}
    versions = revision_versions(scope.agent, named)
    return {"clash": [(pk, *versions[pk]) for pk in named if pk in versions]}


def _forgotten(
    request: HttpRequest, scope: AgentScope, ui: SurfaceUI, pk: int, result: WriteResult
) -> HttpResponse:
    """A forgotten record is found in its history, which can restore it."""
    message = f"Deleted {ui.label.lower()} {pk}; it can be restored here. {result.message}"
    messages.success(request, message.strip())
    target = history_url(scope, ui, pk)
    return HttpResponseClientRedirect(target) if request.htmx else redirect(target)
