"""The agents a person may see, and each agent's dashboard."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from memoryadmin.web.access import AgentScope, agent_view, visible_agents
from memoryadmin.web.forms import ReviewModeForm
from memoryadmin.web.selectors import dashboard_counts, memory_store_counts, with_snippets
from stores.selectors.changes import change_head
from stores.selectors.revisions import (
    agent_revisions,
    live_refs,
    pending_revisions,
    with_pending_counts,
)

RECENT_CHANGES = 15
REVIEW_PREVIEW = 8


@require_GET
@login_required
def agent_index(request: HttpRequest) -> HttpResponse:
    agents = list(with_pending_counts(visible_agents(request.user)))
    if len(agents) == 1 and not request.GET.get("all"):
        return redirect("web:dashboard", agents[0].name)
    return render(request, "web/agent_index.html", {"agents": agents})


@require_GET
@agent_view
def dashboard(request: HttpRequest, scope: AgentScope) -> HttpResponse:
    agent = scope.agent
    recent = list(with_snippets(agent_revisions(agent, with_body=False))[:RECENT_CHANGES])
    pending = list(with_snippets(pending_revisions(agent, with_body=False))[:REVIEW_PREVIEW])
    alive = live_refs(agent, [*recent, *pending])
    counts = dashboard_counts(agent)
    context = {
        "scope": scope,
        "agent": agent,
        "counts": counts,
        "stores": memory_store_counts(agent),
        "stale_total": sum(count.stale or 0 for count in counts),
        "pending_total": sum(count.pending for count in counts),
        "recent": [(row, (row.surface, row.record_id) in alive) for row in recent],
        "pending": [(row, (row.surface, row.record_id) in alive) for row in pending],
        "mode_form": ReviewModeForm(initial={"review_mode": agent.review_mode}),
        # Where the agent's feed stood as the page was made: newer changes are announced.
        "live_after": change_head(agent),
    }
    return render(request, "web/dashboard.html", context)
