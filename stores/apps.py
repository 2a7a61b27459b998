from __future__ import annotations

from django.apps import AppConfig
from django.contrib.auth.signals import user_logged_in
from django.db.models.signals import post_migrate


class StoresConfig(AppConfig):
    name = "stores"
    verbose_name = "Memory stores"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported here: it reaches the user model, which is not ready at import time.
        from stores.first_admin import forget_on_first_login

        post_migrate.connect(_ensure_fulltext, sender=self)
        user_logged_in.connect(forget_on_first_login, dispatch_uid="stores.first_admin")


def _ensure_fulltext(sender, using: str = "default", **kwargs) -> None:
    from django.db import connections

    from stores.dbops import ensure_sqlite_memory_fulltext

    ensure_sqlite_memory_fulltext(connections[using])
