"""The catalog's ops as the record page offers them: a form per op, derived from its params.

The generic write view (`views.records.record_op`) serves every op here. What is the page's
own is said here and only here: it edits one phrase at a time (no batch), sets one field
per form (the form's `field` names it), and shows a revert in the history it was made from.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from django import forms

from memoryadmin.web.access import AgentScope
from memoryadmin.web.forms import TypedTextField
from stores.ops.catalog import CATALOG, FIELD_PARAMS, OpSpec, Rest, ops_of
from stores.ops.names import OpName
from stores.ops.params import Kind, Param
from stores.services import WriteResult

# Reads are pages of their own; the create page is the list's.
_PAGES = (Rest.LIST, Rest.RETRIEVE, Rest.CREATE)
_TIMELINE = frozenset({OpName.REVERT})


def param_field(param: Param) -> forms.Field | None:
    """One op parameter as a field of the page's form (None: the page does not offer it)."""
    label = param.label or param.name.replace("_", " ").capitalize()
    common: dict[str, Any] = {"required": param.required, "label": label}
    match param.kind:
        case Kind.EDITS:
            return None
        case Kind.TEXT:
            # A text may be empty, and a form always posts it: present, never "required".
            return TypedTextField(required=False, label=label)
        case Kind.STRING | Kind.REF:
            return forms.CharField(max_length=param.max_length or 255, empty_value=None, **common)
        case Kind.BOOLEAN:
            return forms.BooleanField(required=False, label=label)
        case Kind.VERSION:
            return forms.IntegerField(min_value=1, required=False, label=label)
        case Kind.INTEGER:
            return forms.IntegerField(min_value=param.minimum, max_value=param.maximum, **common)
        case Kind.NUMBER:
            return forms.FloatField(min_value=param.minimum, max_value=param.maximum, **common)
        case Kind.MOMENT:
            return forms.DateTimeField(**common)
        case Kind.CHOICE:
            choices = [(value, value) for value in param.choices]
            if not param.required:
                choices.insert(0, ("", "—"))
            return forms.ChoiceField(choices=choices, **common)
        case Kind.TAGS:
            return forms.CharField(required=False, label=label)
        case Kind.OBJECT:
            return forms.JSONField(**common)
    raise ValueError(f"No form field for parameters of kind {param.kind}.")


class OpForm(forms.Form):
    """What the record page posts for one op; `values()` is what the op is called with."""

    op: OpSpec

    def values(self) -> dict[str, Any]:
        data = self.cleaned_data
        if self.op.settable_fields:
            # One field per form: the others are not on it, so they must not be set.
            name = data["field"]
            return {name: data[name], "expected_version": data["expected_version"]}
        # Empty optional values are absent, as they would be in a JSON body.
        return {
            name: value
            for name, value in data.items()
            if value not in (None, "") or self.fields[name].required or _is_text(self, name)
        }

    def preview_hint(self) -> str | None:
        """Why there is nothing to preview yet, as the person types; None once there is."""
        if self.op.name is not OpName.EDIT:
            return None
        if not self.cleaned_data["old_string"]:
            return "select"
        if self.cleaned_data["old_string"] == self.cleaned_data["new_string"]:
            return "replacement"
        return None


def _is_text(form: OpForm, name: str) -> bool:
    param = next((p for p in form.op.params() if p.name == name), None)
    return param is not None and param.kind is Kind.TEXT and name in form.data


@cache
def op_form(op: OpSpec, surface_key: str) -> type[OpForm]:
    params = op.params(surface_key)
    fields = {
        param.name: field
        for param in params
        if param.name != "dry_run" and (field := param_field(param)) is not None
    }
    if op.settable_fields:
        names = [param.name for param in params if param.name in FIELD_PARAMS]
        fields["field"] = forms.ChoiceField(choices=[(name, name) for name in names])
        for name in names:
            fields[name].required = False
    return type(f"{op.name.title()}Form", (OpForm,), {"op": op, **fields})


@dataclass(frozen=True)
class WebOp:
    op: OpSpec

    @property
    def previews(self) -> bool:
        return self.op.previews

    @property
    def shown_in_timeline(self) -> bool:
        return self.op.name in _TIMELINE

    def form(self, data: Any, surface_key: str) -> OpForm:
        return op_form(self.op, surface_key)(data)

    def call(
        self,
        *,
        scope: AgentScope,
        surface: str,
        pk: int,
        form: OpForm,
        dry_run: bool = False,
        version: int | None = None,
    ) -> WriteResult:
        """The op for `form`, at the version it was loaded with unless `version`."""
        values = form.values()
        if version is not None:
            values["expected_version"] = version
        if dry_run:
            values["dry_run"] = True
        return self.op.call(
            agent=scope.agent, actor=scope.actor, values=values, surface_key=surface, ref=pk
        )


def web_op(name: str, surface: str) -> WebOp | None:
    """The op `name` if the page offers it on records of `surface`."""
    try:
        op = CATALOG[OpName(name)]
    except ValueError:
        return None
    if not op.writes or op.rest in _PAGES or not op.applies_to(surface):
        return None
    return WebOp(op)


def page_ops(surface: str) -> list[OpSpec]:
    """The ops the record page of `surface` offers, in catalog order."""
    return [op for op in ops_of(surface) if web_op(op.name, surface) is not None]
