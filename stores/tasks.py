"""Background work: the Celery tasks, and how a committed write's work leaves the request.

Tasks take ids, re-read the records, and call one service each. Every task is idempotent and
safe to run twice or concurrently: re-embedding stores a vector only if the text is unchanged,
decay computes from the row it writes, and expiry re-checks each entry under a lock.

The services hand on what a commit leaves to do through two handoffs (engine.reembed_record,
webhooks.deliver_agent_changes); `connect_handoffs`, run when the stores app is ready, says
they are done here: in a queue of this process (stores.runtime.queues) or by a Celery task.
"""

from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import after_task_publish, task_failure
from django.conf import settings
from django.core.cache import cache
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerUnavailable

from stores import metrics
from stores.engine import aftercommit
from stores.runtime.queues import AfterWriteQueue, RetryingQueue
from stores.selectors import suggestions as found
from stores.selectors.webhooks import enabled_webhook_ids
from stores.services import decay, embeddings, expiry, suggestions, term_shares, webhooks
from stores.surfaces import MEMORY

logger = logging.getLogger("memoryadmin.tasks")


@after_task_publish.connect
def _count_queued(sender: str | None = None, **_: object) -> None:
    metrics.TASKS_QUEUED.labels(task=sender or "unknown").inc()


@task_failure.connect
def _count_failed(sender: object = None, **_: object) -> None:
    metrics.TASKS_FAILED.labels(task=getattr(sender, "name", "unknown")).inc()


@shared_task(
    bind=True,
    # EmbeddingUnavailable is a ConnectionError: a model server that is down is retried with
    # backoff; an answer that can never work (EmbeddingError) is not.
    autoretry_for=(ConnectionError, TimeoutError),
    retry_backoff=True,
    max_retries=5,
    # Nobody reads a re-embed's result; storing it made every edit subscribe to its result
    # key in Redis on the request path (about 1 ms of an edit, bench/edit_path.py).
    ignore_result=True,
)
def reembed_records(self, surface_key: str, record_ids: list[int]) -> dict[str, int]:
    outcome = embeddings.reembed(surface_key, record_ids).as_dict()
    if _suggests_after_write(surface_key):
        _suggest_when_left_alone(surface_key, record_ids)
    return outcome


# A memory whose delayed pass is on its way: its later writes within the wait schedule none
# (a burst of edits costs one pass and one delayed task, not one of each per edit). The cache
# is the broker's Redis wherever the broker is Redis; a worker whose cache is its own process's
# cannot clear a marker another process set, and a marker whose task was lost holds back no
# pass past this many seconds (a pass scheduled twice finds nothing new the second time).
PASS_PENDING = "suggest-pending:{}"
PASS_PENDING_SECONDS = 60


def _suggest_when_left_alone(surface_key: str, record_ids: list[int]) -> None:
    """Schedule the pass of memories just re-embedded for when they have been left alone:
    one delayed task for those with none on its way. A failure costs the suggestions, which
    the periodic pass finds, never the stored vectors."""
    try:
        waiting = [
            memory_id
            for memory_id in record_ids
            if cache.add(PASS_PENDING.format(memory_id), True, PASS_PENDING_SECONDS)
        ]
        if waiting:
            suggest_unless_written_again.apply_async(
                (surface_key, list(found.text_hashes_of(waiting).items())),
                countdown=settings.MEMORYADMIN["SUGGEST_QUIET_SECONDS"],
            )
    except Exception:
        logger.exception("suggestions of %s %s left to the periodic pass", surface_key, record_ids)


@shared_task(ignore_result=True)
def suggest_unless_written_again(surface_key: str, texts: list[tuple[int, str]]) -> None:
    """The suggestion pass of memories a moment after their re-embed, as the worker runs it.

    A memory whose text changed since was written again within the wait: it waits once more,
    from its new text, so a burst of edits of one memory is judged once, after the last. The
    markers go first: a write from here on schedules a pass of its own (a second pass of one
    memory finds nothing new)."""
    memory_ids = [memory_id for memory_id, _ in texts]
    cache.delete_many([PASS_PENDING.format(memory_id) for memory_id in memory_ids])
    current = found.text_hashes_of(memory_ids)
    unchanged = [memory_id for memory_id, text in texts if current.get(memory_id) == text]
    written_again = [memory_id for memory_id, text in texts if current.get(memory_id, text) != text]
    if written_again:
        _suggest_when_left_alone(surface_key, written_again)
    suggest_after_write(surface_key, unchanged)


