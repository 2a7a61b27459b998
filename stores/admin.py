"""Django admin: everything visible at once; surface text is read-only here.

Writes to surface records go through the edit service (the web UI, the API, the shell),
so the admin never bypasses versions and revisions. Agents' settings, subjects and grants
are written through their services (their policy, their log line), beside the admin's own
history; tokens are only revoked here.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import FieldDoesNotExist, PermissionDenied
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest

from stores.editing import Status
from stores.engine.actors import Actor
from stores.engine.results import WriteResult
from stores.models import (
    Agent,
    AgentAccess,
    AgentToken,
    Channel,
    DecayPass,
    Revision,
    Subject,
)
from stores.services.agents import (
    AGENT_SETTINGS,
    SUBJECT_FIELDS,
    access_grant,
    access_revoke,
    agent_create,
    agent_update,
    subject_create,
    subject_update,
    token_revoke,
)
from stores.surfaces import SURFACES, SurfaceSpec


def _actor(request: HttpRequest) -> Actor:
    return Actor.for_user(request.user, channel=Channel.UI)


def _settled(result: WriteResult) -> WriteResult:
    """A service's refusal stops the admin's save (nothing was written); no_change is fine."""
    if not result.ok and result.status is not Status.NO_CHANGE:
        raise PermissionDenied(f"{result.status}: {result.message}")
    return result


def _adopt(obj: Any, result: WriteResult) -> None:
    """The admin's object stands for the row the service wrote: its log entry and the page
    after the save need the row's id."""
    obj.pk = _settled(result).id
    obj._state.adding = False


class _WrittenByServices(admin.ModelAdmin):
    """An admin whose saves are its model's service writes: a change sends the fields the
    form changed to `update`, an addition the form's values to `create`. Deleting here is
    not offered."""

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(
        self, request: HttpRequest, obj: Any, form: forms.ModelForm, change: bool
    ) -> None:
        if change:
            changed = {name: form.cleaned_data[name] for name in form.changed_data}
            _settled(self.update(_actor(request), obj, changed))
        else:
            _adopt(obj, self.create(_actor(request), obj, form.cleaned_data))

    def update(self, actor: Actor, obj: Any, values: dict[str, Any]) -> WriteResult:
        raise NotImplementedError

    def create(self, actor: Actor, obj: Any, data: dict[str, Any]) -> WriteResult:
        raise NotImplementedError


@admin.register(Agent)
class AgentAdmin(_WrittenByServices):
    """Added through `agent_create` (as the web UI's *New agent*), changed through
    `agent_update`; deleting one (and all it remembers) is not done here."""

    list_display = [
        "name",
        "display_name",
        "self_editing_enabled",
        "review_mode",
        "credentials_policy",
        "personal_data_policy",
        "created_at",
    ]
    search_fields = ["name", "display_name"]

    def get_fields(self, request: HttpRequest, obj: Agent | None = None) -> tuple[str, ...]:
        return ("name", *AGENT_SETTINGS, *(["created_at"] if obj is not None else []))

    def get_readonly_fields(self, request: HttpRequest, obj: Agent | None = None) -> list[str]:
        return ["name", "created_at"] if obj is not None else []

    def update(self, actor: Actor, obj: Agent, values: dict[str, Any]) -> WriteResult:
        current = Agent.objects.get(pk=obj.pk)
        return agent_update(actor=actor, agent=current, values=values)

    def create(self, actor: Actor, obj: Agent, data: dict[str, Any]) -> WriteResult:
        settings = {name: data[name] for name in AGENT_SETTINGS}
        return agent_create(actor=actor, name=data["name"], **settings)


@admin.register(Subject)
class SubjectAdmin(_WrittenByServices):
    """Added and changed through `subject_create` / `subject_update`. Deleting a subject would
    delete its memories without a revision: not done here."""

    list_display = ["display_name", "external_id", "agent", "privacy_level", "kind"]
    list_filter = ["agent", "privacy_level", "kind"]
    search_fields = ["display_name", "external_id"]

    def get_readonly_fields(self, request: HttpRequest, obj: Subject | None = None) -> list[str]:
        return ["agent"] if obj is not None else []

    def update(self, actor: Actor, obj: Subject, values: dict[str, Any]) -> WriteResult:
        current = Subject.objects.select_related("agent").get(pk=obj.pk)
        return subject_update(actor=actor, subject=current, values=values)

    def create(self, actor: Actor, obj: Subject, data: dict[str, Any]) -> WriteResult:
        values = {name: data[name] for name in SUBJECT_FIELDS}
        return subject_create(actor=actor, agent=obj.agent, **values)


