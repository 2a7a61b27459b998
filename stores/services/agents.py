"""Agents, subjects, grants, tokens and reviews: administration that is not a surface record."""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.db.models import Exists, OuterRef
from django.utils import timezone
from django.utils.text import slugify

from stores.editing import Status
from stores.engine.actors import Actor
from stores.engine.aftercommit import HAS_ENABLED_WEBHOOKS
from stores.engine.results import WriteResult
from stores.errors import Invalid
from stores.models import Agent, AgentAccess, AgentToken, Subject, Webhook
from stores.runtime.prepared import PreparedQuery

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser

logger = logging.getLogger("memoryadmin.administration")

TOKEN_PREFIX = "ma"


def agent_get_or_create(*, name: str, **defaults: Any) -> tuple[Agent, bool]:
    slug = slugify(name)
    if not slug:
        raise Invalid(f"{name!r} is not a usable agent name; use letters, digits and dashes.")
    return Agent.objects.get_or_create(name=slug, defaults={"display_name": name, **defaults})


# --- administration: an agent's settings, its subjects, who may see it, its tokens -------
# Every one takes the actor and checks it here, whichever door calls (the web UI, the Django
# admin, a management command), and leaves a line in the "memoryadmin.administration" log.


def administration_refusal(actor: Actor, agent: Agent, doing: str) -> WriteResult | None:
    """People who may edit the agent (staff and its editors) and maintainers administer it;
    an agent's own token never does (it could mint itself tokens or lift its own limits)."""
    if not actor.can_see(agent):
        return WriteResult(status=Status.NOT_FOUND, message=f"No agent {agent.name!r}.")
    if actor.is_agent:
        return WriteResult(status=Status.FORBIDDEN, message=f"An agent's token cannot {doing}.")
    if not actor.can_write(agent):
        return WriteResult(status=Status.FORBIDDEN, message=f"Viewers cannot {doing}.")
    return None


def _staff_or_maintainer(actor: Actor) -> bool:
    user = actor.user
    return actor.kind == "system" or (user is not None and user.is_active and user.is_staff)


def _grant_refusal(actor: Actor, agent: Agent) -> WriteResult | None:
    """Only staff and maintainers say who sees an agent: an editor cannot widen it."""
    if _staff_or_maintainer(actor):
        return None
    if not actor.can_see(agent):
        return WriteResult(status=Status.NOT_FOUND, message=f"No agent {agent.name!r}.")
    return WriteResult(status=Status.FORBIDDEN, message="Only staff grant access to an agent.")


def _traced(actor: Actor, agent: Agent, op: str, result: WriteResult, what: str) -> WriteResult:
    logger.info(
        "%s %s: %s by %s",
        op,
        result.status,
        what,
        actor.label,
        extra={
            "op": op,
            "status": str(result.status),
            "agent": agent.name,
            "actor": actor.label,
            "channel": actor.channel,
        },
    )
    return result


def _invalid(error: ValidationError) -> WriteResult:
    return WriteResult(status=Status.INVALID, message="; ".join(error.messages))


def _set_fields(
    instance: Agent | Subject, values: dict[str, Any], *, unchanged: str
) -> WriteResult:
    """Set those of `values` that differ, validated as the model validates them, and save."""
    changed = {name: value for name, value in values.items() if getattr(instance, name) != value}
    if not changed:
        return WriteResult(status=Status.NO_CHANGE, message=unchanged)
    for name, value in changed.items():
        setattr(instance, name, value)
    try:
        instance.full_clean()
    except ValidationError as error:
        instance.refresh_from_db()
        return _invalid(error)
    instance.save(update_fields=list(changed))
    return WriteResult(
        status=Status.UPDATED,
        message=f"Changed {', '.join(changed)}.",
        id=instance.pk,
        record=instance,
    )


# What the door's scan does with credentials and with personal data: staff set it.
SCAN_POLICIES = ("credentials_policy", "personal_data_policy")
AGENT_SETTINGS = (
    "display_name",
    "description",
    "self_editing_enabled",
    "review_mode",
    *SCAN_POLICIES,
)


