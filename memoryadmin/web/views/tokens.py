"""Agent tokens: create one (its secret is shown once), list them, revoke one."""

from __future__ import annotations

import datetime as dt
import json
import shlex
import sys

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from memoryadmin.web.access import AgentScope, agent_view
from memoryadmin.web.forms import TokenForm
from memoryadmin.web.views.common import form_refusal, outcome, secret_response
from stores.models import AgentToken
from stores.services.agents import token_create, token_revoke

# What the snippets show until a token is created (its secret is filled in then).
TOKEN_PLACEHOLDER = "PASTE_THE_TOKEN_HERE"


def connection_snippets(request: HttpRequest, raw: str | None) -> list[dict[str, str]]:
    """Ready-to-paste ways for an agent to connect with a token: REST, the tools endpoint,
    MCP over HTTP and MCP on stdio (the same token opens all four)."""
    token = raw or TOKEN_PLACEHOLDER
    base = request.build_absolute_uri("/").rstrip("/")
    auth = f"Authorization: Bearer {token}"
    stdio_env = {"MEMORYADMIN_TOKEN": token}
    if "sqlite" in settings.DATABASES["default"]["ENGINE"]:
        # The stdio server opens the database itself: the embedded default's is here.
        stdio_env["MEMORYADMIN_DATA_DIR"] = str(settings.DATA_DIR)
    header = shlex.quote(auth)

    def at(path: str) -> str:
        return shlex.quote(base + path)

    rest = f"curl -s -H {header} {at('/api/v1/memories/?q=paris')}"
    tools = "\n".join(
        [
            f"curl -s -H {header} {at('/api/v1/tools/')}",
            f"curl -s -X POST -H {header} -H 'Content-Type: application/json' \\",
            f"""     -d '{{"query": "paris"}}' {at("/api/v1/tools/recall_memories/")}""",
        ]
    )
    return [
        {
            "key": "rest",
            "title": "REST API",
            "note": "Every record op under /api/v1/; see /api/docs/.",
            "text": rest,
        },
        {
            "key": "tools",
            "title": "Tools endpoint",
            "note": "The tool definitions to hand a model, and a call of one.",
            "text": tools,
        },
        {
            "key": "mcp-http",
            "title": "MCP over HTTP",
            "note": "For an MCP client's mcpServers settings.",
            "text": json.dumps(
                {
                    "mcpServers": {
                        "memoryadmin": {
                            "type": "http",
                            "url": f"{base}/mcp/",
                            "headers": {"Authorization": f"Bearer {token}"},
                        }
                    }
                },
                indent=2,
            ),
        },
        {
            "key": "mcp-stdio",
            "title": "MCP on stdio",
            "note": "For a client on this machine: it starts the server itself.",
            "text": json.dumps(
                {
                    "mcpServers": {
                        "memoryadmin": {
                            "command": sys.executable,
                            "args": [str(settings.BASE_DIR / "manage.py"), "mcp_stdio"],
                            "env": stdio_env,
                        }
                    }
                },
                indent=2,
            ),
        },
    ]


def _tokens_context(scope: AgentScope, request: HttpRequest, **extra) -> dict:
    return {
        "scope": scope,
        "agent": scope.agent,
        "tokens": list(AgentToken.objects.filter(agent=scope.agent).select_related("created_by")),
        "form": TokenForm(),
        "snippets": connection_snippets(request, extra.get("raw")),
        "placeholder": TOKEN_PLACEHOLDER,
        **extra,
    }


@require_GET
@agent_view
def token_list(request: HttpRequest, scope: AgentScope) -> HttpResponse:
    return render(request, "web/tokens.html", _tokens_context(scope, request))


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
    context = _tokens_context(scope, request, created=result.record, raw=result.details["token"])
    return secret_response(request, "web/tokens.html#tokens", context)


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
    return render(request, "web/tokens.html#tokens", _tokens_context(scope, request, revoked=token))
