"""Reading webhooks: an agent's, one of them, its delivery log, the ones with work due."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from django.db.models import F, Max, OuterRef, Q, QuerySet, Subquery

from stores.models import Agent, Change, Webhook, WebhookDelivery


def agent_webhooks(agent: Agent) -> list[Webhook]:
    return list(Webhook.objects.filter(agent=agent).select_related("created_by"))


def agent_webhook(agent: Agent, webhook_id: int) -> Webhook | None:
    """Webhook `webhook_id` if it is one of `agent`'s (another agent's is not found)."""
    return Webhook.objects.filter(agent=agent, pk=webhook_id).first()


def enabled_webhook_ids(agent_ids: Iterable[int]) -> list[int]:
    """The enabled webhooks of these agents: one query for a burst of writes by many."""
    return list(
        Webhook.objects.filter(agent_id__in=list(agent_ids), enabled=True)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def delivery_log(webhook: Webhook, *, limit: int) -> list[WebhookDelivery]:
    """The webhook's latest attempts, newest first."""
    return list(WebhookDelivery.objects.filter(webhook=webhook).order_by("-id")[:limit])


def due_webhooks(now: dt.datetime) -> QuerySet[Webhook]:
    """Enabled webhooks behind their agent's feed, not held by a worker, with no retry
    waiting for a later time: what a sweep delivers."""
    head = Subquery(
        Change.objects.filter(agent_id=OuterRef("agent_id"))
        .values("agent_id")
        .annotate(head=Max("id"))
        .values("head")[:1]
    )
    return (
        Webhook.objects.filter(enabled=True)
        .filter(Q(leased_until__isnull=True) | Q(leased_until__lt=now))
        .filter(Q(retry_at__isnull=True) | Q(retry_at__lte=now))
        .annotate(head=head)
        .filter(head__gt=F("cursor"))
    )
