"""The first administrator's password file: written once by ensure_admin, removed once used.

The password sits in plain text beside the database so the person who installed memoryadmin
can read it; it leaves the disk when that administrator first logs in (user_logged_in,
connected in MemoryadminConfig.ready) or, at the next `ensure_admin`, once it no longer works.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.base_user import AbstractBaseUser
from django.http import HttpRequest

from memoryadmin.hosting.private_files import write_private

INITIAL_ADMIN_USERNAME = "admin"


def initial_password_file() -> Path:
    return Path(settings.DATA_DIR) / "initial-admin-password"


def save_initial_password(password: str) -> Path:
    path = initial_password_file()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_private(path, password + "\n")
    return path


def read_initial_password() -> str | None:
    try:
        return initial_password_file().read_text().strip()
    except FileNotFoundError:
        return None


def forget_initial_password() -> bool:
    """Remove the file; True if there was one."""
    try:
        initial_password_file().unlink()
    except FileNotFoundError:
        return False
    return True


def forget_on_first_login(
    sender: Any, request: HttpRequest | None, user: AbstractBaseUser, **kwargs: Any
) -> None:
    """user_logged_in: the administrator has used the password, so the file goes."""
    if user.get_username() != INITIAL_ADMIN_USERNAME or not forget_initial_password():
        return
    if request is not None:
        messages.info(
            request,
            f"You logged in with the first password: {initial_password_file()} was removed. "
            "Change the password in the admin (Change password) unless you keep it elsewhere.",
            fail_silently=True,
        )
