"""The audit log: entries are added, never changed or deleted, and outlive their agent."""

from __future__ import annotations

import pytest

from stores.engine.audit import record_audit
from stores.models import Agent, AuditEntry


def test_an_entry_is_never_changed_or_deleted(agent):
    entry = record_audit("override", actor="user:ann", agent=agent, details={"write": 7})
    with pytest.raises(TypeError, match="never changed"):
        entry.save()
    with pytest.raises(TypeError, match="never deleted"):
        entry.delete()
    with pytest.raises(TypeError, match="never changed"):
        AuditEntry.objects.update(actor="someone else")
    with pytest.raises(TypeError, match="never deleted"):
        AuditEntry.objects.all().delete()
    assert AuditEntry.objects.get().actor == "user:ann"


def test_an_entry_outlives_its_agent_and_an_unknown_kind_is_refused(agent):
    record_audit("redaction", actor="user:ann", agent=agent, details={})
    name = agent.name
    Agent.objects.filter(pk=agent.pk).delete()
    entry = AuditEntry.objects.get()
    assert (entry.agent_id, entry.agent_name) == (None, name)
    with pytest.raises(ValueError, match="Unknown audit kind"):
        record_audit("gossip", actor="user:ann", agent=None, details={})
