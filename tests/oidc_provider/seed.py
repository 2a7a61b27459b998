"""Create the provider's database, its users and groups, and memoryadmin's client."""

from __future__ import annotations

import os
import sys

import django
from django.core.management import call_command


def main(redirect_uri: str, client_id: str, client_secret: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.oidc_provider.settings")
    django.setup()
    from django.contrib.auth.models import Group, User
    from oauth2_provider.models import Application

    call_command("migrate", verbosity=0)
    people = {
        "alice": ["memoryadmin-admins"],
        "bob": ["rockbot-editors", "patrol-viewers"],
        "carol": [],
        "mallory": [],
    }
    for username, groups in people.items():
        user = User.objects.create_user(
            username, f"{username}@example.org", "provider-password", first_name=username.title()
        )
        for name in groups:
            user.groups.add(Group.objects.get_or_create(name=name)[0])
    Application.objects.create(
        name="memoryadmin",
        client_id=client_id,
        client_secret=client_secret,
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=redirect_uri,
        algorithm=Application.RS256_ALGORITHM,
        skip_authorization=True,
    )


if __name__ == "__main__":
    main(*sys.argv[1:4])
