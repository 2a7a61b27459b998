"""The suggestions inbox: suspect pairs side by side, settled through the services."""

from __future__ import annotations

from typing import Any

from django import forms
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from memoryadmin.web.access import AgentScope, HtmxHttpRequest, agent_view
from memoryadmin.web.rendering import diff_pieces, page_budget
from memoryadmin.web.surfaces import SURFACE_UI
from memoryadmin.web.views.common import outcome, page_or_part, read_only_refusal, refused_post
from stores.editing import text_sha256
from stores.engine.results import WriteResult
from stores.models import Memory, Suggestion
from stores.selectors.revisions import records_sources
from stores.selectors.suggestions import suggestion_rows, suggestions_of
from stores.services.suggestions import suggestion_accept, suggestion_dismiss
from stores.surfaces import MEMORY

PAGE_SIZE = 20


class SettleForm(forms.Form):
    ACTIONS = (
        ("keep", "Keep this one"),
        ("preview", "Preview"),
        ("dismiss", "Keep both"),
    )
    action = forms.ChoiceField(choices=ACTIONS)
    keep = forms.IntegerField(required=False, min_value=1)
    content = forms.CharField(required=False, strip=False)


def _inbox_context(
    request: HtmxHttpRequest, scope: AgentScope, *, report: dict[str, Any] | None = None
) -> dict[str, Any]:
    kind = request.GET.get("kind") or request.POST.get("kind") or ""
    if kind not in Suggestion.Kind.values:
        kind = ""
    found = suggestions_of(scope.agent, kind=kind or None, status=Suggestion.State.OPEN)
    rows = suggestion_rows(list(found[:PAGE_SIZE]))
    texts = dict(
        Memory.objects.filter(
            pk__in=[record["id"] for row in rows for record in row["records"]]
        ).values_list("pk", "content")
    )
    sources = records_sources(MEMORY.key, texts)
    budget = page_budget()
    for row in rows:
        for record in row["records"]:
            record["text"] = texts.get(record["id"], "")
            # The page shows every text in full: what it showed is the reader's proof.
            record["sha256"] = text_sha256(record["text"])
            record["source"] = sources.get(record["id"])
        first, second = row["records"][0], row["records"][1]
        row["diff"] = diff_pieces(first["text"], second["text"], budget=budget)
        row["keep"] = row["proposal"].get("keep", first["id"])
        row["merged"] = row["proposal"].get("content") or next(
            (r["text"] for r in row["records"] if r["id"] == row["keep"]), first["text"]
        )
    return {
        "scope": scope,
        "agent": scope.agent,
        "memories": SURFACE_UI[MEMORY.key],
        "rows": rows,
        "count": found.count(),
        "kind": kind,
        "kinds": Suggestion.Kind.choices,
        "report": report,
    }


@require_GET
@agent_view
def suggestion_inbox(request: HtmxHttpRequest, scope: AgentScope) -> HttpResponse:
    return page_or_part(request, "web/suggestions.html", "inbox", _inbox_context(request, scope))


@require_POST
@agent_view
def suggestion_settle(
    request: HtmxHttpRequest, scope: AgentScope, suggestion_id: int
) -> HttpResponse:
    """Keep one record (merging a duplicate, superseding a conflict's other), preview that
    as the service's dry run, or keep both (dismiss): one service call."""
    back = reverse("web:suggestions", args=[scope.agent.name])
    form = SettleForm(request.POST)
    if (refused := refused_post(request, scope, form, back=back)) is not None:
        return refused
    action = form.cleaned_data["action"]
    result: WriteResult
    if action == "dismiss":
        result = suggestion_dismiss(
            agent=scope.agent, actor=scope.actor, suggestion_id=suggestion_id
        )
    else:
        content = form.cleaned_data["content"] or None
        result = suggestion_accept(
            agent=scope.agent,
            actor=scope.actor,
            suggestion_id=suggestion_id,
            keep=form.cleaned_data["keep"],
            content=content,
            expected_sha256=request.POST.get(f"sha256-{form.cleaned_data['keep']}") or None,
            dry_run=action == "preview",
        )
    if not request.htmx:
        return redirect(back)
    if action == "preview":
        return _preview(request, scope, result)
    report = {"suggestion": suggestion_id, "result": result}
    return render(
        request, "web/suggestions.html#inbox", _inbox_context(request, scope, report=report)
    )


def _preview(request: HtmxHttpRequest, scope: AgentScope, result: WriteResult) -> HttpResponse:
    """What keeping one would do, worded as a preview: the kept memory's would-be text and its
    diff from today's, and what becomes of the others. A refusal is shown as any other."""
    if not result.ok:
        return outcome(request, result, back=reverse("web:suggestions", args=[scope.agent.name]))
    kept = result.details["kept"]
    today = Memory.objects.filter(pk=kept, agent=scope.agent).values_list("content", flat=True)
    before = today.first() or ""
    after = result.details["text"] or ""
    context = {
        "result": result,
        "kept": kept,
        "others": result.details["others"],
        "text": after,
        "diff": diff_pieces(before, after, budget=page_budget()) if before != after else None,
        "merges": result.details["others_become"] == "merged",
    }
    return render(request, "web/partials/_suggestion_preview.html", context)


@require_POST
@agent_view
def suggestion_merge_exact(request: HtmxHttpRequest, scope: AgentScope) -> HttpResponse:
    """Merge every open exact duplicate (the same words, score 1), keeping the older."""
    back = reverse("web:suggestions", args=[scope.agent.name])
    if not scope.can_write:
        return outcome(request, read_only_refusal(), back=back)
    exact = suggestions_of(scope.agent, kind=Suggestion.Kind.DUPLICATE, status="open").filter(
        score__gte=1.0
    )
    results = [
        suggestion_accept(agent=scope.agent, actor=scope.actor, suggestion_id=pk)
        for pk in exact.values_list("pk", flat=True)
    ]
    merged = sum(result.ok for result in results)
    report = {"merged": merged, "refused": len(results) - merged}
    if not request.htmx:
        return redirect(back)
    return render(
        request, "web/suggestions.html#inbox", _inbox_context(request, scope, report=report)
    )
