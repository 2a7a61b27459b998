"""Background work: Celery's broker, how tasks run, and the periodic passes of beat."""

from __future__ import annotations

from memoryadmin.settings.environment import env, env_float, env_int, env_text

# With no broker, tasks run in-process (the embedded default).
CELERY_TASK_ALWAYS_EAGER = not env("BROKER_URL")
# An eager task never reaches a broker, but Celery still opens a producer to learn the
# serializer; with no broker named, kombu logged "No hostname was supplied" at every
# write. The in-memory transport, named with a host, is never used and logs nothing.
CELERY_BROKER_URL = env_text("BROKER_URL", "memory://localhost/")
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_TASK_TIME_LIMIT = 300
CELERY_TASK_SOFT_TIME_LIMIT = 240
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_RESULT_BACKEND = env("RESULT_BACKEND", env("BROKER_URL"))
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Workers log through Django's LOGGING (JSON in production) instead of Celery's own format.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # A task a killed worker held is handed out again after this long; the sweep finds
    # its records sooner.
    "visibility_timeout": env_int("BROKER_VISIBILITY_TIMEOUT", 3600),
}
# An edit must not wait long on a broker that is down: the sweep re-embeds what it missed.
_brief_retries = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2}
CELERY_TASK_PUBLISH_RETRY_POLICY = _brief_retries
# The result backend (Redis too) subscribes to each task's result as it is sent; its own
# default retries a dead Redis for ~20 s, which an edit would wait through.
CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS = {"retry_policy": _brief_retries}
CELERY_BROKER_CONNECTION_TIMEOUT = env_float("BROKER_CONNECTION_TIMEOUT", 2)


def _every(task: str, interval_variable: str, default_seconds: float) -> dict[str, object]:
    """A periodic pass: `task` every MEMORYADMIN_<interval_variable> seconds."""
    return {"task": task, "schedule": env_float(interval_variable, default_seconds)}


# Celery beat (production, with a broker): the periodic passes, intervals in seconds.
CELERY_BEAT_SCHEDULE = {
    "sweep-stale-embeddings": _every("stores.tasks.sweep_stale_embeddings", "SWEEP_INTERVAL", 600),
    "decay-memories": _every("stores.tasks.decay_memories", "DECAY_INTERVAL", 86400),
    "purge-expired-working-memory": _every(
        "stores.tasks.purge_expired_working_memory", "EXPIRY_INTERVAL", 60
    ),
    # What a write's commit did not get out (a stopped worker or process, a lost retry) goes
    # out at the next sweep.
    "deliver-webhooks": _every("stores.tasks.sweep_webhooks", "WEBHOOK_SWEEP_INTERVAL", 60),
    # Every agent's memories compared again: what the pass after each write missed (a
    # memory written before its neighbours were embedded), and suggestions gone stale.
    "suggest": _every("stores.tasks.suggest_all_agents", "SUGGEST_INTERVAL", 86400),
    # Large stores' common words, counted for recall's weights.
    "term-shares": _every("stores.tasks.count_common_terms", "TERM_SHARES_INTERVAL", 3600),
}
