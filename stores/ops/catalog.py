"""Every op of the edit service, declared once: the catalog each door is generated from.

An `OpSpec` says which surfaces an op applies to, the parameters it takes (`params`), how a
call reaches the service (`call`), what a model is told about it (`tool`) and where the REST
API serves it (`rest`). The REST actions (`memoryadmin.api`), the tools and so the MCP tools
(`stores.tools.native`) and the web page's op forms (`memoryadmin.web.ops`) are built by
walking `CATALOG`; none of them lists an op or a parameter of its own.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from django.db import models

from stores.editing import PhraseEdit, Status, TextEditError
from stores.errors import Invalid, NotFound, refusal_of
from stores.models import Agent, Memory
from stores.ops.names import OpName
from stores.ops.params import Kind, Param, given
from stores.selectors.filters import MEMORY_FILTERS, FilterSpec, MemoryFilters
from stores.selectors.records import MAX_OFFSET, only_record_id, record_data, record_lines
from stores.selectors.search import recall
from stores.services import (
    Actor,
    find_record,
    memory_invalidate,
    memory_reinforce,
    memory_set_importance,
    record_create,
    record_edit,
    record_forget,
    record_replace,
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
from stores.services.lines import record_insert, record_prepend
from stores.services.records import record_undo
from stores.services.skills import skill_insert_after_section, skill_insert_before_section
from stores.surfaces import SURFACES, SurfaceSpec, surface


class Target(StrEnum):
    # A new record of the surface: no record is named.
    SURFACE = "surface"
    # One record, named by its id or alias.
    RECORD = "record"
    # The agent's one document of the surface (the rules); naming it is optional.
    DOCUMENT = "document"


class Rest(StrEnum):
    """Where the REST API serves an op on a surface's collection or record."""

    CREATE = "create"  # POST <surface>/
    LIST = "list"  # GET <surface>/
    RETRIEVE = "retrieve"  # GET <surface>/<ref>/
    PARTIAL_UPDATE = "partial_update"  # PATCH <surface>/<ref>/
    DESTROY = "destroy"  # DELETE <surface>/<ref>/
    ACTION = "action"  # POST <surface>/<ref>/<op>/


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    # native, or the reference project whose tool shape it reproduces
    family: str = "native"


REFUSAL_ADVICE = (
    " A refusal (no_match, ambiguous, conflict, suspected_truncation, ...) means the text "
    "is not what you think: read the record again and base the next call on what you read; "
    "never repeat the same call unchanged."
)

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
HEADING = Param("heading", Kind.STRING, "The section's heading text, e.g. 'Steps'.", max_length=500)
INSERTED_LINES = Param("content", Kind.TEXT, "The lines to insert.", required=True, min_length=1)
RULE = Param("rule", Kind.TEXT, "The rule's current text, as written.", required=True)


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
            "Which long-term store: working (every op; the default), episodic (history, "
            "only invalidated) or fact (a read-only projection).",
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


def _model_field(spec: SurfaceSpec, name: str) -> models.Field[Any, Any]:
    """A field of the surface's own table (a parameter is never a reverse relation)."""
    field = spec.model._meta.get_field(name)
    if not isinstance(field, models.Field):
        raise TypeError(f"{spec.key}.{name} is a relation to another model, not a field.")
    return field


def _model_field_param(spec: SurfaceSpec, name: str) -> Param:
    """A field no entry above declares, typed from its model field, so that a new surface's
    plain text and name fields need no entry (its help_text is what a model is told)."""
    field = _model_field(spec, name)
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


def _settable(spec: SurfaceSpec) -> tuple[str, ...]:
    return (*spec.text_fields, *spec.updatable_fields)


def _creatable(spec: SurfaceSpec) -> tuple[str, ...]:
    return spec.create_fields


@functools.cache
def _params(op: OpSpec, key: str | None) -> tuple[Param, ...]:
    # The same for every call (specs and surfaces are fixed at import); each request of an
    # op asked for them two or three times, and building them was about 60 µs a time.
    return op._params(key)


