from __future__ import annotations

from django.apps import AppConfig
from django.conf import settings
from django.contrib.auth.signals import user_logged_in


class MemoryadminConfig(AppConfig):
    """The project as an app: the doors' and the installation's management commands
    (`mcp_stdio`, `ensure_admin`) and the first administrator's password file."""

    name = "memoryadmin"
    verbose_name = "memoryadmin"

    def ready(self) -> None:
        # Imported here: they reach models, which are not ready at import time.
        from memoryadmin.hosting.first_admin import forget_on_first_login
        from memoryadmin.settings.app import settle_text_limits

        settle_text_limits(settings)

        user_logged_in.connect(forget_on_first_login, dispatch_uid="memoryadmin.first_admin")
