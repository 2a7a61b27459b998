from __future__ import annotations

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class StoresConfig(AppConfig):
    name = "stores"
    verbose_name = "Memory stores"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        post_migrate.connect(_ensure_triggers, sender=self)
        # The background layer does what the services hand on after a commit; they never
        # import it (it imports them).
        from stores.tasks import connect_handoffs

        connect_handoffs()


def _ensure_triggers(sender, using: str = "default", **kwargs) -> None:
    from django.db import connections

    from stores.dbops import ensure_sqlite_feed_trigger, ensure_sqlite_memory_fulltext

    ensure_sqlite_memory_fulltext(connections[using])
    ensure_sqlite_feed_trigger(connections[using])
