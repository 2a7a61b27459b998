"""A new record of any listed surface: a form built from the create op's parameters on the
surface, run by the op as every door runs it.

The form only parses what a person typed (a number, a date, a JSON object, a bank); the
service checks the values and the store rules, and its refusal is shown above the form.
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import messages
from django.db import models
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.text import capfirst
from django.views.decorators.http import require_http_methods

from memoryadmin.web.access import AgentScope, agent_view
from memoryadmin.web.forms import TypedTextField
from memoryadmin.web.surfaces import SurfaceUI, surface_ui
from memoryadmin.web.views.common import (
    detail_url,
    form_refusal,
    http_status,
    read_only_refusal,
    resend_despite_scan,
    scan_override,
)
from stores.engine.results import WriteResult
from stores.models import Agent, Subject
from stores.opnames import OpName
from stores.ops.catalog import CATALOG
from stores.ops.params import Kind
from stores.services import bounded_json
from stores.surfaces import SurfaceSpec

# What the page calls a field where the model's own name is not what a reviewer reads.
LABELS = {
    "subject": "Bank",
    "store": "Store",
    "alias": "Original id",
    "ttl": "Expires after (seconds)",
    "expires_at": "Expires at (UTC)",
    "importance_floor": "Importance floor",
    "content": "Text",
}
HELP = {
    "alias": "The id the record has in another store, if any; it then resolves like the id.",
    "tags": "Comma-separated.",
    "metadata": "A JSON object.",
    "schedule": "A cron expression, such as 0 7 * * *.",
    "ttl": "Or give an exact time below; empty: never expires.",
    "store": "Editable memories may be changed; episodic ones only invalidated; facts never.",
    "importance": "0 to 1.",
    "importance_floor": "Decay never takes importance below this (0 to 1).",
}


class JSONObjectField(forms.CharField):
    """A JSON object typed as text; the service checks its depth and size."""

    widget = forms.Textarea(attrs={"rows": 3, "spellcheck": "false"})

    def clean(self, value: Any) -> Any:
        text = super().clean(value)
        if not text:
            return None
        try:
            parsed = bounded_json.loads(text)
        except json.JSONDecodeError as error:
            raise forms.ValidationError(f"is not JSON ({error.msg}).") from None
        except bounded_json.JsonTooDeep as refusal:
            raise forms.ValidationError(f"{refusal.reason}.") from None
        if not isinstance(parsed, dict):
            raise forms.ValidationError('must be a JSON object, such as {"source": "chat"}.')
        return parsed


def _field(spec: SurfaceSpec, name: str, agent: Agent) -> forms.Field:
    """The form field for create field `name`, from the model field it sets."""
    if name == "ttl":  # not a model field: the service turns it into expires_at
        return forms.IntegerField(required=False, min_value=1, label=LABELS[name])
    model_field = spec.model._meta.get_field(name)
    common: dict[str, Any] = {
        "label": LABELS.get(name, capfirst(model_field.verbose_name)),
        "help_text": HELP.get(name, model_field.help_text),
        "required": not (model_field.blank or model_field.null or model_field.has_default()),
    }
    if name in spec.text_fields:
        rows = 8 if name == spec.primary_text_field else 2
        return TypedTextField(widget=forms.Textarea(attrs={"rows": rows}), **common)
    if model_field.choices:
        return forms.ChoiceField(choices=model_field.choices, initial=model_field.default, **common)
    if isinstance(model_field, models.ForeignKey):
        return forms.ModelChoiceField(
            queryset=Subject.objects.filter(agent=agent).order_by("display_name"),
            empty_label="shared (about nobody in particular)",
            **common,
        )
    if isinstance(model_field, models.BooleanField):
        return forms.BooleanField(initial=model_field.default, **{**common, "required": False})
    if isinstance(model_field, models.FloatField):
        return forms.FloatField(
            initial=model_field.default,
            widget=forms.NumberInput(attrs={"step": "0.05", "class": "num"}),
            **common,
        )
    if isinstance(model_field, models.DateTimeField):
        return forms.DateTimeField(
            widget=forms.DateTimeInput(attrs={"type": "datetime-local"}), **common
        )
    if name == "metadata":
        return JSONObjectField(**common)
    # Tags (a list typed comma-separated) and the plain strings.
    max_length = getattr(model_field, "max_length", None)
    initial = model_field.default if isinstance(model_field.default, str) else None
    return forms.CharField(max_length=max_length, initial=initial, **common)


def create_form(spec: SurfaceSpec, agent: Agent) -> type[forms.Form]:
    """A form with one field per parameter the create op takes on `spec`, in its order."""
    # A person's write has no conversation behind it: the form asks no source.
    params = [p for p in CATALOG[OpName.CREATE].params(spec.key) if p.kind is not Kind.SOURCE]
    fields = {param.name: _field(spec, param.name, agent) for param in params}
    return type(forms.Form)(f"{spec.key.title()}CreateForm", (forms.Form,), fields)


def create_values(form: forms.Form) -> dict[str, Any]:
    """What the create op takes: the fields filled in (a flag always), so the rest keep
    their defaults."""
    return {
        name: value
        for name, value in form.cleaned_data.items()
        if isinstance(form.fields[name], forms.BooleanField) or value not in (None, "")
    }


@require_http_methods(["GET", "POST"])
@agent_view
def record_new(request: HttpRequest, scope: AgentScope, surface: str) -> HttpResponse:
    ui = surface_ui(surface)
    if not ui.listed:
        # The agent's one record of such a surface (its rules.md) is started by opening it.
        return redirect("web:record_list", scope.agent.name, ui.key)
    form_class = create_form(ui.spec, scope.agent)
    form = form_class(request.POST if request.method == "POST" else None)
    refused: WriteResult | None = None
    if request.method == "POST":
        if not scope.can_write:
            refused = read_only_refusal()
        elif not form.is_valid():
            refused = form_refusal(form)
        else:
            with scan_override(request):
                result = CATALOG[OpName.CREATE].call(
                    agent=scope.agent,
                    actor=scope.actor,
                    values=create_values(form),
                    surface_key=ui.key,
                )
            if result.ok:
                messages.success(request, _created(ui, result))
                return redirect(detail_url(scope, ui, result.id))
            refused = result
    context = {"scope": scope, "agent": scope.agent, "ui": ui, "form": form, "refused": refused}
    if refused is not None:
        context.update(resend_despite_scan(request, refused))
    status = http_status(refused) if refused is not None else 200
    return render(request, "web/record_new.html", context, status=status)


def _created(ui: SurfaceUI, result: WriteResult) -> str:
    note = " Its importance was clamped to 0 to 1." if result.details.get("clamped") else ""
    return f"Created {ui.label.lower()} {result.id} (version 1).{note}"