@dataclass(frozen=True)
class OpSpec:
    name: OpName
    # One line for people: the API's summary and the page's button title.
    summary: str
    run: Callable[..., Any]
    parameters: tuple[Param, ...] = ()
    # None: every surface.
    surfaces: tuple[str, ...] | None = None
    writes: bool = True
    # The service takes the surface's key (ops every surface has).
    takes_surface: bool = False
    target: Target = Target.RECORD
    # Create and update set record fields: which ones a surface allows, handed to the
    # service in one dict under `gather`.
    fields: Callable[[SurfaceSpec], tuple[str, ...]] | None = None
    gather: str = ""
    # Exactly one of these groups must be given (each group whole).
    one_of: tuple[tuple[str, ...], ...] = ()
    # The write changes a whole text: the version read is required.
    needs_version: bool = False
    # A text op the service can run dry: every check, nothing written.
    previews: bool = False
    tool: ToolSpec | None = None
    rest: Rest = Rest.ACTION

    def applies_to(self, key: str) -> bool:
        return self.surfaces is None or key in self.surfaces

    def specs(self) -> list[SurfaceSpec]:
        return [spec for key, spec in SURFACES.items() if self.applies_to(key)]

    def params(self, key: str | None = None) -> tuple[Param, ...]:
        """What the op takes on records of surface `key` (None: on any of its surfaces)."""
        return _params(self, key)

    def _params(self, key: str | None) -> tuple[Param, ...]:
        specs = [surface(key)] if key is not None else self.specs()
        declared = [*self.parameters, *self._field_params(specs)]
        if self.writes and self.target is not Target.SURFACE:
            declared.append(replace(EXPECTED_VERSION, required=self.needs_version))
        if self.previews:
            declared.append(DRY_RUN)
        return tuple(param.for_surfaces(specs) for param in declared)

    def _field_params(self, specs: list[SurfaceSpec]) -> list[Param]:
        if self.fields is None:
            return []
        names: list[str] = []
        for spec in specs:
            names += [name for name in self.fields(spec) if name not in names]
        params = []
        for name in names:
            param = FIELD_PARAMS[name]
            required = self.name is OpName.CREATE and all(
                name in spec.create_required for spec in specs
            )
            # A text its model may not leave blank must not be empty on any of these surfaces.
            must_fill = param.kind is Kind.TEXT and not any(
                _model_field(spec, name).blank for spec in specs if name in self.fields(spec)
            )
            params.append(replace(param, required=required, min_length=1 if must_fill else None))
        return params

    @property
    def settable_fields(self) -> bool:
        return self.gather == "changes"

    def check(self, values: Mapping[str, Any], key: str | None = None) -> None:
        """Refuse what the parameters' types cannot say: which of them go together."""
        params = {param.name: param for param in self.params(key)}
        if self.one_of:
            complete = [
                group for group in self.one_of if all(given(params[n], values) for n in group)
            ]
            partial = [
                group for group in self.one_of if any(given(params[n], values) for n in group)
            ]
            if len(complete) != 1 or len(partial) != 1:
                choices = "; or ".join(" and ".join(group) for group in self.one_of)
                raise Invalid(f"Give exactly one of: {choices}.")
        if self.settable_fields and not any(
            name in values for name in params if name in FIELD_PARAMS
        ):
            raise Invalid("No fields to change.")

    def call(
        self,
        *,
        agent: Agent,
        actor: Actor,
        values: Mapping[str, Any],
        surface_key: str | None = None,
        ref: int | str | None = None,
    ) -> Any:
        """Run the op with door-parsed `values` (named as `params` names them)."""
        key = surface_key or self.specs()[0].key
        self.check(values, key)
        kwargs: dict[str, Any] = {"agent": agent, "actor": actor}
        gathered: dict[str, Any] = {}
        for param in self.params(key):
            if param.name not in values:
                continue
            value = values[param.name]
            if param.kind is Kind.EDITS:
                value = [
                    PhraseEdit(e["old_string"], e["new_string"], e.get("replace_all", False))
                    for e in value
                ]
            if self.fields is not None and param.name in FIELD_PARAMS:
                gathered[param.keyword] = value
            else:
                kwargs[param.keyword] = value
        if self.gather:
            kwargs[self.gather] = gathered
        if self.takes_surface:
            kwargs["surface_key"] = key
        if self.target is Target.RECORD:
            kwargs["ref"] = ref
        return self.run(**kwargs)


def _read(*, surface_key: str, agent: Agent, actor: Actor, ref: int | str | None) -> dict[str, Any]:
    spec = surface(surface_key)
    if ref is None:
        if not spec.one_per_agent:
            raise NotFound(f"Give the id of the {spec.label.lower()} to read.")
        ref = document_ref(spec, agent)
    record = find_record(spec, agent=agent, ref=ref, actor=actor)
    return {"status": str(Status.OK), "record": record_data(record)}


