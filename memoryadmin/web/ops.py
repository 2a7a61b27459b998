"""The catalog's ops as the record page offers them: a form per op, derived from its params.

The generic write view (`views.records.record_op`) serves every op here. What is the page's
own is said here and only here: it edits one phrase at a time (no batch), sets one field
per form (the form's `field` names it), and shows a revert in the history it was made from.

Where an op's form stands is the op's own declaration (`Op.page`: the text column, beside
the properties, last there, the history page, or within another op's form, which draws its
button from the declared words). The form is the op's partial, `templates/web/ops/<op>.html`,
or, for an op with none, the generic form (`web/ops/_generic.html`) built from its parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from django import forms
from django.template import TemplateDoesNotExist
from django.template.loader import get_template

from memoryadmin.web.access import AgentScope
from memoryadmin.web.forms import BoundedJSONField, TypedTextField
from stores.engine.results import WriteResult
from stores.opnames import OpName
from stores.ops.catalog import CATALOG, FIELD_PARAMS, Op, Place, Target, ops_of
from stores.ops.params import Kind, Param
from stores.surfaces import SURFACES

# The places beside a record's properties; the other column is its text's (`Place.TEXT`).
_PROPERTIES_COLUMN = frozenset({Place.PROPERTIES, Place.LAST})
GENERIC_FORM = "web/ops/_generic.html"
# How the page words a field set on its own where its name alone is not enough.
FIELD_LABELS = {
    "tags": "Tags (comma-separated)",
    "pinned": "Pinned (does not decay)",
    "schedule": "Schedule (cron)",
}
# The kinds of field a person sets in a line of the page; numbers and objects have ops or
# the create form.
_LINE_KINDS = frozenset({Kind.STRING, Kind.TAGS, Kind.BOOLEAN})


def param_field(param: Param) -> forms.Field | None:
    """One op parameter as a field of the page's form (None: the page does not offer it)."""
    label = param.label or param.name.replace("_", " ").capitalize()
    common: dict[str, Any] = {"required": param.required, "label": label}
    match param.kind:
        case Kind.EDITS | Kind.SOURCE:
            # A person's write has no conversation behind it; a batch is an agent's.
            return None
        case Kind.TEXT:
            # A text may be empty, and a form always posts it: present, never "required".
            return TypedTextField(required=False, label=label)
        case Kind.STRING | Kind.REF:
            return forms.CharField(max_length=param.max_length or 255, empty_value=None, **common)
        case Kind.REFS:
            # One line of refs; the op counts them against its limit of items.
            return forms.CharField(empty_value=None, **common)
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
            return BoundedJSONField(**common)
    raise ValueError(f"No form field for parameters of kind {param.kind}.")


class OpForm(forms.Form):
    """What the record page posts for one op; `values()` is what the op is called with."""

    op: Op

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
def op_form(op: Op, surface_key: str) -> type[OpForm]:
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
    op: Op

    @property
    def previews(self) -> bool:
        return self.op.previews

    @property
    def shown_in_timeline(self) -> bool:
        return self.op.page.answers_in_history

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
    if not op.writes or op.page.place is Place.NOWHERE or not op.applies_to(surface):
        return None
    return WebOp(op)


def page_ops(surface: str) -> list[Op]:
    """The ops the record page of `surface` offers, in catalog order."""
    return [op for op in ops_of(surface) if web_op(op.name, surface) is not None]


@cache
def op_template(name: str) -> str:
    """The op's own partial, or the generic form when it has none."""
    own = f"web/ops/{name}.html"
    try:
        get_template(own)
    except TemplateDoesNotExist:
        return GENERIC_FORM
    return own


# Where each place is, in a person's words.
_PLACES = {
    Place.TEXT: "record page, text column",
    Place.PROPERTIES: "record page, beside the properties",
    Place.LAST: "record page, beside the properties, last",
    Place.HISTORY: "history page, beside each revision",
}


def form_place(op: Op) -> str:
    """Where the web UI offers `op` and what draws its form, in words."""
    page = op.page
    if page.place is Place.WITHIN:
        button = f", its button {page.button!r}" if page.button else ""
        place = f"within {page.within}'s form{button}"
    elif page.place is Place.NOWHERE:
        place = "not on a record's page"
    elif page.place is Place.HISTORY:
        place = _PLACES[page.place]
    else:
        template = op_template(op.name)
        drawn = "the generic form" if template == GENERIC_FORM else f"templates/{template}"
        place = f"{_PLACES[page.place]}: {drawn}"
    return f"{place}; the list's bulk actions" if op.bulk else place