@admin.register(AgentAccess)
class AgentAccessAdmin(admin.ModelAdmin):
    """Grants are given, changed and withdrawn through `access_grant` / `access_revoke`."""

    list_display = ["user", "agent", "role"]
    list_filter = ["role", "agent"]

    def get_readonly_fields(
        self, request: HttpRequest, obj: AgentAccess | None = None
    ) -> list[str]:
        return ["user", "agent"] if obj is not None else []

    def save_model(
        self, request: HttpRequest, obj: AgentAccess, form: forms.ModelForm, change: bool
    ) -> None:
        _adopt(
            obj, access_grant(actor=_actor(request), agent=obj.agent, user=obj.user, role=obj.role)
        )

    def delete_model(self, request: HttpRequest, obj: AgentAccess) -> None:
        _settled(access_revoke(actor=_actor(request), access=obj))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[AgentAccess]) -> None:
        actor = _actor(request)
        for access in queryset.select_related("agent", "user"):
            _settled(access_revoke(actor=actor, access=access))


@admin.register(AgentToken)
class AgentTokenAdmin(admin.ModelAdmin):
    """Read-only: tokens are created in the web UI or by `create_agent_token` (the secret is
    shown once there), and revoked with the action below, through `token_revoke`."""

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
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: AgentToken | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: AgentToken | None = None) -> bool:
        return False

    @admin.action(description="Revoke the selected tokens", permissions=["view"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[AgentToken]) -> None:
        actor = _actor(request)
        for token in queryset.select_related("agent"):
            result = token_revoke(actor=actor, token=token)
            level = messages.SUCCESS if result.ok else messages.WARNING
            self.message_user(request, f"{token}: {result.status}: {result.message}", level)
            if result.ok:
                self.log_change(request, token, [{"changed": {"fields": ["revoked_at"]}}])


class SurfaceAdmin(admin.ModelAdmin):
    """Read-only: every field is shown, none is written from here."""

    list_select_related = ["agent"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


def _short_fields(spec: SurfaceSpec) -> list[models.Field[Any, Any]]:
    """A surface's fields an admin list shows in a column: its natural key, then its list's
    columns, each a field of its own that is neither a long text nor a relation."""
    names = [*(spec.natural_key or ()), *(column.field for column in spec.columns)]
    shown: list[models.Field[Any, Any]] = []
    for name in dict.fromkeys(names):
        try:
            field = spec.model._meta.get_field(name)
        except FieldDoesNotExist:
            continue
        long_text = isinstance(field, models.TextField)
        if isinstance(field, models.Field) and not field.is_relation and not long_text:
            shown.append(field)
    return shown


def surface_admin(spec: SurfaceSpec) -> type[SurfaceAdmin]:
    """The read-only admin of a surface's records, from its spec: its short fields listed,
    its choices and flags filtered on, searched where its list searches."""
    model = spec.model
    short = _short_fields(spec)
    listed = [field.name for field in short]
    filtered = [
        field.name for field in short if field.choices or isinstance(field, models.BooleanField)
    ]
    has_embedding = any(field.name == "embedding" for field in model._meta.get_fields())
    return type(
        f"{model.__name__}Admin",
        (SurfaceAdmin,),
        {
            "__module__": __name__,
            "list_display": ["id", "agent", *listed, "version", "updated_at"],
            "list_filter": ["agent", *filtered],
            "search_fields": list(spec.search_fields),
            "exclude": ["embedding"] if has_embedding else [],
        },
    )


# One admin per surface, named after its model (`MemoryAdmin`, …).
SURFACE_ADMINS = {
    key: admin.register(spec.model)(surface_admin(spec)) for key, spec in SURFACES.items()
}


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
