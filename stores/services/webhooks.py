"""Webhooks: an agent's changes delivered to URLs after they commit, in order, at least once.

Managing them takes a caller who may change the agent's memory: the agent's write token, a
person with write access, or a maintainer; never a read-only token or a viewer (a webhook
URL, e.g. a Discord one, is itself a secret).

Delivery reads the agent's change feed from the webhook's own cursor, so what goes out is
exactly what committed, in commit order (so in order per record), and nothing is lost while
a worker or the receiver is down: the cursor moves past a change only once it was delivered
or given up on. A change is retried with exponential backoff on a network error, a 5xx, 408
or 429, never on another 4xx, and later changes wait for it. After MAX_FAILURES changes in a
row were given up on, the webhook is disabled, with the reason, until someone enables it.
A write only schedules this after its commit (`after_commit`); no delivery ever runs inside
one, so a dead receiver never slows or fails a write.
"""

from __future__ import annotations

import base64
import datetime as dt
import logging
import secrets
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError
from django.db.models import F, Q
from django.utils import timezone

from stores import metrics
from stores.editing import Status
from stores.engine.actors import Actor
from stores.engine.aftercommit import after_commit
from stores.engine.results import WriteResult
from stores.models import Agent, Revision, Webhook, WebhookDelivery
from stores.selectors.changes import SUGGESTION, SUGGESTION_EVENTS, change_head, changes_after
from stores.selectors.revisions import erased_revisions
from stores.selectors.webhooks import agent_webhook, due_webhooks
from stores.surfaces import SURFACES
from stores.webhooks import outbound, payloads, sealing

logger = logging.getLogger("memoryadmin.webhooks")

EVENT_STATUSES = ("created", "updated", "deleted", "invalidated", "reverted")
ALL_EVENTS = "*"
MAX_EVENTS = 20
MAX_NAME = 100
MAX_URL = 2000
# Changes read per page while delivering, and delivered per run before yielding.
PAGE = 50
RUN = 200


def _config() -> dict[str, Any]:
    return settings.MEMORYADMIN["WEBHOOKS"]


# --- who may manage them ------------------------------------------------------------------


def manage_refusal(actor: Actor, agent: Agent) -> WriteResult | None:
    """None if `actor` may list, add, change and delete `agent`'s webhooks; else the refusal."""
    if not actor.can_see(agent):
        return WriteResult(status=Status.NOT_FOUND, message=f"No agent {agent.name!r}.")
    if not actor.can_write(agent):
        return WriteResult(
            status=Status.FORBIDDEN,
            message="Webhooks are managed with the agent's write token or by a person with "
            "write access; this caller may only read.",
        )
    return None


def _traced(actor: Actor, agent: Agent, op: str, result: WriteResult) -> WriteResult:
    logger.info(
        "%s %s: webhook %s by %s",
        op,
        result.status,
        result.id,
        actor.label,
        extra={"op": op, "status": str(result.status), "agent": agent.name, "actor": actor.label},
    )
    return result


def _invalid(message: str) -> WriteResult:
    return WriteResult(status=Status.INVALID, message=message)


def _known(surface: str, status: str) -> bool:
    """Whether `<surface>.<status>` names events there are (either may be `*`)."""
    if surface == SUGGESTION:
        return status in (*SUGGESTION_EVENTS, ALL_EVENTS)
    return surface in (*SURFACES, ALL_EVENTS) and status in (*EVENT_STATUSES, ALL_EVENTS)


def clean_events(events: list[str] | None) -> list[str]:
    """The event patterns, checked: `*`, or `<surface>.<status>` where either may be `*`, or
    `suggestion.<event>`."""
    if not events:
        return [ALL_EVENTS]
    if not isinstance(events, list) or len(events) > MAX_EVENTS:
        raise ValueError(f"events must be a list of at most {MAX_EVENTS} patterns.")
    cleaned: list[str] = []
    for pattern in events:
        if not isinstance(pattern, str):
            raise ValueError("Each event pattern is a string such as memory.* or *.deleted.")
        pattern = pattern.strip()
        surface, _dot, status = pattern.partition(".")
        valid = pattern == ALL_EVENTS or (_dot and _known(surface, status))
        if not valid:
            raise ValueError(
                f"{pattern!r} is not an event pattern: use *, or <surface>.<status> with "
                f"surface one of {', '.join(SURFACES)} and status one of "
                f"{', '.join(EVENT_STATUSES)} (either may be *), e.g. memory.* or *.deleted, "
                f"or suggestion.<event> with event one of {', '.join(SUGGESTION_EVENTS)} or *."
            )
        if pattern not in cleaned:
            cleaned.append(pattern)
    return cleaned


