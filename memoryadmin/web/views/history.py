"""History: every revision of a record with its diff, and revert; agent-wide recent changes."""

from __future__ import annotations

from typing import Any

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from memoryadmin.web.access import AgentScope, agent_view
from memoryadmin.web.rendering import diff_pieces, fields_changed, page_budget
from memoryadmin.web.selectors import with_snippets
from memoryadmin.web.surfaces import SURFACE_UI, SurfaceUI, surface_ui
from memoryadmin.web.views.common import (
    flash_for,
    history_url,
    load_record,
    outcome,
    swap_into,
)
from stores.engine.results import WriteResult
from stores.models import Channel, Revision
from stores.opnames import OpName
from stores.ops.catalog import CATALOG
from stores.selectors.revisions import (
    agent_revision,
    agent_revisions,
    history_of,
    is_redacted,
    live_refs,
)
from stores.services.erasure import SIDES, revision_redact

# Revisions per page of a record's history, newest first.
HISTORY_PAGE_SIZE = 20
# Characters of revision text (before and after) one history page shows inline; the diffs
# of the page's other revisions load on demand (change_detail). With texts of up to 500k
# characters a page of whole diffs ran to 185 MiB; this keeps one under a few MiB.
PAGE_TEXT_BUDGET = 1_000_000
CHANGES_PAGE_SIZE = 50


# What a person finds under an op word beyond the word itself.
OP_FILTER_NOTES = {OpName.FORGET: "forget (deleted records)"}


def _history_context(
    scope: AgentScope,
    ui: SurfaceUI,
    pk: int,
    *,
    page: int = 1,
    flash: dict[str, Any] | None = None,
) -> dict[str, Any]:
    record = load_record(scope, ui, pk)
    offset = (page - 1) * HISTORY_PAGE_SIZE
    revisions = history_of(scope.agent, ui.key, pk, offset=offset, limit=HISTORY_PAGE_SIZE + 1)
    more = len(revisions) > HISTORY_PAGE_SIZE
    revisions = revisions[:HISTORY_PAGE_SIZE]
    budget = page_budget()
    shown = {revision.pk: revision for revision in revisions}
    text_left = PAGE_TEXT_BUDGET
    entries = []
    for revision in revisions:
        cost = len(revision.before_text) + len(revision.after_text)
        deferred = cost > text_left
        text_left -= 0 if deferred else cost
        changed = revision.before_text != revision.after_text and not is_redacted(revision)
        entries.append(
            {
                "revision": revision,
                "deferred": deferred,
                "changed": changed,
                "diff": diff_pieces(
                    revision.before_text, revision.after_text, collapse=True, budget=budget
                )
                if changed and not deferred
                else None,
                "fields": [] if deferred else fields_changed(revision),
                "went_back": _went_back(revision, shown),
                "redactable": any(
                    side not in revision.redacted and getattr(revision, f"{side}_text")
                    for side in SIDES
                ),
            }
        )
    forgotten = (
        revisions[0]
        if page == 1 and record is None and revisions and revisions[0].op == OpName.FORGET
        else None
    )
    return {
        "scope": scope,
        "agent": scope.agent,
        "ui": ui,
        "pk": pk,
        "record": record,
        "title": ui.title(record) if record is not None else f"{ui.label} {pk}",
        "entries": entries,
        "forgotten": forgotten,
        "page": page,
        "older": page + 1 if more else None,
        "newer": page - 1 if page > 1 else None,
        "flash": flash,
    }


def _went_back(revision: Revision, shown: dict[int, Revision]) -> str | None:
    """What a revert or an undo took back, in the versions the timeline shows."""
    ref = revision.reverted_revision
    if ref is None:
        return None
    page = CATALOG[OpName(revision.op)].page
    target = shown.get(ref)
    # A revision older than the page shows is named by its id.
    if target is None:
        return f"{page.went_back} revision {ref}"
    if page.names_change:
        return f"{page.went_back} v{target.version_before} → v{target.version_after}"
    # A revert went back to one side of the revision; the text it wrote tells which.
    to_before = revision.after_text == target.before_text != target.after_text
    return f"{page.went_back} v{target.version_before if to_before else target.version_after}"


