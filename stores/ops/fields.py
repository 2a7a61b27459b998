"""Parameters several ops share, and the record fields a create or an update may set.

A field of a name `FIELD_PARAMS` does not declare is typed from its model field, so a new
surface's plain text and name fields need no entry here.
"""

from __future__ import annotations

from django.db import models

from stores.models import Memory
from stores.ops.params import NOT_BLANK, Kind, Param
from stores.surfaces import SURFACES, SurfaceSpec

EXPECTED_VERSION = Param(
    "expected_version",
    Kind.VERSION,
    "The version you read; the write is refused (conflict) if the record changed since.",
)
EXPECTED_SHA256 = Param(
    "expected_sha256",
    Kind.STRING,
    "The SHA-256 of the text you replace, as your full read gave it (content_sha256, or "
    "<field>_sha256): the proof you read all of it. Required to replace a text longer than a "
    "preview (500 characters); refused (conflict) if the text changed since.",
    min_length=64,
    max_length=64,
    pattern="^[0-9a-fA-F]{64}$",
)
DRY_RUN = Param(
    "dry_run",
    Kind.BOOLEAN,
    "true: run every check and answer as the write would (its status, the diff and the "
    "would-be text, with dry_run: true), writing nothing.",
    default=False,
)
SOURCE = Param(
    "source",
    Kind.SOURCE,
    "Where this write comes from, kept with it: conversation and message (ids, up to 200 "
    "characters), platform (a name, up to 50), url (http or https), excerpt (the words that "
    "led to the write, up to 1,000). The Memory-Source header sets it for a whole session.",
)
ALLOW_SHORTER = Param(
    "allow_shorter",
    Kind.BOOLEAN,
    "true only when you mean to shorten the text on purpose, keeping its beginning and "
    "dropping the rest; never to get past a refusal of a text made from a preview.",
    default=False,
)


def _text_fields(spec: SurfaceSpec) -> tuple[str, ...]:
    return spec.text_fields


TEXT_FIELD = Param(
    "field",
    Kind.CHOICE,
    "The text field to change when the record has more than one (skills: content or "
    "summary); the first one otherwise.",
    choices_of=_text_fields,
)
# A revision's id, up to the largest a (big integer) primary key holds.
REVISION_ID = Param(
    "revision_id", Kind.INTEGER, "The revision.", required=True, minimum=1, maximum=2**63 - 1
)
HEADING = Param("heading", Kind.STRING, "The section's heading text, e.g. 'Steps'.", max_length=500)
INSERTED_LINES = Param("content", Kind.TEXT, "The lines to insert.", required=True, min_length=1)
RULE = Param(
    "rule",
    Kind.TEXT,
    "The rule's current text, as written.",
    required=True,
    min_length=1,
    pattern=NOT_BLANK,
)


def _cron_field(value: str) -> str:
    item = rf"(\*|{value}(-{value})?)(/[1-9][0-9]?)?"
    return rf"{item}(,{item})*"


# Five numeric cron fields, each in its range: what an agent writes, and all croniter takes.
CRON_PATTERN = (
    "^"
    + " ".join(
        _cron_field(value)
        for value in (
            "[1-5]?[0-9]",
            "(1?[0-9]|2[0-3])",
            "([1-9]|[12][0-9]|3[01])",
            "([1-9]|1[0-2])",
            "[0-6]",
        )
    )
    + "$"
)

# The longest time to live the service takes.
TEN_YEARS = 10 * 365 * 24 * 3600

# The fields a create or a field update may set, by name, whichever surface has them.
FIELD_PARAMS: dict[str, Param] = {
    param.name: param
    for param in (
        Param("content", Kind.TEXT, "The text."),
        Param(
            "store",
            Kind.CHOICE,
            "Which long-term store: the editable one (every op; the default), episodic "
            "(history, only invalidated) or fact (a read-only projection). The editable store's "
            "value is 'working', kept for compatibility; it is not the working-memory surface.",
            choices=tuple(Memory.Store.values),
        ),
        Param("category", Kind.STRING, "A category word.", max_length=100),
        Param("tags", Kind.TAGS, "Tags, each a short word."),
        Param("importance", Kind.NUMBER, "0..1; values outside are clamped."),
        Param("importance_floor", Kind.NUMBER, "Decay never takes importance below this."),
        Param("pinned", Kind.BOOLEAN, "Pinned memories never decay."),
        Param("metadata", Kind.OBJECT, "Free-form JSON data."),
        Param(
            "subject",
            Kind.STRING,
            "External id of the person this memory is about; absent: the shared bank.",
            max_length=255,
        ),
        Param(
            "alias",
            Kind.STRING,
            "The id the record had in the store it came from.",
            max_length=255,
        ),
        Param("namespace", Kind.STRING, "The entry's namespace.", max_length=100),
        Param("key", Kind.STRING, "The entry's key within its namespace.", max_length=255),
        Param("value", Kind.TEXT, "The entry's value."),
        Param(
            "ttl", Kind.INTEGER, "Seconds from now until it expires.", minimum=1, maximum=TEN_YEARS
        ),
        Param("expires_at", Kind.MOMENT, "When it expires."),
        Param("name", Kind.STRING, "The name.", max_length=200),
        Param("summary", Kind.TEXT, "A one-paragraph summary."),
        Param(
            "schedule",
            Kind.STRING,
            "A cron expression of five numeric fields, e.g. '0 7 * * 1-5'.",
            max_length=100,
            pattern=CRON_PATTERN,
        ),
        Param("directive", Kind.TEXT, "What the task tells the agent to do."),
        Param("enabled", Kind.BOOLEAN, "Whether the task runs."),
    )
}


def _model_field_param(spec: SurfaceSpec, name: str) -> Param:
    """A field no entry above declares, typed from its model field, so that a new surface's
    plain text and name fields need no entry (its help_text is what a model is told)."""
    field = spec.model._meta.get_field(name)
    assert isinstance(field, models.Field)
    description = str(field.help_text or field.verbose_name).rstrip(".") + "."
    if isinstance(field, models.TextField):
        return Param(name, Kind.TEXT, description)
    if isinstance(field, models.CharField):
        # A validator may say its rules as a pattern, for the schemas to state them.
        patterns = [getattr(v, "pattern", None) for v in field.validators]
        pattern = next((p for p in patterns if isinstance(p, str)), None)
        return Param(name, Kind.STRING, description, max_length=field.max_length, pattern=pattern)
    raise TypeError(f"Declare {spec.key}'s field {name!r} in FIELD_PARAMS: not a text or a name.")


for _spec in SURFACES.values():
    for _name in (*_spec.create_fields, *_spec.updatable_fields):
        if _name not in FIELD_PARAMS:
            FIELD_PARAMS[_name] = _model_field_param(_spec, _name)


def settable(spec: SurfaceSpec) -> tuple[str, ...]:
    """The fields an update may set on records of `spec`."""
    return (*spec.text_fields, *spec.updatable_fields)


def creatable(spec: SurfaceSpec) -> tuple[str, ...]:
    """The fields a create may set on records of `spec`."""
    return spec.create_fields