def _suggests_after_write(surface_key: str) -> bool:
    return surface_key == MEMORY.key and settings.MEMORYADMIN["SUGGEST_AFTER_WRITE"]


def suggest_after_write(surface_key: str, record_ids: list[int]) -> None:
    """The suggestion pass of memories just written, once their new vectors are stored (their
    nearest neighbours are found by them). A failure costs a suggestion, never the write:
    the periodic pass finds it later."""
    if not _suggests_after_write(surface_key):
        return
    for record_id in record_ids:
        try:
            suggestions.suggest_for_memory(record_id)
        except Exception:
            logger.exception("suggestions after the write of memory %s failed", record_id)


@shared_task
def suggest_all_agents() -> dict[str, int]:
    """The whole-agent suggestion pass of every agent: new suggestions of each kind."""
    return dict(suggestions.suggest_everywhere())


@shared_task
def sweep_stale_embeddings() -> dict[str, dict[str, int]]:
    """Re-embed whatever is still stale: edits made while the broker or a worker was down."""
    outcomes = embeddings.reembed_sweep(batch_size=settings.MEMORYADMIN["REEMBED_BATCH_SIZE"])
    return {surface: outcome.as_dict() for surface, outcome in outcomes.items()}


@shared_task
def count_common_terms() -> dict[str, int]:
    """Count the common words of every large store again, for recall's weights."""
    return term_shares.term_shares_refresh().as_dict()


@shared_task
def decay_memories() -> dict[str, float]:
    run = decay.decay_importance(triggered_by="task:decay")
    return {"rows_touched": run.rows_touched, "duration_seconds": run.duration_seconds}


@shared_task
def purge_expired_working_memory() -> dict[str, int]:
    outcome = expiry.working_purge_expired()
    return {"purged": outcome.purged, "batches": outcome.batches}


@shared_task(ignore_result=True)
def deliver_webhook(webhook_id: int, retry: bool = False) -> None:
    """Send the webhook's undelivered changes; schedule itself again for a retry or the rest.

    A run that finds a retry not due yet schedules it only if it is that retry's own task
    (`retry`), come a moment early: writes meanwhile must not pile up tasks for one retry.
    """
    run = webhooks.webhook_deliver(webhook_id)
    if run.more:
        deliver_webhook.delay(webhook_id)
    elif run.retry_at is not None and (retry or not run.busy):
        wait = max(0.0, (run.retry_at - timezone.now()).total_seconds())
        deliver_webhook.apply_async((webhook_id, True), countdown=wait)


@shared_task
def sweep_webhooks() -> dict[str, int]:
    return webhooks.webhooks_sweep()


def enqueue_webhooks(agent_id: int) -> None:
    """After a write's commit: deliver to the agent's webhooks; the answer waits for neither
    the lookup of its webhooks nor the deliveries.

    "thread": the background deliverer looks the agent's webhooks up and sends. "task" with a
    broker: a background thread of this process looks them up and sends their tasks (a burst
    of writes costs one lookup); "task" without one (tests) does both here. What a process
    stopped before sending, or a broker outage, left in the feed, the sweep delivers.
    """
    if settings.MEMORYADMIN["WEBHOOKS"]["DELIVERY"] == "thread":
        background_deliverer.submit_group(agent_id)
    elif settings.CELERY_TASK_ALWAYS_EAGER:
        _send_webhooks(WEBHOOK_AGENTS, [agent_id])
    else:
        background_webhook_sender.submit(WEBHOOK_AGENTS, agent_id)


def _send_webhooks(_group: str, agent_ids: list[int]) -> None:
    for webhook_id in enabled_webhook_ids(agent_ids):
        try:
            deliver_webhook.delay(webhook_id)
        except BrokerUnavailable as error:
            logger.warning(
                "broker unavailable (%s); webhook %s left for the sweep", error, webhook_id
            )


