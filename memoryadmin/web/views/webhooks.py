"""An agent's webhooks in the browser: add one (its secret shown once), list them, read one's
delivery log with the reason it was disabled, switch it off and on, delete it."""

from __future__ import annotations

from typing import Any

from django import forms
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from memoryadmin.web.access import AgentScope, agent_view
from memoryadmin.web.views.common import form_refusal, outcome, secret_response
from stores.models import Webhook
from stores.selectors.webhooks import agent_webhook, agent_webhooks, delivery_log
from stores.services.webhooks import (
    MAX_NAME,
    MAX_URL,
    manage_refusal,
    mask_url,
    webhook_create,
    webhook_delete,
    webhook_set_enabled,
)

LOG_SHOWN = 100


class WebhookForm(forms.Form):
    """What a person types to add a webhook; the service checks it and saves it."""

    url = forms.CharField(max_length=MAX_URL)
    events = forms.CharField(required=False, max_length=1000)
    format = forms.ChoiceField(choices=Webhook.Format.choices)
    name = forms.CharField(required=False, max_length=MAX_NAME)

    def event_patterns(self) -> list[str]:
        return self.cleaned_data["events"].replace(",", " ").split()


def _list_url(scope: AgentScope) -> str:
    return reverse("web:webhooks", args=[scope.agent.name])


def _list_context(scope: AgentScope, **extra: Any) -> dict[str, Any]:
    refused = manage_refusal(scope.actor, scope.agent)
    webhooks = [] if refused else agent_webhooks(scope.agent)
    return {
        "scope": scope,
        "agent": scope.agent,
        "refused": refused,
        "webhooks": [(webhook, mask_url(webhook.url)) for webhook in webhooks],
        "formats": Webhook.Format.choices,
        **extra,
    }


@require_GET
@agent_view
def webhook_list(request: HttpRequest, scope: AgentScope) -> HttpResponse:
    return render(request, "web/webhooks.html", _list_context(scope))


@require_POST
@agent_view
def webhook_new(request: HttpRequest, scope: AgentScope) -> HttpResponse:
    back = _list_url(scope)
    form = WebhookForm(request.POST)
    if not form.is_valid():
        return outcome(request, form_refusal(form), back=back)
    result = webhook_create(
        actor=scope.actor,
        agent=scope.agent,
        url=form.cleaned_data["url"],
        events=form.event_patterns(),
        format=form.cleaned_data["format"],
        name=form.cleaned_data["name"],
    )
    if not result.ok:
        return outcome(request, result, back=back)
    # The secret is in this response only: the page never shows it again.
    context = _list_context(scope, created=result.record, secret=result.details.get("secret"))
    return secret_response(request, "web/webhooks.html#webhooks", context)


@require_GET
@agent_view
def webhook_detail(request: HttpRequest, scope: AgentScope, webhook_id: int) -> HttpResponse:
    refused = manage_refusal(scope.actor, scope.agent)
    if refused is not None:
        return outcome(request, refused, back=_list_url(scope))
    webhook = agent_webhook(scope.agent, webhook_id)
    if webhook is None:
        raise Http404(f"No webhook {webhook_id}.")
    context = {
        "scope": scope,
        "agent": scope.agent,
        "webhook": webhook,
        "shown_url": mask_url(webhook.url),
        "deliveries": delivery_log(webhook, limit=LOG_SHOWN),
    }
    return render(request, "web/webhook_detail.html", context)


@require_POST
@agent_view
def webhook_switch(request: HttpRequest, scope: AgentScope, webhook_id: int) -> HttpResponse:
    detail = reverse("web:webhook_detail", args=[scope.agent.name, webhook_id])
    result = webhook_set_enabled(
        actor=scope.actor,
        agent=scope.agent,
        webhook_id=webhook_id,
        enabled=request.POST.get("enabled") == "true",
    )
    if not result.ok:
        return outcome(request, result, back=detail)
    return _go(request, detail)


@require_POST
@agent_view
def webhook_remove(request: HttpRequest, scope: AgentScope, webhook_id: int) -> HttpResponse:
    result = webhook_delete(actor=scope.actor, agent=scope.agent, webhook_id=webhook_id)
    if not result.ok:
        return outcome(
            request, result, back=reverse("web:webhook_detail", args=[scope.agent.name, webhook_id])
        )
    return _go(request, _list_url(scope))


def _go(request: HttpRequest, url: str) -> HttpResponse:
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
