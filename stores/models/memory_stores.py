"""Memory stores: named folders of an agent's memory files, as the hosted memory stores API
names them (`client.beta.memory_stores`).

A store owns no text: its memories are the agent's memory files below its folder
(`/memories/memstore_<id>`), so every write to them is an ordinary memory file write, with
its revision, review and history. The store row keeps only what the API says about the
folder: its name, description, metadata and when it was archived.
"""

from __future__ import annotations

from django.db import models

from stores.models.agents import Agent
from stores.models.files import MEMORY_ROOT

STORE_ID_PREFIX = "memstore_"


class MemoryStore(models.Model):
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="memory_stores")
    name = models.CharField(max_length=255)
    description = models.CharField(max_length=1024, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    # Set once: archiving an archived store keeps the first moment.
    archived_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["agent", "-created_at"], name="memory_store_recent")]

    def __str__(self) -> str:
        return self.name

    @property
    def public_id(self) -> str:
        return f"{STORE_ID_PREFIX}{self.pk}"

    @property
    def folder(self) -> str:
        """The folder of memory files this store's memories are (no trailing slash)."""
        return f"{MEMORY_ROOT}/{self.public_id}"
