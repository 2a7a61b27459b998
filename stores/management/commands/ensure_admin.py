"""Create the first administrator of a fresh install, once, and say how to log in."""

from __future__ import annotations

import os
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create an 'admin' superuser if there is none, and print its credentials location."

    def handle(self, *args, **options) -> None:
        users = get_user_model().objects
        password_file = settings.DATA_DIR / "initial-admin-password"
        if users.filter(is_superuser=True).exists():
            hint = f" (first password in {password_file})" if password_file.exists() else ""
            self.stdout.write(f"Administrator exists{hint}.")
            return
        password = os.environ.get("MEMORYADMIN_ADMIN_PASSWORD") or secrets.token_urlsafe(12)
        users.create_superuser("admin", "admin@localhost", password)
        password_file.parent.mkdir(parents=True, exist_ok=True)
        password_file.write_text(password + "\n")
        password_file.chmod(0o600)
        self.stdout.write(
            f"Created user 'admin' with password {password} (saved in {password_file})."
        )