def agent_create(*, actor: Actor, name: str, **settings: Any) -> WriteResult:
    """A new agent named `name` (a slug: letters, digits, dashes), with any of `AGENT_SETTINGS`.

    Staff and maintainers only: whoever creates an agent sees everything it will remember.
    The display name defaults to `name` as typed. `record` is the agent; its first token is
    `token_create`'s.
    """
    slug = slugify(name)
    refused = _unknown_fields(settings, AGENT_SETTINGS)
    if not _staff_or_maintainer(actor):
        refused = WriteResult(status=Status.FORBIDDEN, message="Only staff create agents.")
    elif refused is None and not slug:
        refused = WriteResult(
            status=Status.INVALID,
            message=f"name: {name!r} is not a usable agent name; use letters, digits and dashes.",
        )
    if refused is not None:
        return _traced(actor, Agent(name=slug), "agent_create", refused, slug)
    display_name = settings.pop("display_name", "") or name.strip()
    agent = Agent(name=slug, display_name=display_name, **settings)
    try:
        agent.full_clean()
    except ValidationError as error:
        problems = "; ".join(
            f"{field}: {' '.join(messages)}" for field, messages in error.message_dict.items()
        )
        invalid = WriteResult(status=Status.INVALID, message=problems)
        return _traced(actor, agent, "agent_create", invalid, agent.name)
    agent.save()
    result = WriteResult(status=Status.CREATED, id=agent.pk, record=agent)
    return _traced(actor, agent, "agent_create", result, agent.name)


def agent_update(*, actor: Actor, agent: Agent, values: dict[str, Any]) -> WriteResult:
    """Change an agent's settings (`AGENT_SETTINGS`), e.g. switch its self-editing off.

    The scan's policies are staff's: an editor could otherwise let its agent keep secrets."""
    if set(values) & set(SCAN_POLICIES) and not _staff_or_maintainer(actor):
        refused = WriteResult(
            status=Status.FORBIDDEN, message="Only staff set what the door's scan does."
        )
        return _traced(actor, agent, AGENT_UPDATE.operation, refused, agent.name)
    return _administered_update(actor, agent, agent, values, AGENT_UPDATE, agent.name)


@dataclass(frozen=True)
class AdministeredUpdate:
    """A change to an agent's own settings or to one of its subjects, in words."""

    operation: str
    allowed: tuple[str, ...]
    doing: str
    unchanged: str


AGENT_UPDATE = AdministeredUpdate(
    "agent_update",
    AGENT_SETTINGS,
    "change the agent's settings",
    "The agent already has these settings.",
)


def _administered_update(
    actor: Actor,
    agent: Agent,
    record: Agent | Subject,
    values: dict[str, Any],
    update: AdministeredUpdate,
    name: str,
) -> WriteResult:
    """Set the `allowed` fields of `record`: for those who administer the agent, every change
    traced."""
    result = administration_refusal(actor, agent, update.doing)
    if result is None:
        result = _unknown_fields(values, update.allowed)
    if result is None:
        result = _set_fields(record, values, unchanged=update.unchanged)
    return _traced(actor, agent, update.operation, result, name)


SUBJECT_FIELDS = ("display_name", "external_id", "aliases", "privacy_level", "kind")
SUBJECT_UPDATE = AdministeredUpdate(
    "subject_update", SUBJECT_FIELDS, "change subjects", "The subject is already like this."
)


def subject_create(
    *,
    actor: Actor,
    agent: Agent,
    display_name: str,
    external_id: str,
    privacy_level: str = Subject.Privacy.NONE,
    aliases: list[str] | None = None,
    kind: str = Subject.Kind.PERSON,
) -> WriteResult:
    """A person the agent knows; its memories about them will live in their bank."""
    refused = administration_refusal(actor, agent, "add subjects")
    if refused is not None:
        return _traced(actor, agent, "subject_create", refused, external_id)
    subject = Subject(
        agent=agent,
        display_name=display_name,
        external_id=external_id,
        privacy_level=privacy_level,
        aliases=aliases or [],
        kind=kind,
    )
    try:
        subject.full_clean()
    except ValidationError as error:
        return _traced(actor, agent, "subject_create", _invalid(error), external_id)
    subject.save()
    result = WriteResult(status=Status.CREATED, id=subject.pk, record=subject)
    return _traced(actor, agent, "subject_create", result, external_id)


def subject_update(*, actor: Actor, subject: Subject, values: dict[str, Any]) -> WriteResult:
    """Change a subject (`SUBJECT_FIELDS`), e.g. raise its privacy level."""
    return _administered_update(
        actor, subject.agent, subject, values, SUBJECT_UPDATE, subject.external_id
    )


