"""Create the first administrator of a fresh install, once, and say how to log in."""

from __future__ import annotations

import os
import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from memoryadmin.hosting.first_admin import (
    INITIAL_ADMIN_USERNAME,
    forget_initial_password,
    initial_password_file,
    read_initial_password,
    save_initial_password,
)


class Command(BaseCommand):
    help = (
        f"Create an {INITIAL_ADMIN_USERNAME!r} superuser if there is none, and print its "
        "credentials location."
    )

    def handle(self, *args, **options) -> None:
        users = get_user_model().objects
        if users.filter(is_superuser=True).exists():
            self.stdout.write(f"Administrator exists{self._first_password_hint(users)}.")
            return
        chosen = os.environ.get("MEMORYADMIN_ADMIN_PASSWORD")
        if chosen:
            # The operator knows it: it is neither printed (logs) nor written down.
            users.create_superuser(INITIAL_ADMIN_USERNAME, "admin@localhost", chosen)
            self.stdout.write(
                f"Created user {INITIAL_ADMIN_USERNAME!r} with the password from "
                "MEMORYADMIN_ADMIN_PASSWORD."
            )
            return
        password = secrets.token_urlsafe(12)
        users.create_superuser(INITIAL_ADMIN_USERNAME, "admin@localhost", password)
        password_file = save_initial_password(password)
        self.stdout.write(
            f"Created user {INITIAL_ADMIN_USERNAME!r} with password {password} "
            f"(saved in {password_file} until its first login)."
        )

    def _first_password_hint(self, users) -> str:
        password = read_initial_password()
        if password is None:
            return ""
        admin = users.filter(username=INITIAL_ADMIN_USERNAME).first()
        if admin is not None and admin.check_password(password):
            return f" (first password in {initial_password_file()} until its first login)"
        # Changed without a login through the UI (e.g. `manage.py changepassword`): the file
        # only holds a password that no longer works.
        forget_initial_password()
        return f" (its first password no longer works: {initial_password_file()} was removed)"
