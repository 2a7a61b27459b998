"""Logins: too many failures lock a username out from that address, with a clear page, on
every login form (the UI's, the admin's, the browsable API's)."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from axes.models import AccessAttempt
from axes.utils import reset
from django.conf import settings
from django.db.models import F
from django.test import AsyncClient
from django.urls import reverse

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"  # tests/factories.py UserFactory
LOCKED_OUT = "Too many failed logins for this username from your address"


@pytest.fixture
def person():
    return UserFactory()


def log_in(client, person, password=PASSWORD, url=None, address="127.0.0.1"):
    return client.post(
        url or reverse("login"),
        {"username": person.username, "password": password},
        REMOTE_ADDR=address,
    )


def logged_in(client) -> bool:
    return "_auth_user_id" in client.session


def fail_until_locked(client, person, **where):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        answer = log_in(client, person, password="wrong", **where)
        assert answer.status_code == 200
        assert answer.context["form"].non_field_errors()  # "did not match", not yet locked
    return log_in(client, person, password="wrong", **where)


def test_wrong_passwords_lock_the_username_out_with_a_message(client, person):
    locked = fail_until_locked(client, person)

    assert locked.status_code == 429
    page = locked.content.decode()
    assert LOCKED_OUT in page
    assert "Try again in 15 minutes" in page
    assert 'action="/accounts/login/"' in page  # the app's own login page, not a bare 403
    # The right password does not get through while locked out.
    answer = log_in(client, person)
    assert answer.status_code == 429
    assert not logged_in(client)


def test_the_lockout_ends_after_the_cool_off(client, person):
    fail_until_locked(client, person)
    # As if the cool-off had passed since the last failure.
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - settings.AXES_COOLOFF_TIME)

    assert log_in(client, person).status_code == 302
    assert logged_in(client)


def test_an_administrator_can_unlock_sooner(client, person):
    fail_until_locked(client, person)

    reset(username=person.username)

    assert log_in(client, person).status_code == 302


def test_the_lockout_holds_for_that_address_only(client, person):
    # Someone guessing elsewhere cannot lock the person out of their own machine.
    fail_until_locked(client, person, address="203.0.113.9")

    assert log_in(client, person, address="127.0.0.1").status_code == 302


def test_a_success_forgets_earlier_failures(client, person):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        log_in(client, person, password="wrong")
    assert log_in(client, person).status_code == 302
    client.logout()

    assert log_in(client, person, password="wrong").status_code == 200  # counting anew


def test_the_admin_login_is_throttled_too(client):
    admin = UserFactory(is_staff=True, is_superuser=True)

    locked = fail_until_locked(client, admin, url=reverse("admin:login"))

    assert locked.status_code == 429
    assert LOCKED_OUT in locked.content.decode()


def test_the_lockout_page_under_asgi(person):
    # Under ASGI axes' middleware runs its async branch, which passes its arguments to the
    # lockout page in another order: the page must not depend on them.
    client = AsyncClient()
    post = async_to_sync(client.post)
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        post(reverse("login"), {"username": person.username, "password": "wrong"})

    locked = post(reverse("login"), {"username": person.username, "password": "wrong"})

    assert locked.status_code == 429
    assert LOCKED_OUT in locked.content.decode()


def test_the_browsable_api_login_is_throttled_too(client, person):
    locked = fail_until_locked(client, person, url="/api/auth/login/")

    assert locked.status_code == 429
    assert LOCKED_OUT in locked.content.decode()