def _recall(*, agent: Agent, actor: Actor, **values: Any) -> dict[str, Any]:
    page = recall(
        agent=agent,
        filters=MemoryFilters.from_values(values),
        limit=values.get("limit", 10),
        offset=values.get("offset", 0),
    )
    return {
        "status": str(Status.OK),
        "count": page.total,
        "results": [hit.as_dict() for hit in page.hits],
    }


def _view(
    *,
    surface_key: str,
    agent: Agent,
    actor: Actor,
    ref: int | str | None,
    field: str | None = None,
    start: int = 1,
    end: int | None = None,
) -> dict[str, Any]:
    spec = surface(surface_key)
    record = find_record(spec, agent=agent, ref=ref or document_ref(spec, agent), actor=actor)
    try:
        view = record_lines(record, field=field, start=start, end=end)
    except TextEditError as error:
        raise refusal_of(error) from error
    return {"status": str(Status.OK), **view}


def document_ref(spec: SurfaceSpec, agent: Agent) -> int:
    """The agent's one record of `spec` (the rules document), for a door that must name it."""
    document_id = only_record_id(spec, agent)
    if document_id is None:
        raise NotFound(f"This agent has no {spec.label.lower()} document yet; add_rule starts one.")
    return document_id


def _filter_kind(spec: FilterSpec) -> Kind:
    if spec.kind is bool:
        return Kind.BOOLEAN
    if spec.kind is float:
        return Kind.NUMBER
    return Kind.CHOICE if spec.choices else Kind.TEXT


def _recall_params() -> tuple[Param, ...]:
    params = [
        Param(
            spec.name,
            _filter_kind(spec),
            spec.description,
            default=spec.default if spec.kind is bool else None,
            minimum=spec.minimum,
            maximum=spec.maximum,
            max_length=spec.max_length,
            choices=tuple(value for value, _ in spec.choices),
            label=spec.label,
        )
        for spec in MEMORY_FILTERS
    ]
    return (
        *params,
        Param("limit", Kind.INTEGER, "How many results.", default=10, minimum=1, maximum=50),
        Param("offset", Kind.INTEGER, "Results to skip.", default=0, minimum=0, maximum=MAX_OFFSET),
    )


PHRASE = (
    Param(
        "old_string",
        Kind.TEXT,
        "The exact text to replace, copied from a full read of the record (keep whitespace "
        "and punctuation). Quote enough to be unique.",
    ),
    Param("new_string", Kind.TEXT, "The text to put in its place."),
    Param(
        "replace_all",
        Kind.BOOLEAN,
        "Replace every occurrence instead of refusing when the text occurs more than once.",
        default=False,
    ),
    Param(
        "expected_replacements",
        Kind.INTEGER,
        "How many times old_string occurs. A different count is refused as ambiguous with "
        "the real count; more than 1 replaces them all.",
        minimum=1,
        maximum=10**6,
    ),
    Param(
        "edits",
        Kind.EDITS,
        "Several phrase edits applied in order, all or nothing (instead of old_string/new_string).",
    ),
    TEXT_FIELD,
)

