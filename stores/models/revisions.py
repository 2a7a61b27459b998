"""Revisions: one append-only row per write of any surface record."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from stores.models.base import text_fingerprint
from stores.opnames import OpName

# The parts of a write's source, each kept in a `source_<part>` column of its revision.
SOURCE_PARTS = ("conversation", "message", "platform", "url", "excerpt")

# The key of `Revision.redacted` an erasure leaves on each revision it took text out of: a
# change of such a revision that a webhook has not delivered yet is never sent.
ERASURE_TOMBSTONE = "erasure"

# The op of a revision that deleted its record: it leaves no text, so no text hash.
FORGET = OpName.FORGET


def after_hash(op: str, after_text: str) -> str:
    """The `after_hash` of a revision of `op` leaving `after_text`."""
    return "" if op == FORGET else text_fingerprint(after_text)


class Channel(models.TextChoices):
    UI = "ui", "Web UI"
    API = "api", "API"
    SHELL = "shell", "Shell"
    TASK = "task", "Background task"


class Revision(models.Model):
    """What one write changed: versions, op, actor, channel, full text before and after.

    Diffs are computed when shown. Revisions outlive their record, so a forgotten
    memory's last text stays in history.
    """

    class Review(models.TextChoices):
        NOT_NEEDED = "", "Not needed"
        PENDING = "pending", "Awaiting review"
        APPROVED = "approved", "Approved"
        REVERTED = "reverted", "Reverted"

    agent = models.ForeignKey("stores.Agent", on_delete=models.CASCADE, related_name="revisions")
    surface = models.CharField(max_length=20)
    record_id = models.BigIntegerField()
    version_before = models.PositiveIntegerField()
    version_after = models.PositiveIntegerField()
    op = models.CharField(max_length=40)
    field = models.CharField(max_length=40, blank=True)
    actor = models.CharField(max_length=255)
    actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_token = models.ForeignKey(
        "stores.AgentToken", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    channel = models.CharField(max_length=10, choices=Channel)
    before_text = models.TextField(blank=True)
    after_text = models.TextField(blank=True)
    # SHA-256 of after_text (hex), for the change feed: a client compares it with the text
    # it holds without the text being sent. Empty for a forget, which leaves no text.
    after_hash = models.CharField(max_length=64, blank=True, editable=False)
    before_state = models.JSONField(default=dict, blank=True)
    after_state = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    review = models.CharField(max_length=10, choices=Review, default=Review.NOT_NEEDED, blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    # The revision a revert went back to (after or before it) or an undo took back: the
    # history names it, and a reader sees which change was taken back without diffing texts.
    reverted_revision = models.BigIntegerField(null=True, blank=True)
    # Where the write came from, as its author named it (checked by stores.engine.sources):
    # the conversation and message that led to it, the platform, a link, the words quoted.
    source_conversation = models.CharField(max_length=200, blank=True)
    source_message = models.CharField(max_length=200, blank=True)
    source_platform = models.CharField(max_length=50, blank=True)
    source_url = models.CharField(max_length=2000, blank=True)
    source_excerpt = models.CharField(max_length=1000, blank=True)
    # A take-back's write: it names the conversation it took back, and is not that
    # conversation's own write.
    source_takeback = models.BooleanField(default=False)
    # The sides whose text was redacted, each a tombstone in place of the text: {"before" |
    # "after" | "excerpt": {"at", "by", "reason", "sha256"}} (stores.services.erasure).
    redacted = models.JSONField(default=dict, blank=True)
    # The conversation the write's own arguments named when its host's header named another
    # (source_conversation, which stands).
    source_claimed_conversation = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["agent", "-created_at"], name="revision_recent"),
            models.Index(fields=["agent", "review"], name="revision_review"),
            models.Index(
                fields=["agent", "source_conversation"],
                name="revision_source",
                condition=~models.Q(source_conversation=""),
            ),
        ]
        constraints = [
            # A gap-free chain: two writes can never both claim the same version.
            models.UniqueConstraint(
                fields=["surface", "record_id", "version_after"], name="revision_unique_version"
            ),
        ]

    def __str__(self) -> str:
        versions = f"v{self.version_before}→v{self.version_after}"
        return f"{self.surface} {self.record_id} {versions} {self.op}"

    @property
    def created_record(self) -> bool:
        """The write made the record (a page shows its first text whole)."""
        return self.op == OpName.CREATE

    @property
    def forgot_record(self) -> bool:
        """The write deleted the record (nothing to restore to or take back in it)."""
        return self.op == OpName.FORGET

    @property
    def source(self) -> dict[str, Any]:
        """Where the write came from: the parts its author named (empty: none), and
        `takeback` on a take-back's write, which names the conversation it took back."""
        parts: dict[str, Any] = {
            part: value for part in SOURCE_PARTS if (value := getattr(self, f"source_{part}"))
        }
        if self.source_claimed_conversation:
            parts["claimed_conversation"] = self.source_claimed_conversation
        if self.source_takeback:
            parts["takeback"] = True
        return parts


class QuarantinedConversation(models.Model):
    """A conversation held as untrusted: its further writes by agents wait in the review queue
    (as if the agent's review mode were "review everything") until it is trusted again."""

    agent = models.ForeignKey(
        "stores.Agent", on_delete=models.CASCADE, related_name="quarantined_conversations"
    )
    conversation = models.CharField(max_length=200)
    # Who put it there (an actor's label), and when.
    held_by = models.CharField(max_length=255)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "conversation"], name="quarantined_conversation_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.conversation} (held by {self.held_by})"
