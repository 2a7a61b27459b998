"""Django admin: everything visible at once; surface text is read-only here.

Writes to surface records go through the edit service (the web UI, the API, the shell),
so the admin never bypasses versions and revisions.
"""

from __future__ import annotations

from django.contrib import admin

from stores.models import (
    Agent,
    AgentAccess,
    AgentToken,
    DecayPass,
    Memory,
    Revision,
    RulesDocument,
    ScheduledTask,
    Skill,
    Subject,
    WorkingMemoryEntry,
)


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ["name", "display_name", "self_editing_enabled", "review_mode", "created_at"]
    search_fields = ["name", "display_name"]


@admin.register(Subject)
class SubjectAdmin(admin.ModelAdmin):
    list_display = ["display_name", "external_id", "agent", "privacy_level", "kind"]
    list_filter = ["agent", "privacy_level", "kind"]
    search_fields = ["display_name", "external_id"]


@admin.register(AgentAccess)
class AgentAccessAdmin(admin.ModelAdmin):
    list_display = ["user", "agent", "role"]
    list_filter = ["role", "agent"]


@admin.register(AgentToken)
class AgentTokenAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "agent",
        "prefix",
        "read_only",
        "expires_at",
        "revoked_at",
        "last_used_at",
    ]
    list_filter = ["agent", "read_only"]
    readonly_fields = ["prefix", "key_hash", "created_at", "last_used_at", "created_by"]


class SurfaceAdmin(admin.ModelAdmin):
    """Read-only: every field is shown, none is written from here."""

    list_select_related = ["agent"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Memory)
class MemoryAdmin(SurfaceAdmin):
    list_display = ["id", "agent", "store", "category", "importance", "version", "updated_at"]
    list_filter = ["agent", "store", "category"]
    search_fields = ["content", "alias"]
    exclude = ["embedding"]


@admin.register(WorkingMemoryEntry)
class WorkingMemoryAdmin(SurfaceAdmin):
    list_display = ["id", "agent", "namespace", "key", "expires_at", "version"]
    list_filter = ["agent", "namespace"]
    search_fields = ["key", "value"]
    exclude = ["embedding"]


@admin.register(Skill)
class SkillAdmin(SurfaceAdmin):
    list_display = ["id", "agent", "name", "version", "updated_at"]
    search_fields = ["name", "summary"]
    exclude = ["embedding"]


@admin.register(ScheduledTask)
class ScheduledTaskAdmin(SurfaceAdmin):
    list_display = ["id", "agent", "name", "schedule", "enabled", "version"]
    exclude = ["embedding"]


@admin.register(RulesDocument)
class RulesDocumentAdmin(SurfaceAdmin):
    list_display = ["id", "agent", "version", "updated_at"]


@admin.register(Revision)
class RevisionAdmin(SurfaceAdmin):
    list_display = [
        "id",
        "agent",
        "surface",
        "record_id",
        "version_after",
        "op",
        "actor",
        "channel",
        "review",
        "created_at",
    ]
    list_filter = ["agent", "surface", "op", "channel", "review"]
    search_fields = ["actor"]


@admin.register(DecayPass)
class DecayPassAdmin(admin.ModelAdmin):
    """The log of importance-decay passes, for the operator; written only by the pass."""

    list_display = [
        "started_at",
        "rows_touched",
        "batches",
        "duration_seconds",
        "half_life_days",
        "daily_factor",
        "triggered_by",
        "error",
    ]
    list_filter = ["triggered_by"]
    date_hierarchy = "started_at"

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