def matches(events: list[str], event: str) -> bool:
    surface, _dot, status = event.partition(".")
    for pattern in events:
        if pattern == ALL_EVENTS:
            return True
        want_surface, _dot, want_status = pattern.partition(".")
        if want_surface in (surface, ALL_EVENTS) and want_status in (status, ALL_EVENTS):
            return True
    return False


def _destination(url: str) -> tuple[str, str | None]:
    """`url` as it goes on the wire, and why it cannot receive webhooks, as far as can be
    told before sending (or None).

    Names resolve again at each delivery, which checks their addresses then.
    """
    if len(url) > MAX_URL:
        return url, f"The URL is longer than {MAX_URL} characters."
    try:
        origin = outbound.check_url(url)
    except outbound.Refused as refusal:
        return url, str(refusal)
    wire = outbound.build_url(origin)
    host = origin[1]
    if not _config()["ALLOW_PRIVATE"]:
        try:
            literal = outbound.public_address(host)
        except ValueError:
            return wire, None  # a name, not an address
        if not literal:
            return wire, (
                f"{host} is a loopback, private or link-local address; webhooks reach only "
                "public addresses (MEMORYADMIN_WEBHOOK_ALLOW_PRIVATE=true lifts this)."
            )
    return wire, None


def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


# --- managing them ------------------------------------------------------------------------


def webhook_create(
    *,
    actor: Actor,
    agent: Agent,
    url: str,
    events: list[str] | None = None,
    format: str = Webhook.Format.STANDARD,
    name: str = "",
) -> WriteResult:
    """Add a webhook that hears of the agent's changes from now on.

    A standard webhook's signing secret is in `details["secret"]`: this answer is the only
    place it is ever shown.
    """
    refused = manage_refusal(actor, agent)
    if refused is not None:
        return _traced(actor, agent, "webhook_create", refused)
    url, problem = _destination((url or "").strip())
    if format not in Webhook.Format.values:
        problem = f"format must be one of {', '.join(Webhook.Format.values)}."
    if len(name or "") > MAX_NAME:
        problem = f"The name is longer than {MAX_NAME} characters."
    try:
        patterns = clean_events(events)
    except ValueError as error:
        problem = str(error)
    if problem is not None:
        return _traced(actor, agent, "webhook_create", _invalid(problem))
    secret = new_secret() if format == Webhook.Format.STANDARD else ""
    webhook = Webhook.objects.create(
        agent=agent,
        name=(name or "").strip(),
        url=url,
        events=patterns,
        format=format,
        secret=sealing.seal(secret),
        cursor=change_head(agent),
        created_by=actor.user if actor.kind == "user" else None,
    )
    details: dict[str, Any] = {"webhook": webhook_data(webhook)}
    if secret:
        details["secret"] = secret
    result = WriteResult(
        status=Status.CREATED,
        message="Webhook added; it hears of changes committed from now on."
        + (" Keep the secret: it is not shown again." if secret else ""),
        id=webhook.pk,
        details=details,
        record=webhook,
    )
    return _traced(actor, agent, "webhook_create", result)


def _find(actor: Actor, agent: Agent, webhook_id: int, op: str) -> Webhook | WriteResult:
    refused = manage_refusal(actor, agent)
    if refused is not None:
        return _traced(actor, agent, op, refused)
    webhook = agent_webhook(agent, webhook_id)
    if webhook is None:
        missing = WriteResult(status=Status.NOT_FOUND, message=f"No webhook {webhook_id}.")
        return _traced(actor, agent, op, missing)
    return webhook


def webhook_delete(*, actor: Actor, agent: Agent, webhook_id: int) -> WriteResult:
    """Remove a webhook and its delivery log; nothing more goes out to it."""
    found = _find(actor, agent, webhook_id, "webhook_delete")
    if isinstance(found, WriteResult):
        return found
    found.delete()
    result = WriteResult(status=Status.DELETED, message="Webhook removed.", id=webhook_id)
    return _traced(actor, agent, "webhook_delete", result)


def webhook_set_enabled(
    *, actor: Actor, agent: Agent, webhook_id: int, enabled: bool
) -> WriteResult:
    """Switch a webhook off, or on again: it then resumes where it stopped, failures forgotten."""
    found = _find(actor, agent, webhook_id, "webhook_set_enabled")
    if isinstance(found, WriteResult):
        return found
    if found.enabled == enabled:
        unchanged = WriteResult(
            status=Status.NO_CHANGE,
            message=f"The webhook is already {'enabled' if enabled else 'disabled'}.",
            id=found.pk,
            record=found,
        )
        return _traced(actor, agent, "webhook_set_enabled", unchanged)
    values: dict[str, Any] = {"enabled": enabled}
    if enabled:
        values.update(
            disabled_reason="", disabled_at=None, consecutive_failures=0, attempt=0, retry_at=None
        )
    else:
        values.update(disabled_reason=f"Disabled by {actor.label}.", disabled_at=timezone.now())
    Webhook.objects.filter(pk=found.pk).update(**values)
    found.refresh_from_db()
    if enabled:
        after_commit(agent.pk)
    result = WriteResult(
        status=Status.UPDATED,
        message="Webhook enabled; it resumes where it stopped." if enabled else "Webhook disabled.",
        id=found.pk,
        details={"webhook": webhook_data(found)},
        record=found,
    )
    return _traced(actor, agent, "webhook_set_enabled", result)