def enqueue_reembed(surface_key: str, record_id: int) -> None:
    """Ask for a re-embed of a committed write; the write's answer never waits for it.

    "thread" (the default without a broker): the model runs in a background thread of this
    process. "task" with a broker: a background thread of this process sends the task, so
    the request spends no broker round trip either; "task" without one (tests) runs the task
    eagerly, here. Whatever a stopped process or a broker outage left stale, the sweep embeds.
    """
    if settings.MEMORYADMIN["REEMBED_AFTER_WRITE"] == "thread":
        background_reembedder.submit(surface_key, record_id)
    elif settings.CELERY_TASK_ALWAYS_EAGER:
        _send_reembed(surface_key, [record_id])
    else:
        background_sender.submit(surface_key, record_id)


def _send_reembed(surface_key: str, record_ids: list[int]) -> None:
    try:
        reembed_records.delay(surface_key, record_ids)
    except BrokerUnavailable as error:
        logger.warning(
            "broker unavailable (%s); %s %s left stale for the sweep",
            *(error, surface_key, record_ids),
        )


def _embed(surface_key: str, record_ids: list[int]) -> None:
    embeddings.reembed(surface_key, record_ids)
    if _suggests_after_write(surface_key):
        for record_id in record_ids:
            background_suggester.submit(surface_key, record_id)


# The embedded default, which has no broker: an eager Celery task ran the model inside the
# request (half a second for one 512-token window on two cores).
background_reembedder = AfterWriteQueue("memoryadmin-reembed", _embed)
# Without a broker the suggestion pass shares the serving process's interpreter with its
# requests, and judging in Python between their statements slowed every answer (by half,
# bench/edit_path.py): it waits for the writes to pause, and a burst of edits of one memory
# is judged once, after the last. With a broker the worker waits as long per memory
# (suggest_unless_written_again).
background_suggester = AfterWriteQueue(
    "memoryadmin-suggest",
    suggest_after_write,
    quiet=lambda: settings.MEMORYADMIN["SUGGEST_QUIET_SECONDS"],
)
# With a broker: the task is sent from here, off the request (about 1 ms of an edit).
background_sender = AfterWriteQueue("memoryadmin-reembed-sender", _send_reembed)
# With a broker: the agents whose writes committed, their webhooks looked up and their
# delivery tasks sent from here, off the request (the lookup was about 1 ms of an edit).
WEBHOOK_AGENTS = "agents"
background_webhook_sender = AfterWriteQueue(
    "memoryadmin-webhook-sender", _send_webhooks, keep_connection=True
)


def _webhooks_of(agent_ids: set[int]) -> list[int]:
    try:
        return enabled_webhook_ids(agent_ids)
    except Exception:  # the changes stay in the feed: the next write or the sweep sends
        logger.exception("webhooks of agents %s: lookup failed", sorted(agent_ids))
        return []


def _deliver_in_thread(webhook_id: int) -> float | None:
    """Send the webhook's undelivered changes; the seconds until it wants to send again."""
    try:
        run = webhooks.webhook_deliver(webhook_id)
    except Exception:  # the changes stay in the feed: the next write or the sweep retries
        logger.exception("webhook %s: delivery failed", webhook_id)
        return None
    if run.more:
        return 0
    if run.retry_at is not None:
        return max(0.0, (run.retry_at - timezone.now()).total_seconds())
    return None


# The embedded default, which has no broker: a Celery task would send inside the request;
# here a write only adds its agent's id to a set, and this thread looks up the agent's
# webhooks. A retry waits for its time (one timer per webhook); what a stopped process had
# not sent stays in the feed, and the periodic sweep sends it.
background_deliverer = RetryingQueue(
    "memoryadmin-webhooks", _deliver_in_thread, expand=_webhooks_of
)


def connect_handoffs() -> None:
    """The services' after-commit work is done here (stores.apps runs this when ready)."""
    aftercommit.reembed_record.connect(enqueue_reembed)
    aftercommit.deliver_agent_changes.connect(enqueue_webhooks)