def access_grant(
    *, actor: Actor, agent: Agent, user: AbstractBaseUser, role: str = AgentAccess.Role.EDITOR
) -> WriteResult:
    """Let a (non-staff) user see the agent, as a viewer or an editor; changes an existing role."""
    what = f"{user.get_username()} as {role}"
    refused = _grant_refusal(actor, agent)
    if refused is None and role not in AgentAccess.Role.values:
        choices = ", ".join(AgentAccess.Role.values)
        refused = WriteResult(status=Status.INVALID, message=f"role must be one of {choices}.")
    if refused is not None:
        return _traced(actor, agent, "access_grant", refused, what)
    access, created = AgentAccess.objects.get_or_create(
        user=user, agent=agent, defaults={"role": role}
    )
    if created:
        result = WriteResult(status=Status.CREATED, id=access.pk, record=access)
    elif access.role == role:
        result = WriteResult(status=Status.NO_CHANGE, message=f"{what} already.", id=access.pk)
    else:
        access.role = role
        access.save(update_fields=["role"])
        result = WriteResult(status=Status.UPDATED, id=access.pk, record=access)
    return _traced(actor, agent, "access_grant", result, what)


def access_revoke(*, actor: Actor, access: AgentAccess) -> WriteResult:
    """The user no longer sees the agent (staff still see every agent)."""
    agent = access.agent
    what = access.user.get_username()
    refused = _grant_refusal(actor, agent)
    if refused is not None:
        return _traced(actor, agent, "access_revoke", refused, what)
    deleted, _ = AgentAccess.objects.filter(pk=access.pk).delete()
    result = (
        WriteResult(status=Status.DELETED, id=access.pk)
        if deleted
        else WriteResult(status=Status.NO_CHANGE, message=f"{what} had no access.")
    )
    return _traced(actor, agent, "access_revoke", result, what)


def _unknown_fields(values: dict[str, Any], allowed: tuple[str, ...]) -> WriteResult | None:
    unknown = sorted(set(values) - set(allowed))
    if not unknown:
        return None
    return WriteResult(
        status=Status.INVALID,
        message=f"Cannot set {', '.join(unknown)}; one of {', '.join(allowed)}.",
    )


def hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def token_create(
    *,
    actor: Actor,
    agent: Agent,
    name: str = "default",
    read_only: bool = False,
    expires_at: dt.datetime | None = None,
) -> WriteResult:
    """A new bearer token, in `details["token"]`: the raw secret is returned this once and only
    its hash is kept. `record` is the token."""
    refused = administration_refusal(actor, agent, "create tokens")
    if refused is not None:
        return _traced(actor, agent, "token_create", refused, name)
    prefix = secrets.token_hex(4)
    raw = f"{TOKEN_PREFIX}_{prefix}_{secrets.token_urlsafe(32)}"
    token = AgentToken(
        agent=agent,
        name=name,
        prefix=prefix,
        key_hash=hash_token(raw),
        read_only=read_only,
        expires_at=expires_at,
        created_by=actor.user,
    )
    try:
        token.full_clean()
    except ValidationError as error:
        return _traced(actor, agent, "token_create", _invalid(error), name)
    token.save()
    result = WriteResult(status=Status.CREATED, id=token.pk, record=token, details={"token": raw})
    return _traced(actor, agent, "token_create", result, f"{name} (ma_{prefix}_…)")


# Every request runs this: compiled once (key_hash is unique: no ORDER BY either). Whether
# the agent has an enabled webhook comes with it, so its writes need not look (webhooks.py).
_LIVE_TOKEN = PreparedQuery(
    lambda key_hash: (
        AgentToken.objects.select_related("agent")
        .filter(key_hash=key_hash, revoked_at__isnull=True)
        .annotate(
            agent_has_webhooks=Exists(
                Webhook.objects.filter(agent_id=OuterRef("agent_id"), enabled=True)
            )
        )
        .order_by()[:1]
    ),
    str,
)


def token_authenticate(raw: str) -> AgentToken | None:
    """The live token for `raw`, or None (unknown, revoked or expired)."""
    token = next(iter(_LIVE_TOKEN.run(hash_token(raw.strip()))), None)
    if token is None or (token.expires_at is not None and token.expires_at <= timezone.now()):
        return None
    setattr(token.agent, HAS_ENABLED_WEBHOOKS, token.agent_has_webhooks)
    return token


def token_revoke(*, actor: Actor, token: AgentToken) -> WriteResult:
    """The token stops working at once, for every door; it stays listed, as revoked."""
    agent = token.agent
    refused = administration_refusal(actor, agent, "revoke tokens")
    if refused is not None:
        return _traced(actor, agent, "token_revoke", refused, token.name)
    now = timezone.now()
    revoked = AgentToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=now)
    if not revoked:
        result = WriteResult(
            status=Status.NO_CHANGE, message=f"Token {token.name!r} was already revoked."
        )
    else:
        token.revoked_at = now
        result = WriteResult(
            status=Status.INVALIDATED,
            message=f"Token {token.name!r} revoked: the agent using it has lost access.",
            id=token.pk,
            record=token,
        )
    return _traced(actor, agent, "token_revoke", result, f"{token.name} (ma_{token.prefix}_…)")