def mask_url(url: str) -> str:
    """The URL as lists show it: scheme, host and the start of the path (tokens stay hidden)."""
    try:
        scheme, host, port, path = outbound.check_url(url)
    except outbound.Refused:
        return "…"
    default = outbound.SCHEMES[scheme] == port
    shown = path if len(path) <= 12 else path[:12] + "…"
    return f"{scheme}://{host}{'' if default else f':{port}'}{shown}"


def webhook_data(webhook: Webhook) -> dict[str, Any]:
    """A webhook as the API and the shell show it (never its secret)."""
    return {
        "id": webhook.pk,
        "name": webhook.name,
        "url": mask_url(webhook.url),
        "events": webhook.events,
        "format": webhook.format,
        "enabled": webhook.enabled,
        "disabled_reason": webhook.disabled_reason,
        "consecutive_failures": webhook.consecutive_failures,
        "created_at": webhook.created_at.isoformat() if webhook.created_at else None,
    }


# --- delivering ---------------------------------------------------------------------------


@dataclass
class DeliveryRun:
    """What one run of a webhook's deliveries did, and when it wants to run again."""

    delivered: int = 0
    given_up: int = 0
    skipped: int = 0
    # The change after the cursor failed and waits until then.
    retry_at: dt.datetime | None = None
    # It stopped at RUN changes with more to send: run again now.
    more: bool = False
    # Another worker holds the webhook, it is disabled, or a retry is not due yet (then
    # `retry_at` says when it is).
    busy: bool = False


def backoff(attempt: int) -> dt.timedelta:
    """How long after failed attempt `attempt` (1, 2, …) the next one waits: doubling."""
    config = _config()
    seconds = config["BACKOFF_SECONDS"] * 2 ** (attempt - 1)
    return dt.timedelta(seconds=min(seconds, config["MAX_BACKOFF_SECONDS"]))


def _lease_seconds() -> float:
    # Enough for one attempt, renewed before each: a crashed worker's hold runs out.
    return _config()["TIMEOUT"] * (outbound.MAX_REDIRECTS + 1) + 30


def _take(webhook_id: int, now: dt.datetime) -> str | None:
    lease = secrets.token_hex(8)
    taken = (
        Webhook.objects.filter(pk=webhook_id, enabled=True)
        .filter(Q(leased_until__isnull=True) | Q(leased_until__lt=now))
        .filter(Q(retry_at__isnull=True) | Q(retry_at__lte=now))
        .update(lease=lease, leased_until=now + dt.timedelta(seconds=_lease_seconds()))
    )
    return lease if taken else None


def _held(webhook_id: int, lease: str):
    return Webhook.objects.filter(pk=webhook_id, lease=lease)


def webhook_deliver(webhook_id: int) -> DeliveryRun:
    """Send what the webhook has not had yet, in feed order, until done, a retry or RUN.

    Safe to call from several workers at once: one holds the webhook, the others return
    `busy` at once.
    """
    run = DeliveryRun()
    now = timezone.now()
    lease = _take(webhook_id, now)
    if lease is None:
        run.busy = True
        # Not due yet (a timer fired early, or a write came meanwhile): say when it is.
        waiting = Webhook.objects.filter(pk=webhook_id, enabled=True, retry_at__gt=now)
        run.retry_at = waiting.values_list("retry_at", flat=True).first()
        return run
    try:
        _deliver(webhook_id, lease, run)
    finally:
        _held(webhook_id, lease).update(lease="", leased_until=None)
        _prune_log(webhook_id)
    return run


def _deliver(webhook_id: int, lease: str, run: DeliveryRun) -> None:
    webhook = Webhook.objects.select_related("agent").get(pk=webhook_id)
    while run.delivered + run.given_up < RUN:
        page = changes_after(webhook.agent, after=webhook.cursor, limit=PAGE)
        if not page.items:
            if page.position > webhook.cursor:  # only changes webhooks never send (decay)
                _held(webhook_id, lease).update(cursor=page.position)
            return
        # A change whose text was erased before it went out is cancelled, never sent.
        erased = erased_revisions(item.get("revision") for item in page.items)
        for item, position in zip(page.items, page.positions, strict=True):
            if item.get("revision") in erased or not matches(
                webhook.events, payloads.event_type(item)
            ):
                run.skipped += 1
                _held(webhook_id, lease).update(cursor=position)
                webhook.cursor = position
                continue
            if not _attempt(webhook, lease, item, position, run):
                return
        if len(page.items) < PAGE:
            return
    run.more = True


