"""The review queue: what agents wrote while the agent's review mode is "review everything"."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from memoryadmin.web.access import AgentScope, HtmxHttpRequest, agent_view
from memoryadmin.web.forms import ReviewActionForm, ReviewModeForm, ScanPolicyForm
from memoryadmin.web.rendering import DiffBudget, diff_pieces, fields_changed, page_budget
from memoryadmin.web.views.common import (
    form_refusal,
    outcome,
    page_or_part,
    refused_post,
    swap_into,
)
from stores.engine.doorscan import shown_masked
from stores.engine.results import WriteResult
from stores.models import Revision
from stores.selectors.revisions import live_refs, pending_ids, pending_revisions
from stores.services.agents import SCAN_POLICIES, agent_update
from stores.services.reviews import agent_set_review_mode, review_revert, revision_approve

PAGE_SIZE = 50


def _queue_context(
    request: HttpRequest, scope: AgentScope, *, report: dict[str, Any] | None = None
) -> dict[str, Any]:
    page = Paginator(pending_revisions(scope.agent), PAGE_SIZE).get_page(request.GET.get("page"))
    rows = list(page.object_list)
    alive = live_refs(scope.agent, rows)
    budget = page_budget()
    return {
        "scope": scope,
        "agent": scope.agent,
        "page": page,
        "entries": [_entry(row, alive, budget) for row in rows],
        "mode_form": ReviewModeForm(initial={"review_mode": scope.agent.review_mode}),
        "scan_form": ScanPolicyForm(
            initial={name: getattr(scope.agent, name) for name in SCAN_POLICIES}
        ),
        "report": report,
    }


def _entry(row: Revision, alive: set[tuple[str, int]], budget: DiffBudget) -> dict[str, Any]:
    """One pending revision as the queue shows it: credentials and personal data the scan
    finds are masked (a write held for them is judged without its value on screen)."""
    before, found_before = shown_masked(row.before_text)
    after, found_after = shown_masked(row.after_text)
    return {
        "revision": row,
        "alive": (row.surface, row.record_id) in alive,
        "diff": diff_pieces(before, after, collapse=True, budget=budget)
        if before != after
        else None,
        "masked": list(dict.fromkeys(found_before + found_after)),
        "fields": fields_changed(row),
    }


@require_GET
@agent_view
def review_queue(request: HttpRequest, scope: AgentScope) -> HttpResponse:
    return page_or_part(request, "web/review.html", "queue", _queue_context(request, scope))


@require_POST
@agent_view
def review_act(request: HttpRequest, scope: AgentScope) -> HttpResponse:
    """Approve or revert one or many pending revisions, each through the service."""
    back = reverse("web:review", args=[scope.agent.name])
    form = ReviewActionForm(request.POST, pending=pending_ids(scope.agent))
    if (refused_response := refused_post(request, scope, form, back=back)) is not None:
        return refused_response
    action = form.cleaned_data["action"]
    done: list[int] = []
    refused: list[tuple[int, WriteResult]] = []
    for revision_id in form.cleaned_data["revisions"]:
        if action == "approve":
            result = revision_approve(agent=scope.agent, revision_id=revision_id, actor=scope.actor)
        else:
            result = review_revert(agent=scope.agent, revision_id=revision_id, actor=scope.actor)
        if result.ok:
            done.append(revision_id)
        else:
            refused.append((revision_id, result))
    report = {"action": dict(ReviewActionForm.ACTIONS)[action], "done": done, "refused": refused}
    if not request.htmx:
        return redirect(back)
    return render(request, "web/review.html#queue", _queue_context(request, scope, report=report))


def queue_response(request: HtmxHttpRequest, scope: AgentScope) -> HttpResponse:
    """After a revert previewed from the queue and applied: the queue, saying it was done."""
    back = reverse("web:review", args=[scope.agent.name])
    if not request.htmx:
        return redirect(back)
    reverted = int(request.POST["revision_id"])
    report = {"action": dict(ReviewActionForm.ACTIONS)["revert"], "done": [reverted], "refused": []}
    context = _queue_context(request, scope, report=report)
    return swap_into(render(request, "web/review.html#queue", context), "#queue")


def _agent_setting(
    request: HttpRequest,
    scope: AgentScope,
    form: forms.Form,
    apply: Callable[[dict[str, Any]], WriteResult],
) -> HttpResponse:
    """One of the agent's settings the review page offers: the form checked, then applied."""
    back = reverse("web:review", args=[scope.agent.name])
    if not form.is_valid():
        return outcome(request, form_refusal(form), back=back)
    return outcome(request, apply(form.cleaned_data), back=back)


@require_POST
@agent_view
def review_mode(request: HttpRequest, scope: AgentScope) -> HttpResponse:
    return _agent_setting(
        request,
        scope,
        ReviewModeForm(request.POST),
        lambda values: agent_set_review_mode(
            agent=scope.agent, actor=scope.actor, review_mode=values["review_mode"]
        ),
    )


@require_POST
@agent_view
def scan_policy(request: HttpRequest, scope: AgentScope) -> HttpResponse:
    """What the door's scan does with credentials and personal data this agent is sent."""
    return _agent_setting(
        request,
        scope,
        ScanPolicyForm(request.POST),
        lambda values: agent_update(actor=scope.actor, agent=scope.agent, values=values),
    )
