"""The agents a person may see, and each agent's dashboard."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from memoryadmin.web.access import AgentScope, agent_view, visible_agents
from memoryadmin.web.forms import AgentForm, ReviewModeForm
from memoryadmin.web.selectors import dashboard_counts, memory_store_counts, with_snippets
from memoryadmin.web.surfaces import SURFACE_UI
from memoryadmin.web.views.common import form_refusal, http_status
from stores.engine.actors import Actor
from stores.models import Channel
from stores.selectors.changes import change_head
from stores.selectors.revisions import (
    agent_revisions,
    live_refs,
    pending_revisions,
    with_pending_counts,
)
from stores.selectors.suggestions import open_by_kind
from stores.services.agents import agent_create
from stores.surfaces import MEMORY

RECENT_CHANGES = 15
REVIEW_PREVIEW = 8


@require_GET
@login_required
def agent_index(request: HttpRequest) -> HttpResponse:
    agents = list(with_pending_counts(visible_agents(request.user)))
    if len(agents) == 1 and not request.GET.get("all"):
        return redirect("web:dashboard", agents[0].name)
    return render(request, "web/agent_index.html", {"agents": agents})


@require_http_methods(["GET", "POST"])
@login_required
def agent_new(request: HttpRequest) -> HttpResponse:
    """Staff create an agent here (through `agent_create`), then its first token."""
    if not request.user.is_staff:
        raise PermissionDenied("Only staff create agents.")
    form = AgentForm(request.POST or None)
    refused = None
    if request.method == "POST":
        if form.is_valid():
            result = agent_create(
                actor=Actor.for_user(request.user, channel=Channel.UI), **form.cleaned_data
            )
            if result.ok:
                messages.success(
                    request,
                    f"{result.record} is ready. Create its first token below: the agent "
                    "connects with it to the REST API, the tools endpoint and MCP.",
                )
                return redirect("web:tokens", result.record.name)
            refused = result
        else:
            refused = form_refusal(form)
    status = http_status(refused) if refused is not None else 200
    return render(request, "web/agent_new.html", {"form": form, "refused": refused}, status=status)


@require_GET
@agent_view
def dashboard(request: HttpRequest, scope: AgentScope) -> HttpResponse:
    agent = scope.agent
    recent = list(with_snippets(agent_revisions(agent, with_body=False))[:RECENT_CHANGES])
    pending = list(with_snippets(pending_revisions(agent, with_body=False))[:REVIEW_PREVIEW])
    alive = live_refs(agent, [*recent, *pending])
    counts = dashboard_counts(agent)
    suggestions = open_by_kind(agent)
    context = {
        "scope": scope,
        "agent": agent,
        "counts": counts,
        "memories": SURFACE_UI[MEMORY.key],
        "stores": memory_store_counts(agent),
        "stale_total": sum(count.stale or 0 for count in counts),
        "pending_total": sum(count.pending for count in counts),
        "suggestions": suggestions,
        "suggestions_total": sum(count for _kind, _label, count in suggestions),
        "recent": [(row, (row.surface, row.record_id) in alive) for row in recent],
        "pending": [(row, (row.surface, row.record_id) in alive) for row in pending],
        "mode_form": ReviewModeForm(initial={"review_mode": agent.review_mode}),
        # Where the agent's feed stood as the page was made: newer changes are announced.
        "live_after": change_head(agent),
    }
    return render(request, "web/dashboard.html", context)
