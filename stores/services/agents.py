"""Agents, subjects, tokens and reviews: administration that is not a surface record."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from stores.editing import Status
from stores.errors import Forbidden, Invalid, NoChangeError, NotFound
from stores.models import Agent, AgentToken, Revision, Subject
from stores.services.actors import Actor
from stores.services.results import WriteResult

TOKEN_PREFIX = "ma"


def agent_get_or_create(*, name: str, **defaults: Any) -> tuple[Agent, bool]:
    slug = slugify(name)
    if not slug:
        raise Invalid(f"{name!r} is not a usable agent name; use letters, digits and dashes.")
    return Agent.objects.get_or_create(name=slug, defaults={"display_name": name, **defaults})


def subject_create(
    *,
    agent: Agent,
    display_name: str,
    external_id: str,
    privacy_level: str = Subject.Privacy.NONE,
    aliases: list[str] | None = None,
    kind: str = Subject.Kind.PERSON,
) -> Subject:
    subject = Subject(
        agent=agent,
        display_name=display_name,
        external_id=external_id,
        privacy_level=privacy_level,
        aliases=aliases or [],
        kind=kind,
    )
    subject.full_clean()
    subject.save()
    return subject


def hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def token_create(
    *,
    agent: Agent,
    name: str = "default",
    read_only: bool = False,
    expires_at: dt.datetime | None = None,
    created_by: Any = None,
) -> tuple[AgentToken, str]:
    """A new bearer token; the raw secret is returned once and only its hash is kept."""
    prefix = secrets.token_hex(4)
    raw = f"{TOKEN_PREFIX}_{prefix}_{secrets.token_urlsafe(32)}"
    token = AgentToken.objects.create(
        agent=agent,
        name=name,
        prefix=prefix,
        key_hash=hash_token(raw),
        read_only=read_only,
        expires_at=expires_at,
        created_by=created_by,
    )
    return token, raw


def token_authenticate(raw: str) -> AgentToken | None:
    """The live token for `raw`, or None (unknown, revoked or expired)."""
    token = (
        AgentToken.objects.select_related("agent")
        .filter(key_hash=hash_token(raw.strip()), revoked_at__isnull=True)
        .first()
    )
    if token is None or (token.expires_at is not None and token.expires_at <= timezone.now()):
        return None
    return token


def token_revoke(*, token: AgentToken) -> None:
    AgentToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(
        revoked_at=timezone.now()
    )


def revision_approve(*, agent: Agent, revision_id: int, actor: Actor) -> WriteResult:
    """Accept what an agent wrote: the review is settled, the record is left as it is."""
    if actor.kind != "user" or not actor.can_see(agent):
        return WriteResult(status=Status.NOT_FOUND, message=f"No revision {revision_id}.")
    try:
        if not actor.can_write(agent):
            raise Forbidden("Viewers cannot approve reviews.")
        with transaction.atomic():
            revision = (
                Revision.objects.select_for_update().filter(pk=revision_id, agent=agent).first()
            )
            if revision is None:
                raise NotFound(f"No revision {revision_id}.")
            if revision.review != Revision.Review.PENDING:
                raise NoChangeError(f"Revision {revision_id} is not awaiting review.")
            revision.review = Revision.Review.APPROVED
            revision.reviewed_by = actor.user
            revision.reviewed_at = timezone.now()
            revision.save(update_fields=["review", "reviewed_by", "reviewed_at"])
    except (Forbidden, NotFound, NoChangeError) as error:
        return WriteResult(status=error.status, message=error.message)
    return WriteResult(
        status=Status.APPROVED,
        surface=revision.surface,
        id=revision.record_id,
        revision=revision.pk,
        version=revision.version_after,
    )
