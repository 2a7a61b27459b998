"""Who is writing, and through which door."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from stores.engine.sources import Source
from stores.models import AgentAccess, Channel

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

    from stores.models import Agent, AgentToken

BYPASS_STORE_RULES_PERMISSION = "stores.bypass_store_rules"


@dataclass(frozen=True)
class Actor:
    """The author of a write: a human user, an agent's token, or a maintainer/system job."""

    kind: str  # "user" | "agent" | "system"
    channel: str
    label: str
    user: AbstractBaseUser | None = None
    token: AgentToken | None = None
    may_bypass_store_rules: bool = False
    # Where the writes come from (a conversation, a message): kept on each revision.
    source: Source | None = None

    @classmethod
    def for_user(cls, user: AbstractBaseUser | AnonymousUser, channel: str = Channel.UI) -> Actor:
        bypass = bool(getattr(user, "is_active", False)) and user.has_perm(
            BYPASS_STORE_RULES_PERMISSION
        )
        return cls(
            "user", channel, f"user:{user.get_username()}", user=user, may_bypass_store_rules=bypass
        )

    @classmethod
    def for_token(cls, token: AgentToken, channel: str = Channel.API) -> Actor:
        return cls("agent", channel, f"agent:{token.agent.name}/{token.name}", token=token)

    @classmethod
    def maintainer(cls, name: str = "maintainer") -> Actor:
        """A maintainer in the shell or a management command: an administrator."""
        return cls("system", Channel.SHELL, f"shell:{name}", may_bypass_store_rules=True)

    @classmethod
    def background(cls, name: str) -> Actor:
        return cls("system", Channel.TASK, f"task:{name}")

    def with_source(self, source: Source | None) -> Actor:
        """This actor writing from `source`: its parts over the ones already set (a body's
        source over the session's header)."""
        if not source:
            return self
        return replace(self, source=source.merged_over(self.source))

    @property
    def is_agent(self) -> bool:
        return self.kind == "agent"

    @property
    def agent_id(self) -> int | None:
        return self.token.agent_id if self.token is not None else None

    def can_see(self, agent: Agent) -> bool:
        if self.kind == "system":
            return True
        if self.kind == "agent":
            return self.agent_id == agent.pk
        user = self.user
        if user is None or not user.is_active:
            return False
        if user.is_staff:
            return True
        return AgentAccess.objects.filter(user=user, agent=agent).exists()

    def can_write(self, agent: Agent) -> bool:
        if self.kind == "system":
            return True
        if self.kind == "agent":
            return self.token is not None and not self.token.read_only
        user = self.user
        if user is None:
            return False
        if user.is_staff:
            return True
        return AgentAccess.objects.filter(
            user=user, agent=agent, role=AgentAccess.Role.EDITOR
        ).exists()
