"""Forms that parse what a person typed; they never save (the edit service does)."""

from __future__ import annotations

from typing import Any

from django import forms

from stores.models import Agent, Revision
from stores.selectors.filters import MEMORY_FILTERS, FilterSpec


class TypedTextField(forms.CharField):
    """Text typed in a textarea, as the person typed it: a browser posts every line break of a
    textarea as CRLF (the HTML form encoding), while the text it held, as htmx sends it, had
    LF. Without this a record created or a phrase found by a plain form post would differ
    from the same one sent by script."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("strip", False)
        super().__init__(**kwargs)

    def to_python(self, value: Any) -> Any:
        text = super().to_python(value)
        return text.replace("\r\n", "\n") if isinstance(text, str) else text


def filter_field(spec: FilterSpec) -> forms.Field:
    """One memory filter as a field of the list's form, from its one declaration."""
    common = {"required": False, "label": spec.label}
    if spec.kind is bool:
        return forms.BooleanField(**common)
    if spec.kind is float:
        return forms.FloatField(
            min_value=spec.minimum,
            max_value=spec.maximum,
            widget=forms.NumberInput(attrs={"step": "0.05", "class": "num"}),
            **common,
        )
    if spec.choices:
        return forms.ChoiceField(
            choices=[("", f"Any {spec.label.lower()}"), *spec.choices], **common
        )
    return forms.CharField(max_length=spec.max_length, **common)


# Every memory filter under its query-string name, as the REST recall takes it.
MemoryFilterForm = type(forms.Form)(
    "MemoryFilterForm",
    (forms.Form,),
    {"__module__": __name__, **{spec.param: filter_field(spec) for spec in MEMORY_FILTERS}},
)


class ListFilterForm(MemoryFilterForm):
    """Search, filters and sorting of a surface list (fields unused by a surface are ignored).

    The memory filters are MemoryFilters' own, so the list filters as recall does; the rest
    are the list's (other surfaces, review state, sorting).
    """

    INVALIDATED_CHOICES = [
        ("", "Hide invalidated"),
        ("include", "Include invalidated"),
        ("only", "Only invalidated"),
    ]
    ENABLED_CHOICES = [("", "Enabled or not"), ("yes", "Enabled"), ("no", "Disabled")]

    namespace = forms.CharField(required=False, max_length=100)
    invalidated = forms.ChoiceField(required=False, choices=INVALIDATED_CHOICES)
    enabled = forms.ChoiceField(required=False, choices=ENABLED_CHOICES)
    stale = forms.BooleanField(required=False, label="Stale embedding")
    pending = forms.BooleanField(required=False, label="Awaiting review")
    sort = forms.CharField(required=False, max_length=20)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        # The page asks for include_invalidated with this three-way choice; "only" lists
        # among them and the list narrows it further (web.selectors).
        if cleaned.get("invalidated") in ("include", "only"):
            cleaned["include_invalidated"] = True
        return cleaned


class ReviewActionForm(forms.Form):
    ACTIONS = [("approve", "Approve"), ("revert", "Revert")]

    action = forms.ChoiceField(choices=ACTIONS)
    revisions = forms.TypedMultipleChoiceField(coerce=int, choices=(), required=True)

    def __init__(self, *args, pending: list[int], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["revisions"].choices = [(pk, pk) for pk in pending]


class ReviewModeForm(forms.Form):
    review_mode = forms.ChoiceField(choices=Agent.ReviewMode.choices)


class TakebackForm(forms.Form):
    conversation = forms.CharField(
        max_length=Revision._meta.get_field("source_conversation").max_length, strip=False
    )
    # Show what would be taken back, writing nothing.
    preview = forms.BooleanField(required=False)


class HoldForm(forms.Form):
    conversation = forms.CharField(
        max_length=Revision._meta.get_field("source_conversation").max_length, strip=False
    )
    # Unticked: trust it again.
    held = forms.BooleanField(required=False)


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100)
    read_only = forms.BooleanField(required=False)
    expires_in_days = forms.IntegerField(required=False, min_value=1, max_value=3650)


class AgentForm(forms.Form):
    name = forms.CharField(
        max_length=100,
        help_text="As people will read it, e.g. “RockBot”; its address uses it in lower case "
        "with dashes (rockbot).",
    )
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))


class ErasureForm(forms.Form):
    """What a person erases: exactly one of a text, a record, a subject, or all of an agent's."""

    agent = forms.ModelChoiceField(queryset=Agent.objects.order_by("name"), to_field_name="name")
    text = forms.CharField(required=False, strip=False, help_text="Exact text, wherever it occurs.")
    record = forms.CharField(required=False, help_text="A record as surface:id, e.g. memory:42.")
    subject = forms.CharField(required=False, help_text="A subject's external id.")
    everything = forms.BooleanField(required=False, label="All of the agent's records")
    reason = forms.CharField(required=False, max_length=500, help_text="Kept in the receipt.")

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        named = [name for name in ("text", "record", "subject", "everything") if data.get(name)]
        if len(named) != 1:
            raise forms.ValidationError(
                "Name exactly one thing to erase: a text, a record, a subject or all."
            )
        return data
