"""The edit service: every write of every surface goes through these functions."""

from stores.services.actors import Actor
from stores.services.agents import (
    access_grant,
    access_revoke,
    agent_create,
    agent_get_or_create,
    agent_update,
    subject_create,
    subject_update,
    token_authenticate,
    token_create,
    token_revoke,
)
from stores.services.engine import find_record
from stores.services.memories import memory_invalidate, memory_reinforce, memory_set_importance
from stores.services.records import (
    record_create,
    record_edit,
    record_forget,
    record_replace,
    record_revert,
    record_update,
)
from stores.services.results import WriteResult
from stores.services.reviews import revision_approve
from stores.services.rules import rules_add, rules_document, rules_remove, rules_replace
from stores.services.skills import skill_append, skill_delete_section, skill_replace_section
from stores.services.working import working_set_ttl
from stores.surfaces import SURFACES, SurfaceSpec, surface

__all__ = [
    "SURFACES",
    "Actor",
    "SurfaceSpec",
    "WriteResult",
    "access_grant",
    "access_revoke",
    "agent_create",
    "agent_get_or_create",
    "agent_update",
    "find_record",
    "memory_invalidate",
    "memory_reinforce",
    "memory_set_importance",
    "record_create",
    "record_edit",
    "record_forget",
    "record_replace",
    "record_revert",
    "record_update",
    "revision_approve",
    "rules_add",
    "rules_document",
    "rules_remove",
    "rules_replace",
    "skill_append",
    "skill_delete_section",
    "skill_replace_section",
    "subject_create",
    "subject_update",
    "surface",
    "token_authenticate",
    "token_create",
    "token_revoke",
    "working_set_ttl",
]
