"""What a text op would do, shown before it is applied: its preview, or the conflict with a
write made since the page was loaded. Both come from the service's dry run."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from memoryadmin.web.access import AgentScope
from memoryadmin.web.ops import OpForm, WebOp
from memoryadmin.web.rendering import diff_pieces, hx_vals
from memoryadmin.web.surfaces import SurfaceUI
from memoryadmin.web.views.common import UNWRITTEN, detail_url
from stores.engine.results import WriteResult
from stores.models import VersionedRecord
from stores.selectors.revisions import changes_since, text_at_version


def op_url(scope: AgentScope, ui: SurfaceUI, pk: int, op: str, *, preview: bool = False) -> str:
    name = "web:record_preview" if preview else "web:record_op"
    return reverse(name, args=[scope.agent.name, ui.key, pk, op])


def _confirm_values(request: HttpRequest, version: int) -> dict[str, str]:
    """What the confirm button posts: the previewed op's own values, at `version`."""
    values = {name: value for name, value in request.POST.items() if name != "csrfmiddlewaretoken"}
    return {**values, "expected_version": str(version)}


def preview_response(
    request: HttpRequest, scope: AgentScope, ui: SurfaceUI, op: str, result: WriteResult
) -> HttpResponse:
    """The whole text with the op's change, computed by the service's dry run."""
    before = getattr(result.record, result.details["field"])
    context = {
        "diff": diff_pieces(before, result.details["text"]),
        "result": result,
        # No id: the dry run of a document's first op, which creates it.
        "apply_url": op_url(scope, ui, UNWRITTEN if result.id is None else result.id, op),
        "confirm": hx_vals(_confirm_values(request, result.version)),
        "target": request.htmx.target,
    }
    return render(request, "web/partials/_preview.html", context)


def conflict_response(
    request: HttpRequest,
    scope: AgentScope,
    ui: SurfaceUI,
    record: VersionedRecord,
    op: str,
    action: WebOp,
    form: OpForm,
) -> HttpResponse:
    """Someone changed the record since the page was loaded: show what, and offer to re-apply."""
    loaded_version = form.cleaned_data["expected_version"]
    again = action.call(
        scope=scope, surface=ui.key, pk=record.pk, form=form, dry_run=True, version=record.version
    )
    field = again.details.get("field") or form.cleaned_data.get("field") or ui.text_field
    current = getattr(record, field)
    loaded = text_at_version(scope.agent, ui.key, record.pk, loaded_version, field)
    changes = changes_since(scope.agent, ui.key, record.pk, loaded_version, limit=20)
    context = {
        # The header's version and the text are swapped for the current ones (out of band),
        # so what the person reads beside the conflict is what it is about.
        "agent": scope.agent,
        "ui": ui,
        "title": ui.title(record),
        "field": field,
        "current": current,
        "record": record,
        "loaded_version": loaded_version,
        "changes": changes,
        "changed_diff": diff_pieces(loaded, current) if loaded is not None else None,
        "reapply_diff": diff_pieces(current, again.details["text"]) if again.ok else None,
        "reapply_error": None if again.ok else again,
        "apply_url": op_url(scope, ui, record.pk, op),
        "confirm": hx_vals(_confirm_values(request, record.version)),
        "target": request.htmx.target,
        "reload_url": detail_url(scope, ui, record.pk),
    }
    return render(request, "web/partials/_conflict.html", context, status=409)
