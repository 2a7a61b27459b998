"""Single sign-on with OpenID Connect (mozilla-django-oidc), configured by MEMORYADMIN_OIDC_*.

The provider is found from its discovery document (`MEMORYADMIN_OIDC_DISCOVERY_URL`, read once
per process), so three settings point memoryadmin at Keycloak, Okta or Google. The login
uses the authorization code flow with PKCE; state and nonce are checked by
mozilla-django-oidc, and the ID token's signature (the provider's published keys), issuer,
audience and expiry here. A refused token is a failed login, never an error page.

People are created at their first login, as accounts without a password, and known again by
the ID token's issuer and subject (ProviderIdentity), never by the name the provider gives:
a second provider user giving a name already taken here (names that differ only in case or
spaces are one name) is refused, not logged in as its holder. At every login
their groups (the `MEMORYADMIN_OIDC_GROUPS_CLAIM` claim) are read again: a member of a
`MEMORYADMIN_OIDC_STAFF_GROUPS` group is staff, and `MEMORYADMIN_OIDC_AGENT_GROUPS`
(`group=agent:role`) sets their viewer or editor grant on each agent it names, removing a
grant their groups no longer justify. Agents the mapping does not name keep the grants
staff gave by hand. `MEMORYADMIN_LOCAL_PASSWORDS=false` turns password logins off.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

import jwt
import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import SuspiciousOperation
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponseBase
from django.views import View
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.utils import import_from_settings
from mozilla_django_oidc.views import (
    OIDCAuthenticationCallbackView,
    OIDCAuthenticationRequestView,
)

from stores.engine.actors import Actor
from stores.models import Agent, AgentAccess, ProviderIdentity
from stores.services.agents import access_grant, access_revoke

logger = logging.getLogger("memoryadmin.sso")

# mozilla-django-oidc's settings that the discovery document answers.
DISCOVERED = {
    "OIDC_OP_AUTHORIZATION_ENDPOINT": "authorization_endpoint",
    "OIDC_OP_TOKEN_ENDPOINT": "token_endpoint",
    "OIDC_OP_USER_ENDPOINT": "userinfo_endpoint",
    "OIDC_OP_JWKS_ENDPOINT": "jwks_uri",
}
ROLE_RANK: dict[str, int] = {AgentAccess.Role.VIEWER: 1, AgentAccess.Role.EDITOR: 2}


def config() -> dict[str, Any]:
    return settings.MEMORYADMIN["OIDC"]


def sso_enabled() -> bool:
    return bool(config()["DISCOVERY_URL"] and config()["CLIENT_ID"])


@functools.lru_cache(maxsize=4)
def discovery(url: str) -> dict[str, Any]:
    """The provider's discovery document (endpoints, issuer, keys' address)."""
    response = requests.get(url, timeout=10)
    response.raise_for_status()
    return response.json()


def oidc_setting(name: str, *default: Any) -> Any:
    """mozilla-django-oidc's setting `name`, from MEMORYADMIN_OIDC_* and the discovery."""
    if name in DISCOVERED:
        return discovery(config()["DISCOVERY_URL"])[DISCOVERED[name]]
    own = {
        "OIDC_RP_CLIENT_ID": config()["CLIENT_ID"],
        "OIDC_RP_CLIENT_SECRET": config()["CLIENT_SECRET"],
        "OIDC_RP_SCOPES": config()["SCOPES"],
        "OIDC_RP_SIGN_ALGO": config()["SIGN_ALGORITHM"],
        "OIDC_USE_PKCE": True,
        "OIDC_USE_NONCE": True,
    }
    if name in own:
        return own[name]
    return import_from_settings(name, *default)


def login_options(request: HttpRequest) -> dict[str, bool]:
    """Template context: which ways to log in the login page offers."""
    return {
        "sso_enabled": sso_enabled(),
        "local_passwords": settings.MEMORYADMIN["LOCAL_PASSWORDS"],
    }


class LocalPasswordBackend(ModelBackend):
    """Django's password login, unless MEMORYADMIN_LOCAL_PASSWORDS turns it off (permissions
    are still answered: they do not depend on how a person logged in)."""

    def authenticate(self, request: HttpRequest | None, *args: Any, **kwargs: Any) -> Any:
        if not settings.MEMORYADMIN["LOCAL_PASSWORDS"]:
            return None
        return super().authenticate(request, *args, **kwargs)


