"""Pages that notice changes while they are open, by polling (htmx) a fragment here.

A record's page asks every few seconds whether the record moved past the version it was
loaded with; if so it shows who changed it, when and the diff, before the person applies
anything (an apply would then be refused as a conflict anyway). Lists and the dashboard ask
whether the agent has changes newer than the page. Nothing new answers 204, on which htmx
swaps nothing: a poll that finds nothing costs one indexed query.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from memoryadmin.web.access import AgentScope, agent_view
from memoryadmin.web.rendering import diff_pieces
from memoryadmin.web.surfaces import surface_ui
from stores.opnames import OpName
from stores.selectors.changes import newest_changes
from stores.selectors.revisions import changes_since, latest_version_of, text_at_version
from stores.surfaces import SURFACES

# At most this many changes are listed; the diff covers them all.
SHOWN = 10


def page_poll(request: HttpRequest) -> dict[str, int]:
    """Template context: how many seconds apart an open page asks what changed."""
    return {"live_poll_seconds": settings.MEMORYADMIN["CHANGES"]["PAGE_POLL_SECONDS"]}


def _number(request: HttpRequest, name: str, default: int | None = None) -> int | None:
    value = request.GET.get(name, "")
    return int(value) if value.isdecimal() and len(value) <= 18 else default


def nothing_new() -> HttpResponse:
    return HttpResponse(status=204)


@require_GET
@agent_view
def record_live(request: HttpRequest, scope: AgentScope, surface: str, pk: int) -> HttpResponse:
    """The record's live notice: 204 while it is at the version the page showed last."""
    ui = surface_ui(surface)
    loaded = _number(request, "version")
    if loaded is None:
        return HttpResponse("version: the version the page was loaded with.", status=400)
    seen = _number(request, "seen", loaded)
    latest = latest_version_of(scope.agent, ui.key, pk)
    if latest is None or latest <= seen:
        return nothing_new()
    changes = changes_since(scope.agent, ui.key, pk, loaded, limit=SHOWN)
    before = text_at_version(scope.agent, ui.key, pk, loaded, ui.text_field)
    deleted = changes[-1].op == OpName.FORGET if changes else False
    after = "" if deleted else text_at_version(scope.agent, ui.key, pk, latest, ui.text_field)
    context = {
        "agent": scope.agent,
        "ui": ui,
        "record_id": pk,
        "loaded": loaded,
        "latest": latest,
        "changes": changes,
        "more": latest - loaded > len(changes),
        "deleted": deleted,
        "diff": diff_pieces(before, after, collapse=True)
        if before is not None and after is not None
        else None,
        "live_url": reverse("web:record_live", args=[scope.agent.name, ui.key, pk]),
        "reload_url": reverse(
            "web:record_history" if deleted else "web:record_detail",
            args=[scope.agent.name, ui.key, pk],
        ),
    }
    return render(request, "web/partials/_live_notice.html", context)


@require_GET
@agent_view
def changes_live(request: HttpRequest, scope: AgentScope) -> HttpResponse:
    """What the agent changed since a page was loaded (`after`, a feed position)."""
    after = _number(request, "after")
    if after is None:
        return HttpResponse("after: the feed position the page was loaded at.", status=400)
    seen = _number(request, "seen", after)
    surface = request.GET.get("surface") or None
    if surface is not None and surface not in SURFACES:
        return HttpResponse("surface: a surface key.", status=400)
    newest = newest_changes(scope.agent, after=after, limit=SHOWN + 1, surface=surface)
    if not newest or newest[0].pk <= seen:
        return nothing_new()
    context = {
        "agent": scope.agent,
        "live_after": after,
        "live_surface": surface,
        "seen": newest[0].pk,
        "new_changes": [change.revision for change in newest[:SHOWN]],
        "more": len(newest) > SHOWN,
    }
    return render(request, "web/partials/_live_changes.html", context)