@require_GET
@agent_view
def record_history(request: HttpRequest, scope: AgentScope, surface: str, pk: int) -> HttpResponse:
    """Works for records that are gone too: their last revision keeps the text to restore."""
    ui = surface_ui(surface)
    page = request.GET.get("page", "1")
    context = _history_context(scope, ui, pk, page=int(page) if page.isdecimal() else 1)
    if not context["entries"]:
        return render(request, "web/not_found.html", {"agent": scope.agent, "ui": ui}, status=404)
    return render(request, "web/history.html", context)


def timeline_response(
    request: HttpRequest, scope: AgentScope, ui: SurfaceUI, pk: int, result: WriteResult
) -> HttpResponse:
    """After a revert made from the history: the timeline, with the new revision on top."""
    if not request.htmx:
        return redirect(history_url(scope, ui, pk))
    context = _history_context(scope, ui, pk, flash=flash_for(result))
    return swap_into(render(request, "web/history.html#timeline", context), "#timeline")


@require_POST
@agent_view
def redact_revision(
    request: HttpRequest, scope: AgentScope, surface: str, pk: int, revision_id: int
) -> HttpResponse:
    """A person removes a revision's text for good, saying why; the timeline shows the
    tombstone in its place."""
    ui = surface_ui(surface)
    revision = agent_revision(scope.agent, revision_id)
    if revision is None or (revision.surface, revision.record_id) != (ui.key, pk):
        raise Http404("No such revision of this record.")
    asked = request.POST.get("sides", "")
    result = revision_redact(
        agent=scope.agent,
        revision_id=revision_id,
        actor=scope.actor,
        reason=request.POST.get("reason", ""),
        sides=(asked,) if asked in SIDES else SIDES,
    )
    if not result.ok or not getattr(request, "htmx", False):
        return outcome(request, result, back=history_url(scope, ui, pk))
    # The timeline shows the tombstones in place; a redaction makes no version to announce.
    context = _history_context(scope, ui, pk)
    return swap_into(render(request, "web/history.html#timeline", context), "#timeline")


@require_GET
@agent_view
def agent_changes(request: HttpRequest, scope: AgentScope) -> HttpResponse:
    """Every write to the agent's memory, newest first; deleted records stay reachable here."""
    surface = request.GET.get("surface", "")
    channel = request.GET.get("channel", "")
    op = request.GET.get("op", "")
    revisions = with_snippets(
        agent_revisions(
            scope.agent,
            surface=surface if surface in SURFACE_UI else None,
            channel=channel if channel in Channel.values else None,
            op=op or None,
            with_body=False,
        )
    )
    page = Paginator(revisions, CHANGES_PAGE_SIZE).get_page(request.GET.get("page"))
    rows = list(page.object_list)
    alive = live_refs(scope.agent, rows)
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "scope": scope,
        "agent": scope.agent,
        "page": page,
        "rows": [(row, (row.surface, row.record_id) in alive) for row in rows],
        "surfaces": [(key, ui.plural) for key, ui in SURFACE_UI.items()],
        "channels": Channel.choices,
        "ops": [(word.value, OP_FILTER_NOTES.get(word, word.value)) for word in OpName],
        "selected": {"surface": surface, "channel": channel, "op": op},
        "querystring": query.urlencode(),
    }
    return render(request, "web/changes.html", context)


@require_GET
@agent_view
def change_detail(request: HttpRequest, scope: AgentScope, revision_id: int) -> HttpResponse:
    """What one change did, for a row of the dashboard or Changes opened in place: its word
    diff and the fields it changed."""
    revision = agent_revision(scope.agent, revision_id)
    if revision is None:
        raise Http404("No such change.")
    context = {
        "revision": revision,
        "diff": diff_pieces(revision.before_text, revision.after_text, collapse=True)
        if revision.before_text != revision.after_text and not is_redacted(revision)
        else None,
        "fields": fields_changed(revision),
    }
    return render(request, "web/partials/_change_detail.html", context)
