"""The domain's own Prometheus metrics, counted where the domain acts (the edit engine, recall,
webhook deliveries, the task queue), never in each door.

Defined once at import. Under gunicorn each worker is a process: with PROMETHEUS_MULTIPROC_DIR
set before prometheus_client is imported (gunicorn.conf.py sets it), every process writes its
values to files there and a scrape of any worker adds them up
(memoryadmin/hosting/metrics.py).
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

WRITES = Counter(
    "memoryadmin_writes",
    "Writes answered by the edit engine, by op, status word and door.",
    ["op", "status", "door"],
)
REFUSALS = Counter(
    "memoryadmin_refusals",
    "Writes the edit engine refused, by status word.",
    ["status"],
)
RECALL_SECONDS = Histogram(
    "memoryadmin_recall_seconds",
    "Time to answer one recall (search) page.",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)
FEED_WAKE_LAG_SECONDS = Histogram(
    "memoryadmin_feed_wake_lag_seconds",
    "From a change's commit to a waiting feed reader (long poll, MCP subscription) waking.",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
WEBHOOK_DELIVERIES = Counter(
    "memoryadmin_webhook_deliveries",
    "Webhook delivery attempts, by outcome (delivered, retrying, failed).",
    ["outcome"],
)
TASKS_QUEUED = Counter(
    "memoryadmin_tasks_queued",
    "Background tasks sent to the broker, by task name.",
    ["task"],
)
TASKS_FAILED = Counter(
    "memoryadmin_tasks_failed",
    "Background tasks that raised in a worker, by task name.",
    ["task"],
)


def count_write(op: str, door: str, status: str, *, refused: bool) -> None:
    """One answered write: counted by op, status and door, and as a refusal if it was one."""
    WRITES.labels(op=op, status=status, door=door).inc()
    if refused:
        REFUSALS.labels(status=status).inc()
