"""Scheduled tasks: a directive the agent runs on a cron schedule."""

from __future__ import annotations

from stores.models import ScheduledTask
from stores.surfaces.base import COMMON_SORTS, VERSIONED_STATE, Column, SurfaceSpec

SURFACE = SurfaceSpec(
    key="task",
    model=ScheduledTask,
    text_fields=("directive",),
    updatable_fields=("name", "schedule", "enabled"),
    state_fields=(*VERSIONED_STATE, "name", "schedule", "enabled", "last_run_at"),
    create_fields=("name", "schedule", "directive", "enabled", "alias"),
    create_required=("name", "schedule", "directive"),
    read_fields=("name", "schedule", "directive", "enabled", "last_run_at"),
    natural_key=("name",),
    label="Scheduled task",
    plural="Tasks",
    columns=(
        Column("name", "Name"),
        Column("directive", "Directive"),
        Column("schedule", "Schedule"),
        Column("enabled", "Enabled"),
    ),
    api_path="tasks",
    tool_hint="task (scheduled-task directive)",
    search_fields=("name", "directive", "schedule", "alias"),
    filters=frozenset({"enabled", "stale"}),
    sorts={**COMMON_SORTS, "name": ("name",)},
    nouns=("task", "tasks"),
    title="{name}",
    max_text_length=50_000,
)
