"""The first administrator's password is written down once, privately, and removed once used."""

from __future__ import annotations

import io
import stat
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse

from tests.factories import UserFactory


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def first_admin(settings, tmp_path, db):
    settings.DATA_DIR = tmp_path
    call_command("ensure_admin", stdout=io.StringIO())
    password_file = tmp_path / "initial-admin-password"
    return password_file, password_file.read_text().strip()


def test_the_first_password_is_saved_privately(first_admin):
    password_file, password = first_admin

    assert mode(password_file) == 0o600
    assert get_user_model().objects.get(username="admin").check_password(password)


def test_the_first_password_file_goes_at_the_administrators_first_login(client, first_admin):
    password_file, password = first_admin

    response = client.post(
        reverse("login"), {"username": "admin", "password": password}, follow=True
    )

    assert response.context["user"].username == "admin"
    assert not password_file.exists()
    assert "was removed" in response.content.decode()


def test_another_persons_login_leaves_the_first_password_file(client, first_admin):
    password_file, _password = first_admin

    client.force_login(UserFactory())

    assert password_file.exists()


def test_the_first_password_file_goes_once_the_password_was_changed(first_admin, capsys):
    password_file, _password = first_admin
    admin = get_user_model().objects.get(username="admin")
    admin.set_password("a new password nobody wrote down")
    admin.save()

    call_command("ensure_admin")

    assert not password_file.exists()
    assert "no longer works" in capsys.readouterr().out


def test_a_password_chosen_in_the_environment_is_neither_printed_nor_saved(
    settings, tmp_path, db, monkeypatch, capsys
):
    settings.DATA_DIR = tmp_path
    monkeypatch.setenv("MEMORYADMIN_ADMIN_PASSWORD", "chosen by the operator")

    call_command("ensure_admin")

    assert get_user_model().objects.get(username="admin").check_password("chosen by the operator")
    assert "chosen by the operator" not in capsys.readouterr().out
    assert not (tmp_path / "initial-admin-password").exists()
