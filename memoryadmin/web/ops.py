"""The service ops the record page offers, each named as the service names it.

One entry per op: the form that parses what was posted and the service function it calls.
The generic write view (`views.records.record_op`) is built from this table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memoryadmin.web import forms
from memoryadmin.web.access import AgentScope
from stores.services import (
    WriteResult,
    memory_invalidate,
    memory_reinforce,
    memory_set_importance,
    record_edit,
    record_forget,
    record_revert,
    record_update,
    rules_add,
    rules_remove,
    rules_replace,
    skill_append,
    skill_delete_section,
    skill_replace_section,
    working_set_ttl,
)

ALL = None


@dataclass(frozen=True)
class WebOp:
    service: Callable[..., WriteResult]
    form: type[forms.OpForm]
    surfaces: tuple[str, ...] | None = ALL
    # Surface-wide ops take the surface's key; the rules ops find the agent's one document.
    takes_surface: bool = False
    takes_ref: bool = True
    # A text op the page previews (the service's dry run) before it is confirmed.
    previews: bool = False
    # Where a success is shown: the record panel, or the history timeline it was made from.
    shown_in: str = "panel"

    def call(
        self,
        *,
        scope: AgentScope,
        surface: str,
        pk: int,
        form: forms.OpForm,
        dry_run: bool = False,
        version: int | None = None,
    ) -> WriteResult:
        """The service call for `form`, at the version it was loaded with unless `version`."""
        kwargs: dict[str, Any] = {
            "agent": scope.agent,
            "actor": scope.actor,
            "expected_version": version or form.cleaned_data["expected_version"],
            **form.arguments(),
        }
        if self.takes_surface:
            kwargs["surface_key"] = surface
        if self.takes_ref:
            kwargs["ref"] = pk
        if dry_run:
            kwargs["dry_run"] = True
        return self.service(**kwargs)


WEB_OPS: dict[str, WebOp] = {
    "record_edit": WebOp(record_edit, forms.PhraseEditForm, takes_surface=True, previews=True),
    "record_update": WebOp(record_update, forms.FieldUpdateForm, takes_surface=True),
    "record_forget": WebOp(
        record_forget,
        forms.VersionForm,
        surfaces=("memory", "working", "skill", "task"),
        takes_surface=True,
    ),
    "record_revert": WebOp(
        record_revert, forms.RevertForm, takes_surface=True, previews=True, shown_in="timeline"
    ),
    "memory_set_importance": WebOp(memory_set_importance, forms.ImportanceForm, ("memory",)),
    "memory_invalidate": WebOp(memory_invalidate, forms.InvalidateForm, ("memory",)),
    "memory_reinforce": WebOp(memory_reinforce, forms.VersionForm, ("memory",)),
    "working_set_ttl": WebOp(working_set_ttl, forms.TtlForm, ("working",)),
    "skill_append": WebOp(skill_append, forms.SectionAppendForm, ("skill",), previews=True),
    "skill_replace_section": WebOp(
        skill_replace_section, forms.SectionReplaceForm, ("skill",), previews=True
    ),
    "skill_delete_section": WebOp(
        skill_delete_section, forms.SectionDeleteForm, ("skill",), previews=True
    ),
    "rules_add": WebOp(rules_add, forms.RuleAddForm, ("rules",), takes_ref=False, previews=True),
    "rules_remove": WebOp(
        rules_remove, forms.RuleRemoveForm, ("rules",), takes_ref=False, previews=True
    ),
    "rules_replace": WebOp(
        rules_replace, forms.RuleReplaceForm, ("rules",), takes_ref=False, previews=True
    ),
}


def web_op(name: str, surface: str) -> WebOp | None:
    """The op `name` if the page offers it on records of `surface`."""
    op = WEB_OPS.get(name)
    if op is None or (op.surfaces is not ALL and surface not in op.surfaces):
        return None
    return op


def ops_of(surface: str) -> list[str]:
    return [name for name in WEB_OPS if web_op(name, surface) is not None]
