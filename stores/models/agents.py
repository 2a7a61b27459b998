"""Agents, the people they know, and who may administer them."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ScanPolicy(models.TextChoices):
    """What a write meets when it holds credentials or personal data, per agent and category."""

    ALLOW = "allow", "Allow it (and say so)"
    MASK = "mask", "Store it masked"
    HOLD = "hold", "Hold it for review"
    REFUSE = "refuse", "Refuse it"


class Agent(models.Model):
    """One AI agent (or persona lineage) whose memory is administered."""

    class ReviewMode(models.TextChoices):
        NONE = "none", "Review nothing"
        ALL = "all", "Review everything agents write"

    name = models.SlugField(max_length=100, unique=True)
    display_name = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)
    self_editing_enabled = models.BooleanField(
        default=True, help_text="Agents may edit their own memory through the API."
    )
    review_mode = models.CharField(max_length=10, choices=ReviewMode, default=ReviewMode.NONE)
    # What a write holding credentials or personal data meets at the door (stores.scanning).
    credentials_policy = models.CharField(
        max_length=10, choices=ScanPolicy, default=ScanPolicy.REFUSE
    )
    personal_data_policy = models.CharField(
        max_length=10, choices=ScanPolicy, default=ScanPolicy.ALLOW
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.display_name or self.name


class Subject(models.Model):
    """A person the agent knows; memories about a subject live in that subject's bank."""

    class Privacy(models.TextChoices):
        NONE = "none", "None"
        PARTIAL = "partial", "Partial"
        FULL = "full", "Full"

    class Kind(models.TextChoices):
        PERSON = "person", "Person"
        BRIDGE = "bridge", "Bridge user (shared memories only)"
        SELF = "self", "The agent itself"

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="subjects")
    display_name = models.CharField(max_length=200)
    external_id = models.CharField(max_length=255)
    aliases = models.JSONField(default=list, blank=True)
    privacy_level = models.CharField(max_length=10, choices=Privacy, default=Privacy.NONE)
    kind = models.CharField(max_length=10, choices=Kind, default=Kind.PERSON)

    class Meta:
        ordering = ["display_name"]
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "external_id"], name="subject_unique_external_id"
            ),
        ]

    def __str__(self) -> str:
        return self.display_name

    @property
    def restricts_agent_updates(self) -> bool:
        return self.privacy_level in (self.Privacy.PARTIAL, self.Privacy.FULL)


class AgentAccess(models.Model):
    """A non-staff user's grant on one agent; viewers may read but never write."""

    class Role(models.TextChoices):
        VIEWER = "viewer", "Viewer (read-only)"
        EDITOR = "editor", "Editor"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="agent_grants"
    )
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="grants")
    role = models.CharField(max_length=10, choices=Role, default=Role.EDITOR)

    class Meta:
        verbose_name = "agent access grant"
        constraints = [
            models.UniqueConstraint(fields=["user", "agent"], name="agent_access_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.user} → {self.agent} ({self.role})"


class AgentToken(models.Model):
    """A bearer token for one agent. Only a hash of the secret is stored."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, db_index=True)
    key_hash = models.CharField(max_length=64, unique=True)
    read_only = models.BooleanField(default=False)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.agent.name}/{self.name}"


class ScanOverride(models.Model):
    """A person's write stored although the door's scan would have held or refused it.

    Names what kinds were found, never the text. Append-only: the audit log reads it.
    """

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="scan_overrides")
    surface = models.CharField(max_length=20)
    record_id = models.BigIntegerField()
    revision_id = models.BigIntegerField(null=True, blank=True)
    actor = models.CharField(max_length=200)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    found = models.JSONField(default=list)
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.actor} stored {self.surface} {self.record_id} past the scan"