def _attempt(
    webhook: Webhook, lease: str, item: dict[str, Any], position: int, run: DeliveryRun
) -> bool:
    """Try the change once; True to go on with the next one."""
    config = _config()
    now = timezone.now()
    attempt = webhook.attempt + 1
    _held(webhook.pk, lease).update(leased_until=now + dt.timedelta(seconds=_lease_seconds()))
    message = _message(webhook, item, now)
    answer = outbound.post(
        webhook.url,
        message.body,
        message.headers,
        timeout=config["TIMEOUT"],
        allow_private=config["ALLOW_PRIVATE"],
    )
    retrying = not answer.ok and answer.retryable and attempt < config["MAX_ATTEMPTS"]
    outcome = (
        WebhookDelivery.Outcome.DELIVERED
        if answer.ok
        else WebhookDelivery.Outcome.RETRYING
        if retrying
        else WebhookDelivery.Outcome.FAILED
    )
    metrics.WEBHOOK_DELIVERIES.labels(outcome=outcome).inc()
    try:
        _log(webhook, item, position, attempt, now, answer, outcome)
    except IntegrityError:  # the webhook was deleted meanwhile: nothing more to send
        return False
    if answer.ok:
        run.delivered += 1
        _held(webhook.pk, lease).update(
            cursor=position, attempt=0, retry_at=None, consecutive_failures=0
        )
        webhook.cursor, webhook.attempt, webhook.consecutive_failures = position, 0, 0
        return True
    if retrying:
        run.retry_at = now + backoff(attempt)
        _held(webhook.pk, lease).update(attempt=attempt, retry_at=run.retry_at)
        return False
    run.given_up += 1
    failures = webhook.consecutive_failures + 1
    values: dict[str, Any] = {
        "cursor": position,
        "attempt": 0,
        "retry_at": None,
        "consecutive_failures": F("consecutive_failures") + 1,
    }
    if failures >= config["MAX_FAILURES"]:
        values.update(
            enabled=False,
            disabled_at=now,
            disabled_reason=f"Disabled after {failures} changes in a row could not be "
            f"delivered; the last ({payloads.event_type(item)}, {payloads.named(item)}, "
            f"attempt {attempt}): {answer.error or f'HTTP {answer.status}'}",
        )
        logger.warning("webhook %s disabled: %s", webhook.pk, values["disabled_reason"])
    _held(webhook.pk, lease).update(**values)
    webhook.cursor, webhook.attempt, webhook.consecutive_failures = position, 0, failures
    return failures < config["MAX_FAILURES"]


def _log(
    webhook: Webhook,
    item: dict[str, Any],
    position: int,
    attempt: int,
    now: dt.datetime,
    answer: outbound.Answer,
    outcome: str,
) -> None:
    WebhookDelivery.objects.create(
        webhook=webhook,
        change_id=position,
        revision_id=item["revision"],
        event=payloads.event_type(item),
        attempt=attempt,
        at=now,
        duration_ms=answer.duration_ms,
        http_status=answer.status,
        outcome=outcome,
        error=answer.error,
    )


def _message(webhook: Webhook, item: dict[str, Any], now: dt.datetime) -> payloads.Message:
    if webhook.format == Webhook.Format.DISCORD:
        texts = Revision.objects.filter(pk=item["revision"]).only("before_text", "after_text")
        revision = texts.first() if item["revision"] is not None else None
        text = ""
        if revision is not None:
            deleted = item["status"] == Status.DELETED
            text = revision.before_text if deleted else revision.after_text
        return payloads.discord(item, text=text, agent=str(webhook.agent))
    return payloads.standard(item, secret=sealing.unseal(webhook.secret), now=now)


def _prune_log(webhook_id: int) -> None:
    keep = _config()["LOG_KEEP"]
    oldest_kept = (
        WebhookDelivery.objects.filter(webhook_id=webhook_id)
        .order_by("-id")
        .values_list("id", flat=True)[keep - 1 : keep]
    )
    cutoff = next(iter(oldest_kept), None)
    if cutoff is not None:
        WebhookDelivery.objects.filter(webhook_id=webhook_id, id__lt=cutoff).delete()


def webhooks_sweep() -> dict[str, int]:
    """Deliver whatever is due and was not delivered after its commit (a worker or the
    process stopped, the broker was down, a retry's task was lost)."""
    totals = {"webhooks": 0, "delivered": 0, "given_up": 0}
    for webhook_id in list(due_webhooks(timezone.now()).values_list("pk", flat=True)):
        totals["webhooks"] += 1
        while True:
            run = webhook_deliver(webhook_id)
            totals["delivered"] += run.delivered
            totals["given_up"] += run.given_up
            if not run.more:
                break
    return totals
