"""The list of every surface: live search, filters, sorting, pagination and bulk actions."""

from __future__ import annotations

from typing import Any

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from memoryadmin.web.access import AgentScope, agent_view
from memoryadmin.web.forms import ListFilterForm
from memoryadmin.web.ops import BulkForm, bulk_form
from memoryadmin.web.selectors import effective_sort, memory_categories, record_list
from memoryadmin.web.surfaces import SurfaceUI, surface_ui
from memoryadmin.web.views.common import (
    form_refusal,
    http_status,
    page_or_part,
    refused_post,
)
from memoryadmin.web.views.records import document_page
from stores.engine.results import WriteResult
from stores.models import Subject
from stores.selectors.changes import change_head
from stores.selectors.filters import SHARED_SUBJECT
from stores.selectors.revisions import pending_counts, pending_ids
from stores.services.reviews import revision_approve

PAGE_SIZE = 25


def _list_context(
    request: HttpRequest, scope: AgentScope, ui: SurfaceUI, params: Any
) -> dict[str, Any]:
    form = ListFilterForm(params)
    # Filters that do not parse (a search past the query limit, a NUL, importance "abc")
    # are refused, not dropped: a dropped filter listed every record as if it matched.
    refused = None if form.is_valid() else form_refusal(form)
    if refused is None:
        records = record_list(ui, scope.agent, form.cleaned_data)
    else:
        records = ui.spec.model._default_manager.none()
    filters = form.cleaned_data if refused is None else {}
    page = Paginator(records, PAGE_SIZE).get_page(params.get("page"))
    rows = list(page.object_list)
    pending = pending_counts(scope.agent, ui.key, [row.pk for row in rows])
    query = params.copy()
    query.pop("page", None)
    for name in ("csrfmiddlewaretoken", "ids", "action", "importance"):
        query.pop(name, None)
    context: dict[str, Any] = {
        "scope": scope,
        "agent": scope.agent,
        "ui": ui,
        "form": form,
        "page": page,
        "rows": [(row, pending.get(row.pk, 0)) for row in rows],
        "querystring": query.urlencode(),
        "list_url": reverse("web:record_list", args=[scope.agent.name, ui.key]),
        "sorts": ui.sort_choices,
        "query": filters.get("q") or "",
        "current_sort": effective_sort(ui, filters),
        # The sort the select shows: the one asked for, else the default choice ("").
        "chosen_sort": filters.get("sort") if filters.get("sort") in ui.sorts else "",
        "bulk_actions": bulk_form(ui.key)().bulk_entries() if scope.can_write else None,
        "refused": refused,
        # Where the agent's feed stood as the page was made: newer changes are announced.
        "live_after": change_head(scope.agent),
    }
    if "category" in ui.filters and ui.spec.store_policy:
        # Long-term memory's categories are few and chosen from a menu; others are typed.
        context["categories"] = memory_categories(scope.agent)
    if "subject" in ui.filters:
        context["subjects"] = list(
            Subject.objects.filter(agent=scope.agent).only("display_name", "external_id")
        )
        context["shared_subject"] = SHARED_SUBJECT
    return context


@require_GET
@agent_view
def record_list_view(request: HttpRequest, scope: AgentScope, surface: str) -> HttpResponse:
    ui = surface_ui(surface)
    if not ui.listed:
        return document_page(request, scope, ui)
    context = _list_context(request, scope, ui, request.GET)
    status = 200 if context["refused"] is None else http_status(context["refused"])
    return page_or_part(request, "web/record_list.html", "results", context, status)


def _bulk_one(scope: AgentScope, ui: SurfaceUI, pk: int, form: BulkForm) -> list[WriteResult]:
    """The chosen op on record `pk`, called as every door calls it; or its approvals."""
    op = form.op()
    if op is not None:
        values = form.values()
        return [
            op.call(agent=scope.agent, actor=scope.actor, values=values, surface_key=ui.key, ref=pk)
        ]
    return [
        revision_approve(agent=scope.agent, revision_id=revision_id, actor=scope.actor)
        for revision_id in pending_ids(scope.agent, surface=ui.key, record_id=pk)
    ]


@require_POST
@agent_view
def record_bulk(request: HttpRequest, scope: AgentScope, surface: str) -> HttpResponse:
    """Apply one action to the selected records, each through the service; report per record."""
    ui = surface_ui(surface)
    back = reverse("web:record_list", args=[scope.agent.name, ui.key])
    form = bulk_form(ui.key)(request.POST)
    if (refused_response := refused_post(request, scope, form, back=back)) is not None:
        return refused_response
    done: list[int] = []
    refused: list[tuple[int, WriteResult]] = []
    for pk in form.cleaned_data["ids"]:
        results = _bulk_one(scope, ui, pk, form)
        failures = [result for result in results if not result.ok]
        if failures:
            refused.append((pk, failures[0]))
        elif results:
            done.append(pk)
    context = _list_context(request, scope, ui, request.POST)
    context["bulk"] = {
        "action": form.action_label(),
        "done": done,
        "refused": refused,
        "untouched": len(form.cleaned_data["ids"]) - len(done) - len(refused),
    }
    if not request.htmx:
        return redirect(back)
    return render(request, "web/record_list.html#results", context)
