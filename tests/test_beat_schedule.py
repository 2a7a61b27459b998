"""The periodic passes celery beat schedules are real tasks."""

from __future__ import annotations

from django.conf import settings

from memoryadmin.celery import app


def test_every_scheduled_pass_names_a_registered_task():
    app.loader.import_default_modules()

    scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}

    assert scheduled == {
        "stores.tasks.sweep_stale_embeddings",
        "stores.tasks.decay_memories",
        "stores.tasks.purge_expired_working_memory",
        "stores.tasks.sweep_webhooks",
        "stores.tasks.suggest_all_agents",
        "stores.tasks.count_common_terms",
    }
    assert scheduled <= set(app.tasks)
    assert all(entry["schedule"] > 0 for entry in settings.CELERY_BEAT_SCHEDULE.values())