OPS: tuple[OpSpec, ...] = (
    OpSpec(
        OpName.RECALL,
        "Recall: memories ranked by relevance to a query, as previews (never the full text).",
        _recall,
        _recall_params(),
        surfaces=("memory",),
        writes=False,
        target=Target.SURFACE,
        rest=Rest.LIST,
        tool=ToolSpec(
            "recall_memories",
            "Search the agent's long-term memories by words and filters. Returns the best "
            "matches with id, version, store, bank, score and a PREVIEW of at most 500 "
            "characters (truncated: true when cut) — never the full text. To change a "
            "memory, prefer edit_record with a phrase from its full text; before any full "
            "replacement, read the whole record with read_record. Never paste a preview back "
            "as the new text.",
        ),
    ),
    OpSpec(
        OpName.READ,
        "The full record, with every field and its current version.",
        _read,
        writes=False,
        takes_surface=True,
        rest=Rest.RETRIEVE,
        tool=ToolSpec(
            "read_record",
            "Read one record in full: its whole text, every field and its current version. "
            "Do this before replacing a text, and again after any refusal, before trying "
            "anything else.",
        ),
    ),
    OpSpec(
        OpName.CREATE,
        "Create a record at version 1.",
        record_create,
        takes_surface=True,
        target=Target.SURFACE,
        fields=_creatable,
        gather="values",
        rest=Rest.CREATE,
        tool=ToolSpec(
            "create_record",
            "Create a new record: a memory (content), a working-memory entry (key, value), a "
            "skill (name, content), a task (name, schedule, directive) or the rules document. "
            "Look first (recall_memories) whether one already says it: correct that one "
            "instead of adding a duplicate.",
        ),
    ),
    OpSpec(
        OpName.EDIT,
        "Phrase edit: replace an exact phrase (or a batch of them, all or nothing).",
        record_edit,
        PHRASE,
        takes_surface=True,
        one_of=(("old_string", "new_string"), ("edits",)),
        previews=True,
        tool=ToolSpec(
            "edit_record",
            "Change part of a record's text by replacing an exact phrase: the preferred way "
            "to correct a memory, a working-memory value, a skill, a task directive or the "
            "rules. Copy old_string from a full read; the rest of the text stays byte for "
            "byte. Several edits in `edits` apply all or nothing." + REFUSAL_ADVICE,
        ),
    ),
    OpSpec(
        OpName.REPLACE,
        "Full replacement of a text field; needs expected_version or If-Match.",
        record_replace,
        (
            Param(
                "text",
                Kind.TEXT,
                "The complete new text, merged from a full read (never a preview).",
                required=True,
            ),
            TEXT_FIELD,
            EXPECTED_SHA256,
            ALLOW_SHORTER,
        ),
        takes_surface=True,
        needs_version=True,
        previews=True,
        tool=ToolSpec(
            "replace_record",
            "Replace a record's whole text. Use only when most of the text changes; "
            "otherwise use edit_record. First read_record, merge your change into the FULL "
            "text you read, and send it with the version and the text's sha256 you read "
            "(expected_sha256; required when the text is longer than 500 characters). A recall "
            "preview is not the full text: a shorter replacement that looks cut from a preview "
            "is refused (suspected_truncation) unless allow_shorter is true." + REFUSAL_ADVICE,
        ),
    ),
    OpSpec(
        OpName.UPDATE,
        "Set fields. A text field here is a full replacement: it needs expected_version or "
        "If-Match.",
        record_update,
        (EXPECTED_SHA256, ALLOW_SHORTER),
        takes_surface=True,
        fields=_settable,
        gather="changes",
        rest=Rest.PARTIAL_UPDATE,
        tool=ToolSpec(
            "update_record",
            "Set some of a record's fields (category, tags, pinned, name, schedule, "
            "enabled, ...). A text field given here replaces the whole text, as "
            "replace_record does, and needs expected_version (and expected_sha256 when the "
            "text is longer than 500 characters).",
        ),
    ),
    OpSpec(
        OpName.FORGET,
        "Forget (hard delete; the revision keeps the last text).",
        record_forget,
        takes_surface=True,
        rest=Rest.DESTROY,
        tool=ToolSpec(
            "forget_record",
            "Delete a record for good (its last text stays in the history and can be "
            "restored with revert_record). Only when it is wrong and worthless as history.",
        ),
    ),
    OpSpec(
        OpName.REVERT,
        "Back to how the record stood after/before a revision, as a new revision.",
        record_revert,
        (
            Param(
                "revision_id",
                Kind.INTEGER,
                "The revision to go back to.",
                required=True,
                minimum=1,
                maximum=2**63 - 1,
            ),
            Param(
                "to",
                Kind.CHOICE,
                "'after': how the record stood after that revision; 'before': before it.",
                choices=("after", "before"),
                default="after",
            ),
        ),
        takes_surface=True,
        previews=True,
        tool=ToolSpec(
            "revert_record",
            "Bring a record back to how it stood after (or before) one of its revisions, as "
            "a new revision. Also restores a forgotten record under its own id.",
        ),
    ),
    OpSpec(
        OpName.SET_IMPORTANCE,
        "Set importance (clamped to 0..1).",
        memory_set_importance,
        (Param("importance", Kind.NUMBER, "0..1; values outside are clamped.", required=True),),
        surfaces=("memory",),
        tool=ToolSpec(
            "set_memory_importance",
            "Set how important a long-term memory is, from 0 to 1 (values outside are "
            "clamped and the answer says so).",
        ),
    ),
    OpSpec(
        OpName.REINFORCE,
        "A new observation: moves last_seen_at and the reinforcement count.",
        memory_reinforce,
        surfaces=("memory",),
        tool=ToolSpec(
            "reinforce_memory",
            "Record that a long-term memory was observed again (moves last_seen_at and the "
            "reinforcement count). Not for corrections: an edit is not a new observation.",
        ),
    ),
    OpSpec(
        OpName.INVALIDATE,
        "Mark superseded, optionally by another memory.",
        memory_invalidate,
        (
            Param(
                "replacement_id",
                Kind.REF,
                "The id (or alias) of the memory that replaces this one.",
                argument="replacement_ref",
            ),
        ),
        surfaces=("memory",),
        tool=ToolSpec(
            "invalidate_memory",
            "Mark a long-term memory as no longer true (superseded) while keeping it as "
            "history; optionally name the memory that replaces it. Prefer this to "
            "forgetting when the old memory still tells something about the past.",
        ),
    ),
    OpSpec(
        OpName.SET_TTL,
        "Change the expiry (ttl seconds, expires_at, or clear).",
        working_set_ttl,
        (
            Param(
                "ttl",
                Kind.INTEGER,
                "Seconds from now.",
                minimum=1,
                maximum=TEN_YEARS,
                label="Expire in (seconds)",
            ),
            Param("expires_at", Kind.MOMENT, "An exact time in the future."),
            Param("clear", Kind.BOOLEAN, "true: never expire.", default=False),
        ),
        surfaces=("working",),
        one_of=(("ttl",), ("expires_at",), ("clear",)),
        tool=ToolSpec(
            "set_working_memory_ttl",
            "Change when a working-memory entry expires: ttl seconds from now, an exact "
            "expires_at, or clear=true for never. Editing a value never extends its life; "
            "only this does.",
        ),
    ),
    OpSpec(
        OpName.APPEND,
        "Append to the body or to one section.",
        skill_append,
        (
            Param("content", Kind.TEXT, "The text to add.", required=True, min_length=1),
            replace(
                HEADING,
                description="Append at the end of this section; absent: at the end of the body.",
            ),
        ),
        surfaces=("skill",),
        previews=True,
        tool=ToolSpec(
            "skill_append",
            "Add text at the end of a skill's markdown body, or at the end of one section.",
        ),
    ),
    OpSpec(
        OpName.REPLACE_SECTION,
        "Replace one section's body.",
        skill_replace_section,
        (
            replace(HEADING, required=True),
            Param("content", Kind.TEXT, "The section's new body.", required=True),
            Param(
                "keep_subsections",
                Kind.BOOLEAN,
                "true: replace only the section's own text, up to its first subheading, and "
                "keep the subsections.",
                default=False,
            ),
        ),
        surfaces=("skill",),
        previews=True,
        tool=ToolSpec(
            "skill_replace_section",
            "Replace the body of one section (under its heading) of a skill; the rest stays as is.",
        ),
    ),
    OpSpec(
        OpName.DELETE_SECTION,
        "Delete one section.",
        skill_delete_section,
        (replace(HEADING, required=True),),
        surfaces=("skill",),
        previews=True,
        tool=ToolSpec(
            "skill_delete_section",
            "Delete one section (its heading and body) of a skill.",
        ),
    ),
    OpSpec(
        OpName.ADD_RULE,
        "Add one rule; the rest of the document stays byte for byte.",
        rules_add,
        (
            Param("rule", Kind.TEXT, "The rule to add.", required=True),
            Param("section", Kind.STRING, "Add under this heading.", max_length=500),
        ),
        surfaces=("rules",),
        target=Target.DOCUMENT,
        previews=True,
        tool=ToolSpec(
            "add_rule",
            "Add one behavioural rule to the rules document, after the last rule (of "
            "`section`), in the document's own bullet style. Nothing else in the document "
            "changes. A rule already there, in any letter case, is left alone (no_change).",
            family="rockbot",
        ),
    ),
    OpSpec(
        OpName.REMOVE_RULE,
        "Remove one rule.",
        rules_remove,
        (RULE,),
        surfaces=("rules",),
        target=Target.DOCUMENT,
        previews=True,
        tool=ToolSpec(
            "remove_rule",
            "Remove the one behavioural rule that reads `rule` (as written in the "
            "document). Nothing else in the document changes.",
            family="rockbot",
        ),
    ),
    OpSpec(
        OpName.REPLACE_RULE,
        "Rewrite one rule in place.",
        rules_replace,
        (RULE, Param("new_rule", Kind.TEXT, "The rule's new text.", required=True)),
        surfaces=("rules",),
        target=Target.DOCUMENT,
        previews=True,
        tool=ToolSpec(
            "replace_rule",
            "Rewrite one behavioural rule in place (its bullet and position stay); every "
            "other line of the rules document stays byte for byte.",
        ),
    ),
    OpSpec(
        OpName.VIEW,
        "Lines of a record's text, numbered as Anthropic's memory tool numbers them.",
        _view,
        (
            TEXT_FIELD,
            Param(
                "start",
                Kind.INTEGER,
                "First line to show, from 1.",
                default=1,
                minimum=1,
                maximum=10**7,
            ),
            Param(
                "end",
                Kind.INTEGER,
                "Last line to show (included); -1: the last line.",
                minimum=-1,
                maximum=10**7,
            ),
        ),
        writes=False,
        takes_surface=True,
        tool=ToolSpec(
            "view_record",
            "Read some lines of a record's text, each numbered (its number, a tab, the "
            "line), to find the line an insert_lines call needs. The whole record with its "
            "version is read_record's.",
        ),
    ),
    OpSpec(
        OpName.INSERT,
        "Insert lines after line N (0: before the first).",
        record_insert,
        (
            Param(
                "insert_line",
                Kind.INTEGER,
                "Insert after this line; 0 puts it before the first line.",
                required=True,
                minimum=0,
                maximum=10**7,
            ),
            Param(
                "content",
                Kind.TEXT,
                "The lines to insert. One final line break is optional.",
                required=True,
            ),
            TEXT_FIELD,
        ),
        takes_surface=True,
        previews=True,
        tool=ToolSpec(
            "insert_lines",
            "Insert lines into a record's text after a given line (0: at the very top); "
            "every other line stays byte for byte. view_record shows the line numbers."
            + REFUSAL_ADVICE,
        ),
    ),
    OpSpec(
        OpName.PREPEND,
        "Add text at the start of a record's text.",
        record_prepend,
        (
            Param("content", Kind.TEXT, "The text to put first.", required=True, min_length=1),
            TEXT_FIELD,
        ),
        takes_surface=True,
        previews=True,
        tool=ToolSpec(
            "prepend_to_record",
            "Add text at the very start of a record's text; the rest stays as it is.",
        ),
    ),
    OpSpec(
        OpName.UNDO,
        "Take back the change one revision made, keeping every change since.",
        record_undo,
        (
            Param(
                "revision_id",
                Kind.INTEGER,
                "The revision whose change to take back.",
                required=True,
                minimum=1,
                maximum=2**63 - 1,
            ),
        ),
        takes_surface=True,
        previews=True,
        tool=ToolSpec(
            "undo_change",
            "Take back what one revision changed in a record's text, keeping every change "
            "made since (unlike revert_record, which restores a whole version). Refused as "
            "conflict, naming the revisions, when a later edit touched the same lines.",
        ),
    ),
    OpSpec(
        OpName.INSERT_BEFORE_SECTION,
        "Insert text as a block of its own just above a section's heading.",
        skill_insert_before_section,
        (
            replace(HEADING, required=True),
            INSERTED_LINES,
        ),
        surfaces=("skill",),
        previews=True,
        tool=ToolSpec(
            "skill_insert_before_section",
            "Insert text as whole lines just above one section's heading line of a skill, as a "
            "block of its own: a blank line sets it apart from a paragraph above it.",
        ),
    ),
    OpSpec(
        OpName.INSERT_AFTER_SECTION,
        "Insert text as a block of its own just below a section's heading.",
        skill_insert_after_section,
        (
            replace(HEADING, required=True),
            INSERTED_LINES,
        ),
        surfaces=("skill",),
        previews=True,
        tool=ToolSpec(
            "skill_insert_after_section",
            "Insert text as whole lines just below one section's heading line of a skill, as a "
            "block of its own: a blank line sets it apart from the paragraph below it.",
        ),
    ),
)

CATALOG: dict[OpName, OpSpec] = {op.name: op for op in OPS}


def ops_of(key: str) -> list[OpSpec]:
    """The ops records of surface `key` have, in catalog order."""
    return [op for op in OPS if op.applies_to(key)]
