"""Sources: the conversations that wrote to an agent, what each wrote, and taking one back.

A take-back is previewed first: the preview is the service's own dry run (every write made
and checked, then rolled back), and the page offers to apply exactly what it showed.
"""

from __future__ import annotations

from collections import Counter
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from memoryadmin.web.access import AgentScope, agent_view
from memoryadmin.web.forms import HoldForm, TakebackForm
from memoryadmin.web.surfaces import SURFACE_UI, SurfaceUI, surface_ui
from memoryadmin.web.views.common import (
    form_refusal,
    outcome,
    refusal,
    refused_post,
)
from stores.errors import ApplicationError
from stores.selectors.sources import (
    SOURCES_PER_PAGE,
    conversation_count,
    conversations,
    records_of_conversation,
    unsourced_held,
)
from stores.services.holds import conversation_hold
from stores.services.takeback import conversation_takeback


@require_GET
@agent_view
def sources_page(request: HttpRequest, scope: AgentScope) -> HttpResponse:
    """Every conversation that wrote, or (`?conversation=`) one of them and its records."""
    conversation = request.GET.get("conversation", "")
    context: dict[str, Any] = {"scope": scope, "agent": scope.agent, "conversation": conversation}
    if conversation:
        found = conversations(scope.agent, conversation=conversation, limit=1)
        context["summary"] = found[0] if found else None
        context["records"] = records = _records(scope, conversation) if found else []
        context["lists"] = _lists(records)
        return render(request, "web/sources.html", context, status=200 if found else 404)
    offset = _offset(request.GET.get("offset"))
    total = conversation_count(scope.agent)
    context.update(
        unsourced_held=unsourced_held(scope.agent),
        conversations=conversations(scope.agent, offset=offset),
        total=total,
        offset=offset,
        previous=max(offset - SOURCES_PER_PAGE, 0) if offset else None,
        following=offset + SOURCES_PER_PAGE if offset + SOURCES_PER_PAGE < total else None,
    )
    return render(request, "web/sources.html", context)


def _offset(value: str | None) -> int:
    return int(value) if value and value.isdecimal() and len(value) < 10 else 0


def _records(scope: AgentScope, conversation: str) -> list[dict[str, Any]]:
    """The records the conversation wrote, each with its label and whether it still exists."""
    written = records_of_conversation(scope.agent, conversation)
    alive: set[tuple[str, int]] = set()
    for key in {record.surface for record in written}:
        ids = [record.record_id for record in written if record.surface == key]
        records: Any = surface_ui(key).spec.model._default_manager
        found = records.filter(agent=scope.agent, pk__in=ids).values_list("pk", flat=True)
        alive |= {(key, pk) for pk in found}
    return [
        {
            "record": record,
            "ui": surface_ui(record.surface),
            "alive": (record.surface, record.record_id) in alive,
        }
        for record in written
    ]


def _lists(records: list[dict[str, Any]]) -> list[tuple[SurfaceUI, int]]:
    """The surface lists that show what the conversation wrote, each with how many records
    of it are still there."""
    alive = Counter(row["ui"].key for row in records if row["alive"])
    return [(ui, count) for ui in SURFACE_UI.values() if ui.listed and (count := alive[ui.key])]


@require_POST
@agent_view
def sources_takeback(request: HttpRequest, scope: AgentScope) -> HttpResponse:
    """Take back a conversation, or (`preview`) show what that would do and offer to apply it."""
    back = reverse("web:sources", args=[scope.agent.name])
    form = TakebackForm(request.POST)
    if (refused_response := refused_post(request, scope, form, back=back)) is not None:
        return refused_response
    preview = form.cleaned_data["preview"]
    try:
        answer = conversation_takeback(
            agent=scope.agent,
            actor=scope.actor,
            conversation=form.cleaned_data["conversation"],
            dry_run=preview,
            anyway=form.cleaned_data["anyway"],
        )
    except ApplicationError as error:
        return outcome(request, refusal(error.status, error.message), back=back)
    # The answer itself says, record by record, what was (or would be) taken back and what
    # was left as it was: it is shown whole, whatever its status.
    context = {"scope": scope, "agent": scope.agent, "answer": answer}
    return render(request, "web/partials/_takeback.html", context)


@require_POST
@agent_view
def sources_hold(request: HttpRequest, scope: AgentScope) -> HttpResponse:
    """Hold a conversation for review (its agents' writes wait in the queue), or trust it again."""
    form = HoldForm(request.POST)
    if not form.is_valid():
        return outcome(
            request, form_refusal(form), back=reverse("web:sources", args=[scope.agent.name])
        )
    conversation = form.cleaned_data["conversation"]
    sources = reverse("web:sources", args=[scope.agent.name])
    back = f"{sources}?{urlencode({'conversation': conversation})}" if conversation else sources
    try:
        held = conversation_hold(
            agent=scope.agent,
            actor=scope.actor,
            conversation=conversation,
            held=form.cleaned_data["held"],
            without_source=form.cleaned_data["without_source"],
        )
    except ApplicationError as error:
        return outcome(request, refusal(error.status, error.message), back=back)
    messages.success(
        request,
        "Its agents' further writes now wait in the review queue."
        if held
        else "Trusted again: its agents' writes no longer wait for review.",
    )
    return redirect(back)
