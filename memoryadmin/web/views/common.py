"""What the views share: status → HTTP code, outcome fragments, loading a record."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django_htmx.http import reswap, retarget

from memoryadmin.doors.statuses import http_code
from memoryadmin.web.access import AgentScope
from memoryadmin.web.rendering import diff_pieces
from memoryadmin.web.surfaces import SurfaceUI
from stores.editing import Status
from stores.engine import doorscan
from stores.engine.results import WriteResult
from stores.models import VersionedRecord
from stores.selectors.revisions import is_redacted, revision_texts

# The id pages give an agent's one document (rules.md) before its first write: the page shows
# it empty, since a page view writes nothing, and its first op creates it through the engine.
UNWRITTEN = 0


def http_status(result: WriteResult) -> int:
    """The REST API's code for the same status, so a refusal means the same at every door."""
    return http_code(result.status)


def refusal(status: Status, message: str) -> WriteResult:
    return WriteResult(status=status, message=message)


def outcome(
    request: HttpRequest,
    result: WriteResult,
    *,
    back: str,
    extra: dict[str, Any] | None = None,
) -> HttpResponse:
    """A refusal (or a plain success note) as a fragment for htmx, or a message and a redirect;
    `extra` is what the fragment shows beside the result (the revisions in an undo's way)."""
    if not request.htmx:
        level = messages.SUCCESS if result.ok else messages.ERROR
        messages.add_message(request, level, f"{result.status}: {result.message}".strip(": "))
        return redirect(back)
    return render(
        request,
        "web/partials/_outcome.html",
        {"result": result, **resend_despite_scan(request, result), **(extra or {})},
        status=http_status(result),
    )


# The field of a person's "store it anyway" on a write the door's scan refused or held.
STORE_DESPITE_SCAN = "store_despite_scan"
OVERRIDE_REASON = "override_reason"


def resend_despite_scan(request: HttpRequest, result: WriteResult) -> dict[str, Any]:
    """For a write the scan refused: the same form again, to send as a person's override."""
    if result.status != Status.SENSITIVE_DATA or request.method != "POST":
        return {}
    skipped = {"csrfmiddlewaretoken", STORE_DESPITE_SCAN, OVERRIDE_REASON}
    fields = [
        (name, value)
        for name, values in request.POST.lists()
        if name not in skipped
        for value in values
    ]
    return {"resend": fields, "resend_url": request.path}


def scan_override(request: HttpRequest) -> AbstractContextManager[None]:
    """A person's "store it anyway": the engine stores the write and records the override."""
    if request.method != "POST" or not request.POST.get(STORE_DESPITE_SCAN):
        return nullcontext()
    reason = request.POST.get(OVERRIDE_REASON, "").strip()
    return doorscan.overriding(reason or "Stored from the page past the scan.")


def form_refusal(form: Any) -> WriteResult:
    problems = "; ".join(
        f"{name}: {' '.join(errors)}" if name != "__all__" else " ".join(errors)
        for name, errors in form.errors.items()
    )
    return refusal(Status.INVALID, problems or "The form was not filled in correctly.")


def read_only_refusal() -> WriteResult:
    return refusal(Status.FORBIDDEN, "You have read-only access to this agent.")


def refused_post(
    request: HttpRequest, scope: AgentScope, form: Any, *, back: str
) -> HttpResponse | None:
    """What refuses a posted form before anything is written: a read-only caller first, then
    the form's own errors. None when the write may go on."""
    if not scope.can_write:
        return outcome(request, read_only_refusal(), back=back)
    if not form.is_valid():
        return outcome(request, form_refusal(form), back=back)
    return None


def page_or_part(
    request: HttpRequest, template: str, part: str, context: dict[str, Any], status: int = 200
) -> HttpResponse:
    """The whole page, or only its `part` (a partial of the template, the element of that id)
    when htmx asks to swap just that element."""
    htmx = getattr(request, "htmx", None)
    if htmx and htmx.target == part:
        return render(request, f"{template}#{part}", context, status=status)
    return render(request, template, context, status=status)


def load_record(scope: AgentScope, ui: SurfaceUI, pk: int) -> VersionedRecord | None:
    records = ui.spec.model.objects.filter(agent=scope.agent, pk=pk)
    if ui.select_related:
        records = records.select_related(*ui.select_related)
    return records.first()


def require_record(scope: AgentScope, ui: SurfaceUI, pk: int) -> VersionedRecord:
    record = load_record(scope, ui, pk)
    if record is None:
        raise Http404(f"No {ui.key} record {pk}.")
    return record


def flash_for(result: WriteResult) -> dict[str, Any]:
    """What a successful write says on the page: its status, new version and word diff."""
    flash: dict[str, Any] = {"result": result, "diff": None}
    if result.revision is not None:
        revision = revision_texts(result.revision)
        if (
            revision is not None
            and revision.before_text != revision.after_text
            and not is_redacted(revision)
        ):
            flash["diff"] = diff_pieces(revision.before_text, revision.after_text, collapse=True)
    return flash


def secret_response(request: HttpRequest, template: str, context: dict[str, Any]) -> HttpResponse:
    """The one response that shows a new secret: no cache may keep it, since it is never
    stored and never shown again."""
    response = render(request, template, context)
    response["Cache-Control"] = "no-store"
    return response


def swap_into(response: HttpResponse, selector: str) -> HttpResponse:
    """Send a success to another element than the one the form aimed at (errors stay local)."""
    return reswap(retarget(response, selector), "outerHTML")


def detail_url(scope: AgentScope, ui: SurfaceUI, pk: int) -> str:
    return reverse("web:record_detail", args=[scope.agent.name, ui.key, pk])


def history_url(scope: AgentScope, ui: SurfaceUI, pk: int) -> str:
    return reverse("web:record_history", args=[scope.agent.name, ui.key, pk])
