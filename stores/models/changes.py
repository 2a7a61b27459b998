"""The change feed's rows: every committed write of an agent, and its decay passes and
suggestions' events, in commit order."""

from __future__ import annotations

from django.db import models

from stores.models.revisions import Channel
from stores.models.suggestions import Suggestion


class Change(models.Model):
    """One committed change of an agent; the id is its position in the agent's feed.

    Rows are never written by Python for a write: the database adds one per revision when
    the write's transaction commits (stores.dbops.FEED_TRIGGERS), so an id handed out is
    never overtaken by a lower one committing later. On PostgreSQL the ids of one agent are
    taken under a per-agent lock held to the commit; on SQLite writers are serialized. The
    rows Python adds (a decay pass, a suggestion found or settled) take that lock too
    (stores.dbops.lock_feed).
    """

    class Kind(models.TextChoices):
        WRITE = "write", "A write (one revision)"
        DECAY = "decay", "An importance decay pass"
        SUGGESTION = "suggestion", "A suggestion found, proposed, accepted, dismissed or gone stale"

    agent = models.ForeignKey("stores.Agent", on_delete=models.CASCADE, related_name="changes")
    revision = models.OneToOneField(
        "stores.Revision", null=True, blank=True, on_delete=models.CASCADE, related_name="change"
    )
    kind = models.CharField(max_length=10, choices=Kind, default=Kind.WRITE)
    decay_pass = models.ForeignKey(
        "stores.DecayPass", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # A decay pass: how many of the agent's memories it lowered.
    memories = models.PositiveIntegerField(default=0)
    suggestion = models.ForeignKey(
        "stores.Suggestion", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    # A suggestion's event: the status it took (open when it was found or proposed), and the
    # door of whoever did it (a revision has its own channel; the pass's is `task`).
    # Defaults in the database: the commit triggers insert the rows of writes without them.
    suggestion_status = models.CharField(
        max_length=10, blank=True, choices=Suggestion.State, db_default=""
    )
    channel = models.CharField(max_length=10, blank=True, choices=Channel, db_default="")

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["agent", "id"], name="change_feed")]

    def __str__(self) -> str:
        return f"change {self.pk} of agent {self.agent_id} ({self.kind})"
