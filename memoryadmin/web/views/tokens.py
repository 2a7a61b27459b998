"""Agent tokens: create one (its secret is shown once), list them, revoke one."""

from __future__ import annotations

import datetime as dt

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from memoryadmin.web.access import AgentScope, agent_view
from memoryadmin.web.forms import TokenForm
from memoryadmin.web.views.common import form_refusal, outcome
from stores.models import AgentToken
from stores.services import token_create, token_revoke


def _tokens_context(scope: AgentScope, **extra) -> dict:
    return {
        "scope": scope,
        "agent": scope.agent,
        "tokens": list(AgentToken.objects.filter(agent=scope.agent).select_related("created_by")),
        "form": TokenForm(),
        **extra,
    }


@require_GET
@agent_view
def token_list(request: HttpRequest, scope: AgentScope) -> HttpResponse:
    return render(request, "web/tokens.html", _tokens_context(scope))


@require_POST
@agent_view
def token_new(request: HttpRequest, scope: AgentScope) -> HttpResponse:
    back = reverse("web:tokens", args=[scope.agent.name])
    form = TokenForm(request.POST)
    if not form.is_valid():
        return outcome(request, form_refusal(form), back=back)
    days = form.cleaned_data["expires_in_days"]
    result = token_create(
        actor=scope.actor,
        agent=scope.agent,
        name=form.cleaned_data["name"],
        read_only=form.cleaned_data["read_only"],
        expires_at=timezone.now() + dt.timedelta(days=days) if days else None,
    )
    if not result.ok:
        return outcome(request, result, back=back)
    # The secret exists only in this response: it is never stored and never shown again.
    context = _tokens_context(scope, created=result.record, raw=result.details["token"])
    response = render(request, "web/tokens.html#tokens", context)
    response["Cache-Control"] = "no-store"
    return response


@require_POST
@agent_view
def token_revoke_view(request: HttpRequest, scope: AgentScope, token_id: int) -> HttpResponse:
    back = reverse("web:tokens", args=[scope.agent.name])
    token = get_object_or_404(AgentToken, pk=token_id, agent=scope.agent)
    result = token_revoke(actor=scope.actor, token=token)
    if not result.ok:
        return outcome(request, result, back=back)
    if not request.htmx:
        return redirect(back)
    return render(request, "web/tokens.html#tokens", _tokens_context(scope, revoked=token))