@dataclass(frozen=True)
class PageOp:
    """One op as the record page shows it: the template it is drawn with, for the generic
    form the form itself, and the ops offered within its form that it draws as buttons."""

    op: Op
    template: str
    form: OpForm | None
    buttons: tuple[Op, ...] = ()

    @property
    def name(self) -> str:
        return self.op.name.value

    @property
    def starts_document(self) -> bool:
        """Offered before the agent's one document is stored: its first write stores it."""
        return self.op.target is Target.DOCUMENT


def record_page_ops(surface: str) -> tuple[list[PageOp], list[PageOp]]:
    """The record page's ops of `surface`: those on its text, and those beside its properties
    (those declared last, last), each where its op declares it."""
    offered = page_ops(surface)
    text: list[PageOp] = []
    fields: list[PageOp] = []
    # An agent's one document (the rules) is changed in its text only.
    whole_document = SURFACES[surface].one_per_agent
    for op in offered:
        place = op.page.place
        on_record = place is Place.TEXT or place in _PROPERTIES_COLUMN
        if not on_record or (whole_document and not op.previews):
            continue
        template = op_template(op.name)
        form = op_form(op, surface)() if template == GENERIC_FORM else None
        buttons = tuple(
            sorted(
                (other for other in offered if other.page.within is op.name and other.page.button),
                key=lambda other: other.page.danger,
            )
        )
        entry = PageOp(op, template, form, buttons)
        (text if place is Place.TEXT else fields).append(entry)
    fields.sort(key=lambda entry: entry.op.page.place is Place.LAST)
    return text, fields


def field_entries(op: Op, surface: str, record: Any) -> list[dict[str, Any]]:
    """The fields `op` sets one at a time on the page, each with its value on `record`."""
    if not op.settable_fields:
        return []
    entries = []
    for param in op.params(surface):
        if param.name not in FIELD_PARAMS or param.kind not in _LINE_KINDS:
            continue
        value = getattr(record, param.name)
        entries.append(
            {
                "name": param.name,
                "kind": param.kind.value,
                "pattern": param.pattern,
                "label": FIELD_LABELS.get(param.name, param.name.replace("_", " ").capitalize()),
                "value": ", ".join(value) if param.kind is Kind.TAGS else value,
                "button": "Rename" if _names_record(surface, param.name) else "Save",
            }
        )
    return entries


def _names_record(surface: str, name: str) -> bool:
    natural_key = SURFACES[surface].natural_key or ()
    return name in natural_key


class BulkForm(forms.Form):
    """The list's bulk action on the selected records: an op offered in bulk (with the
    parameters it needs), or approving what awaits review."""

    APPROVE = ("approve", "Approve pending changes")
    ops: tuple[Op, ...] = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Any id may be posted; the service decides whether the record exists for this agent.
        posted = self.data.getlist("ids") if hasattr(self.data, "getlist") else []
        ids = self.fields["ids"]
        assert isinstance(ids, forms.ChoiceField)
        ids.choices = [(value, value) for value in posted]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        op = self.op()
        for param in op.params() if op is not None else ():
            if param.required and cleaned.get(param.name) is None:
                self.add_error(param.name, f"Give the {param.name} to set: {param.description}")
        return cleaned

    def op(self) -> Op | None:
        """The op the chosen action runs; None for an approval."""
        action = self.cleaned_data.get("action")
        return next((op for op in self.ops if op.name == action), None)

    def action_label(self) -> str:
        op = self.op()
        return _op_label(op) if op is not None else self.APPROVE[1]

    def values(self) -> dict[str, Any]:
        """What the op is called with on each selected record."""
        op = self.op()
        names = [param.name for param in op.params() if param.required] if op else []
        return {name: self.cleaned_data[name] for name in names}

    def bulk_entries(self) -> list[dict[str, Any]]:
        """The ops as the list bar offers them, each with the fields it needs."""
        return [
            {
                "name": op.name.value,
                "label": _op_label(op),
                "fields": [self[p.name] for p in op.params() if p.required],
            }
            for op in self.ops
        ]


def _op_label(op: Op) -> str:
    return op.name.replace("_", " ").capitalize()


@cache
def bulk_form(surface: str) -> type[BulkForm]:
    """The bulk form of `surface`'s list, from the ops offered in bulk there."""
    ops = tuple(op for op in ops_of(surface) if op.bulk)
    fields: dict[str, Any] = {
        "ops": ops,
        "action": forms.ChoiceField(
            choices=[*((op.name.value, _op_label(op)) for op in ops), BulkForm.APPROVE]
        ),
        "ids": forms.TypedMultipleChoiceField(coerce=int, choices=(), required=True),
    }
    for op in ops:
        for param in op.params():
            field = param_field(param) if param.required else None
            if field is not None:
                field.required = False
                if param.kind is Kind.NUMBER:
                    field.widget.attrs.update({"step": "0.05", "class": "num"})
                fields[param.name] = field
    return type(f"{surface.title()}BulkForm", (BulkForm,), fields)
