from __future__ import annotations

from django.apps import AppConfig


class StoresConfig(AppConfig):
    name = "stores"
    verbose_name = "Memory stores"
    default_auto_field = "django.db.models.BigAutoField"
