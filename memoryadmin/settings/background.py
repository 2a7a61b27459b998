"""Background work: Celery's broker, how tasks run, and the periodic passes of beat."""

from __future__ import annotations

from memoryadmin.settings.environment import env

# With no broker, tasks run in-process (the embedded default).
CELERY_TASK_ALWAYS_EAGER = not env("BROKER_URL")
# An eager task never reaches a broker, but Celery still opens a producer to learn the
# serializer; with no broker named, kombu logged "No hostname was supplied" at every
# write. The in-memory transport, named with a host, is never used and logs nothing.
CELERY_BROKER_URL = env("BROKER_URL") or "memory://localhost/"
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
    "visibility_timeout": int(env("BROKER_VISIBILITY_TIMEOUT", "3600") or 3600),
}
# An edit must not wait long on a broker that is down: the sweep re-embeds what it missed.
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2}
# The result backend (Redis too) subscribes to each task's result as it is sent; its own
# default retries a dead Redis for ~20 s, which an edit would wait through.
CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS = {
    "retry_policy": {"max_retries": 2, "interval_start": 0, "interval_step": 0.2}
}
CELERY_BROKER_CONNECTION_TIMEOUT = float(env("BROKER_CONNECTION_TIMEOUT", "2") or 2)

# Celery beat (production, with a broker): the periodic passes, intervals in seconds.
CELERY_BEAT_SCHEDULE = {
    "sweep-stale-embeddings": {
        "task": "stores.tasks.sweep_stale_embeddings",
        "schedule": float(env("SWEEP_INTERVAL", "600") or 600),
    },
    "decay-memories": {
        "task": "stores.tasks.decay_memories",
        "schedule": float(env("DECAY_INTERVAL", "86400") or 86400),
    },
    "purge-expired-working-memory": {
        "task": "stores.tasks.purge_expired_working_memory",
        "schedule": float(env("EXPIRY_INTERVAL", "60") or 60),
    },
    # What a write's commit did not get out (a stopped worker or process, a lost retry) goes
    # out at the next sweep.
    "deliver-webhooks": {
        "task": "stores.tasks.sweep_webhooks",
        "schedule": float(env("WEBHOOK_SWEEP_INTERVAL", "60") or 60),
    },
    # Every agent's memories compared again: what the pass after each write missed (a
    # memory written before its neighbours were embedded), and suggestions gone stale.
    "suggest": {
        "task": "stores.tasks.suggest_all_agents",
        "schedule": float(env("SUGGEST_INTERVAL", "86400") or 86400),
    },
}