class SSOBackend(OIDCAuthenticationBackend):
    """Logs a person in from a verified ID token and re-reads their groups each time."""

    get_settings = staticmethod(oidc_setting)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Django makes every backend for every login and session check: with single sign-on
        # off there is no provider to read the settings of.
        if sso_enabled():
            super().__init__(*args, **kwargs)
        else:
            self.UserModel = get_user_model()

    def authenticate(self, request: HttpRequest | None, **kwargs: Any) -> Any:
        if not sso_enabled():
            return None
        return super().authenticate(request, **kwargs)

    def verify_token(self, token: str, **kwargs: Any) -> dict[str, Any] | None:
        """The ID token's claims, or None (a failed login) when anything is wrong with it."""
        try:
            payload = super().verify_token(token, **kwargs)
            check_claims(payload)
        except (SuspiciousOperation, jwt.InvalidTokenError) as error:
            logger.warning("single sign-on refused an ID token: %s", error)
            return None
        return payload

    def get_userinfo(self, access_token: str, id_token: str, payload: dict[str, Any]) -> Any:
        """The provider's claims about the user, with the verified ID token's issuer and
        subject: who they are; refused when the provider's user info names someone else."""
        claims = super().get_userinfo(access_token, id_token, payload)
        subject = str(payload.get("sub") or "")
        if not subject or str(claims.get("sub") or "") != subject:
            raise SuspiciousOperation("The provider's user info is not about the ID token's user.")
        return {**claims, "iss": payload["iss"], "sub": subject}

    def filter_users_by_claims(self, claims: dict[str, Any]) -> Any:
        return self.UserModel.objects.filter(
            provider_identities__issuer=claims["iss"], provider_identities__subject=claims["sub"]
        )

    def create_user(self, claims: dict[str, Any]) -> Any:
        username = username_of(claims)
        holder = self.UserModel.objects.filter(username__iexact=username).first()
        if holder is not None and not made_before_links(holder, claims):
            raise SuspiciousOperation(
                f"The name {username!r} is already another account's here; the provider's "
                f"user {claims['sub']!r} is not logged in as it."
            )
        with transaction.atomic():
            user = holder or self.UserModel(username=username)
            if holder is None:
                user.set_unusable_password()
            user = self.update_user(user, claims)
            ProviderIdentity.objects.create(issuer=claims["iss"], subject=claims["sub"], user=user)
        return user

    def update_user(self, user: Any, claims: dict[str, Any]) -> Any:
        groups = set(groups_of(claims))
        user.email = claims.get("email", user.email) or ""
        user.first_name = (claims.get("given_name") or claims.get("name") or "")[:150]
        user.last_name = (claims.get("family_name") or "")[:150]
        user.is_staff = bool(groups & set(config()["STAFF_GROUPS"]))
        user.save()
        apply_agent_grants(user, groups)
        return user


def check_claims(payload: dict[str, Any]) -> None:
    """Issuer and audience must be the ones configured, and an expiry must be there (PyJWT
    refuses a past one)."""
    issuer = discovery(config()["DISCOVERY_URL"])["issuer"]
    if payload.get("iss") != issuer:
        raise SuspiciousOperation(f"ID token issuer {payload.get('iss')!r} is not {issuer!r}.")
    audience = payload.get("aud")
    audiences = [audience] if isinstance(audience, str) else list(audience or [])
    if config()["CLIENT_ID"] not in audiences:
        raise SuspiciousOperation(f"ID token audience {audience!r} is not this client.")
    if "exp" not in payload:
        raise SuspiciousOperation("ID token has no expiry.")


def username_of(claims: dict[str, Any]) -> str:
    """The name a new account takes: the provider's, without spaces (one name however it is
    spaced; compared without regard to case)."""
    for candidate in (claims.get(config()["USERNAME_CLAIM"]), claims.get("sub")):
        username = "".join(str(candidate or "").split())
        if username:
            return username[:150]
    raise SuspiciousOperation("The provider named no user.")


def made_before_links(holder: Any, claims: dict[str, Any]) -> bool:
    """Whether `holder` is an account single sign-on made before it kept whom it made them
    for (no password, no provider identity) and the provider gives it the same email: such an
    account is linked at its next login rather than locked out."""
    email = str(claims.get("email") or "").strip().lower()
    return (
        not holder.has_usable_password()
        and not holder.provider_identities.exists()
        and bool(email)
        and holder.email.strip().lower() == email
    )


def groups_of(claims: dict[str, Any]) -> list[str]:
    groups = claims.get(config()["GROUPS_CLAIM"]) or []
    return [groups] if isinstance(groups, str) else [str(group) for group in groups]


def agent_roles(groups: set[str]) -> tuple[set[str], dict[str, str]]:
    """(every agent the mapping names, the role the groups give on each): editor wins."""
    named: set[str] = set()
    roles: dict[str, str] = {}
    for entry in config()["AGENT_GROUPS"]:
        group, _, grant = entry.partition("=")
        agent_name, _, role = grant.partition(":")
        agent_name, role = agent_name.strip(), role.strip() or AgentAccess.Role.VIEWER
        named.add(agent_name)
        if group.strip() in groups and ROLE_RANK.get(role, 0) > ROLE_RANK.get(
            roles.get(agent_name, ""), 0
        ):
            roles[agent_name] = role
    return named, roles


def apply_agent_grants(user: Any, groups: set[str]) -> None:
    named, roles = agent_roles(groups)
    actor = Actor.maintainer("single sign-on")
    for agent in Agent.objects.filter(name__in=named):
        role = roles.get(agent.name)
        if role is not None:
            access_grant(actor=actor, agent=agent, user=user, role=role)
            continue
        for access in AgentAccess.objects.filter(user=user, agent=agent):
            access_revoke(actor=actor, access=access)


class SSOView(View):
    """A view of mozilla-django-oidc's, on memoryadmin's settings: 404 while single sign-on
    is not set."""

    get_settings = staticmethod(oidc_setting)

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not sso_enabled():
            raise Http404
        return super().dispatch(request, *args, **kwargs)


class SSOStart(SSOView, OIDCAuthenticationRequestView):
    """GET /oidc/authenticate/: off to the provider."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if sso_enabled():
            super().__init__(*args, **kwargs)


class SSOCallback(SSOView, OIDCAuthenticationCallbackView):
    """GET /oidc/callback/: the provider's answer; a login or a refusal."""
