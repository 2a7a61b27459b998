from stores.models.agents import Agent, AgentAccess, AgentToken, Subject
from stores.models.audit import AuditEntry
from stores.models.background import DecayPass
from stores.models.base import (
    EMBEDDING_DIMENSIONS,
    EmbeddedRecord,
    VersionedRecord,
    text_fingerprint,
)
from stores.models.changes import Change
from stores.models.exports import ExportFile
from stores.models.files import MemoryFile
from stores.models.idempotency import IdempotentRequest
from stores.models.imports import ImportedSource
from stores.models.memories import SHARED_BANK, Memory, bank_label
from stores.models.memory_stores import MemoryStore
from stores.models.revisions import Channel, QuarantinedConversation, Revision
from stores.models.rules import RulesDocument
from stores.models.skills import Skill
from stores.models.suggestions import SuggestedRecord, Suggestion
from stores.models.tasks import ScheduledTask
from stores.models.terms import TermShare
from stores.models.webhooks import Webhook, WebhookDelivery
from stores.models.working import WorkingMemoryEntry

__all__ = [
    "EMBEDDING_DIMENSIONS",
    "SHARED_BANK",
    "Agent",
    "AgentAccess",
    "AgentToken",
    "AuditEntry",
    "Change",
    "Channel",
    "DecayPass",
    "EmbeddedRecord",
    "ExportFile",
    "IdempotentRequest",
    "ImportedSource",
    "Memory",
    "MemoryFile",
    "MemoryStore",
    "QuarantinedConversation",
    "Revision",
    "RulesDocument",
    "ScheduledTask",
    "Skill",
    "Subject",
    "SuggestedRecord",
    "Suggestion",
    "TermShare",
    "VersionedRecord",
    "Webhook",
    "WebhookDelivery",
    "WorkingMemoryEntry",
    "bank_label",
    "text_fingerprint",
]
