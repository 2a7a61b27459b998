"""Claims of the test provider, and the faults a test asks it to make (the `mode` file)."""

from __future__ import annotations

import base64
import json
import time

from django.conf import settings
from oauth2_provider.oauth2_validators import OAuth2Validator

MODES = ("", "tampered", "wrong_audience", "expired")


def claimed_name(username: str) -> str:
    """The `preferred_username` the provider gives its user: their username, unless the test
    gave them another (the `names` file, a JSON object), as a provider lets a user choose."""
    path = settings.STATE / "names"
    names = json.loads(path.read_text()) if path.exists() else {}
    return names.get(username, username)


def mode() -> str:
    path = settings.STATE / "mode"
    return path.read_text().strip() if path.exists() else ""


class GroupsValidator(OAuth2Validator):
    # Every claim in the ID token and at userinfo, whatever scopes were granted.
    oidc_claim_scope = None

    def get_additional_claims(self, request):
        user = request.user
        return {
            "preferred_username": claimed_name(user.username),
            "email": user.email,
            "name": user.get_full_name(),
            "groups": sorted(user.groups.values_list("name", flat=True)),
        }

    def get_id_token_dictionary(self, token, token_handler, request):
        claims, expiration = super().get_id_token_dictionary(token, token_handler, request)
        if mode() == "wrong_audience":
            claims["aud"] = "another-client"
        elif mode() == "expired":
            claims["iat"] = int(time.time()) - 7200
            claims["exp"] = int(time.time()) - 3600
        return claims, expiration

    def finalize_id_token(self, id_token, token, token_handler, request):
        signed = super().finalize_id_token(id_token, token, token_handler, request)
        if mode() != "tampered":
            return signed
        # The signature of the real claims over a payload that makes the user an administrator.
        header, payload, signature = signed.split(".")
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        claims["groups"] = [*claims.get("groups", []), "memoryadmin-admins"]
        forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
        return f"{header}.{forged}.{signature}"
