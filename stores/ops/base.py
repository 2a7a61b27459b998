"""What an op is: one class in one module (`stores/ops/<family>/<op>.py`), for every door.

An `Op` says which surfaces it applies to, the parameters it takes (`params`), what a model is
told about it (`tool`), where the REST API serves it (`rest`), where the web UI offers its
form and with which words (`page`), whether it writes and previews, and how it runs (`run`).
The shell's function is the op itself (`execute`, which `stores.services` hands on under the
op's `service` name); the REST actions, the tools (and so the MCP tools) and the web page's
forms are built by walking the registry (`stores.ops.catalog`).

`WriteOp` is the one path of every op that changes one record: `prepare` checks what it was
given before anything is read, then `write_record` writes: by default `build` makes the change
from the record under its row lock, and `commit.write` does the rest (policy, version,
compare-and-swap, revision); an op that writes its own way (a delete, a revision taken back)
says how instead. An op of an agent's one document (the rules) finds or previews that document
first.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from django.db import models

from stores.editing import Edited
from stores.engine import validation
from stores.engine.actors import Actor
from stores.engine.checks import text_limit
from stores.engine.commit import Change, document_change, write
from stores.engine.documents import document_write
from stores.engine.fields import text_field_of
from stores.engine.lookup import RecordRef, find_record
from stores.engine.results import WriteResult, returns_result
from stores.engine.sources import Source, parse_source
from stores.errors import Invalid, PreconditionRequired
from stores.models import Agent, VersionedRecord
from stores.opnames import OpName
from stores.ops.fields import DRY_RUN, EXPECTED_VERSION, FIELD_PARAMS, SOURCE, TEXT_FIELD
from stores.ops.params import Kind, Param, given, phrase_edits
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


class Place(StrEnum):
    """Where the web UI offers an op's form."""

    # Not on a record's page: a read, or a write with a page of its own (the create form).
    NOWHERE = "nowhere"
    # In the text column, beside the text it changes.
    TEXT = "text"
    # Beside the record's properties.
    PROPERTIES = "properties"
    # Beside the properties, after every other form there (a delete).
    LAST = "last"
    # On the history page, beside the revision it names.
    HISTORY = "history"
    # No form of its own: a button or a form inside another op's (`Page.within`).
    WITHIN = "within"


@dataclass(frozen=True)
class Page:
    """How the web UI offers the op: where its form stands, and the words it is shown with."""

    place: Place = Place.NOWHERE
    # For `Place.WITHIN`: the op whose form offers this one.
    within: OpName | None = None
    # Its button in that form, which previews it; "": the form draws it otherwise.
    button: str = ""
    # The button takes something away (a section, a rule): drawn as a danger.
    danger: bool = False
    # Its result is shown in the history's timeline, wherever it was posted from.
    answers_in_history: bool = False
    # How the history says what a revision of this op went back to ("went back to"), and
    # whether it names the change it took back rather than the version it restored.
    went_back: str = ""
    names_change: bool = False


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


@functools.cache
def _params(op: Op, key: str | None) -> tuple[Param, ...]:
    # The same for every call (ops and surfaces are fixed at import); each request of an
    # op asked for them two or three times, and building them was about 60 µs a time.
    return op._params(key)


@dataclass(frozen=True)
class Op:
    name: OpName
    # One line for people: the API's summary and the page's button title.
    summary: str
    parameters: tuple[Param, ...] = ()
    # None: every surface.
    surfaces: tuple[str, ...] | None = None
    writes: bool = True
    # The op runs on records of the surface a caller names (ops every surface has).
    takes_surface: bool = False
    target: Target = Target.RECORD
    # Create and update set record fields: which ones a surface allows, handed to the
    # op in one dict under `gather`.
    fields: Callable[[SurfaceSpec], tuple[str, ...]] | None = None
    gather: str = ""
    # Exactly one of these groups must be given (each group whole).
    one_of: tuple[tuple[str, ...], ...] = ()
    # The write changes a whole text: the version read is required.
    needs_version: bool = False
    # A text op the engine can run dry: every check, nothing written.
    previews: bool = False
    tool: ToolSpec | None = None
    rest: Rest = Rest.ACTION
    # Offered on a selection of records at once (the list's bulk actions).
    bulk: bool = False
    page: Page = Page()

    def run(self, *arguments: Any, **keywords: Any) -> Any:
        """The op itself, with the shell's keyword arguments; refusals are raised."""
        raise NotImplementedError(f"{type(self).__name__} does not say how it runs.")

    @functools.cached_property
    def execute(self) -> Callable[..., Any]:
        """The op as the shell and every door call it: a write's refusals come back as its
        result, logged under the service's name; a read's are raised for the door to word."""
        if not self.writes:
            return self.run
        return returns_result(functools.partial(_from_source, self.run), name=self.service)

    @property
    def service(self) -> str:
        """The op's name in the shell (`stores.services`), which the write log and the writes
        metric name too: the surface it is of (`record` for an op on any surface), then its
        word, less the surface's own noun where the word names it (`rules_add`, not
        `rules_add_rule`)."""
        family = "record"
        if self.surfaces is not None and len(self.surfaces) == 1:
            family = self.surfaces[0]
        return f"{family}_{self.name.value.removesuffix('_' + family.removesuffix('s'))}"

    def applies_to(self, key: str) -> bool:
        return self.surfaces is None or key in self.surfaces

    def specs(self) -> list[SurfaceSpec]:
        return [spec for key, spec in SURFACES.items() if self.applies_to(key)]

    def spec_for(self, surface_key: str | None) -> SurfaceSpec:
        """The surface a call runs on: the one named, or the op's own when it has one."""
        if surface_key is None:
            if self.takes_surface:
                raise TypeError(f"{self.service}() needs surface_key.")
            return self.specs()[0]
        return surface(surface_key)

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
        if self.writes:
            declared.append(SOURCE)
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
            required = self.target is Target.SURFACE and all(
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
        ref: RecordRef | None = None,
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
                value = phrase_edits(value)
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
        return self.execute(**kwargs)


def _from_source(run: Callable[..., Any], *, source: Any = None, **keywords: Any) -> Any:
    """Run a write with its `source` (as a caller sent it) on the actor, who records it on
    each revision the write makes; a malformed one is refused before anything is read."""
    if source is not None:
        keywords["actor"] = keywords["actor"].with_source(
            source if isinstance(source, Source) else parse_source(source)
        )
    return run(**keywords)


def _model_field(spec: SurfaceSpec, name: str) -> models.Field[Any, Any]:
    column = spec.model._meta.get_field(name)
    assert isinstance(column, models.Field)
    return column


@dataclass(frozen=True)
class RecordCall:
    """What a write of one record is given beside its op's own arguments: whose record, by
    which ref, who writes it, the version they read, and whether it only previews."""

    agent: Agent
    actor: Actor
    # None: the agent's one document of the surface, which the document write finds.
    ref: RecordRef | None
    expected_version: int | None
    dry_run: bool

    def find(self, spec: SurfaceSpec, service: str) -> VersionedRecord:
        """The record, row-locked for the write; a dry run takes no lock (see `commit.atomic`)."""
        if self.ref is None:
            raise TypeError(f"{service}() needs ref.")
        return find_record(
            spec, agent=self.agent, ref=self.ref, actor=self.actor, lock=not self.dry_run
        )


@dataclass(frozen=True)
class WriteOp(Op):
    """An op that changes one record's fields through the engine's one write path."""

    def prepare(
        self, spec: SurfaceSpec, arguments: dict[str, Any], agent: Agent, actor: Actor
    ) -> dict[str, Any]:
        """What the op was given, checked before any record is read (a refusal raises)."""
        return arguments

    def build(
        self, spec: SurfaceSpec, arguments: Mapping[str, Any], record: VersionedRecord
    ) -> Change:
        """The change this op makes to `record`, read under its row lock."""
        raise NotImplementedError(f"{type(self).__name__} does not say what it changes.")

    def version_needed(self, arguments: Mapping[str, Any]) -> str:
        """Why this write needs the version read ("": it does not)."""
        if not self.needs_version:
            return ""
        return (
            "A full replacement needs the version you read (expected_version or If-Match). "
            "Read the full record first, or make a phrase edit instead."
        )

    def word(self, arguments: Mapping[str, Any]) -> OpName:
        """The op word the policy weighs and the revision records: the op's own name."""
        return self.name

    def run(
        self,
        *,
        agent: Agent,
        actor: Actor,
        ref: RecordRef | None = None,
        surface_key: str | None = None,
        expected_version: int | None = None,
        dry_run: bool = False,
        **arguments: Any,
    ) -> WriteResult:
        spec = self.spec_for(surface_key)
        self._check_arguments(arguments, dry_run)
        prepared = self.prepare(spec, arguments, agent, actor)
        if expected_version is None and (needed := self.version_needed(prepared)):
            raise PreconditionRequired(needed)
        return self.write_record(
            spec, prepared, RecordCall(agent, actor, ref, expected_version, dry_run)
        )

    def write_record(
        self, spec: SurfaceSpec, arguments: Mapping[str, Any], call: RecordCall
    ) -> WriteResult:
        """Write the record `call` names with the prepared `arguments`: `build`'s change
        through the engine's one write path."""
        if self.target is Target.DOCUMENT:
            write_to = functools.partial(document_write, spec)
        elif call.ref is None:
            raise TypeError(f"{self.service}() needs ref.")
        else:
            write_to = functools.partial(write, spec, ref=call.ref)
        return write_to(
            agent=call.agent,
            actor=call.actor,
            op=self.word(arguments),
            expected_version=call.expected_version,
            build=functools.partial(self.build, spec, arguments),
            dry_run=call.dry_run,
        )

    def _check_arguments(self, arguments: Mapping[str, Any], dry_run: bool) -> None:
        """A keyword-only function's checks, for the shell: nothing unknown, nothing missing."""
        known = {param.keyword for param in self.parameters}
        if self.gather:
            known.add(self.gather)
        unknown = sorted(set(arguments) - known)
        if unknown or (dry_run and not self.previews):
            unexpected = ", ".join(unknown or ["dry_run"])
            raise TypeError(f"{self.service}() got unexpected keyword arguments: {unexpected}")
        missing = [
            param.keyword
            for param in self.parameters
            if param.required and param.keyword not in arguments
        ]
        if missing:
            raise TypeError(f"{self.service}() is missing keyword arguments: {', '.join(missing)}")


@dataclass(frozen=True)
class TextOp(WriteOp):
    """A write op on one text field, edited by the pure text engine: it previews, since the
    engine's edit runs dry as it runs for real."""

    previews: bool = True

    def prepare(
        self, spec: SurfaceSpec, arguments: dict[str, Any], agent: Agent, actor: Actor
    ) -> dict[str, Any]:
        return checked_texts(self.parameters, arguments)


@dataclass(frozen=True)
class DocumentOp(TextOp):
    """A text op on a markdown document's body (a skill's sections, the rules), made by one
    function of the text engine, `edit_with`: it takes the body, then each of the op's
    parameters by its keyword (an absent one as its default), and the surface's limit as
    `max_length`, unless the op only `removes` (a text it shortens needs no limit)."""

    edit_with: Callable[..., str | Edited] = field(kw_only=True)
    removes: bool = field(default=False, kw_only=True)

    def build(
        self, spec: SurfaceSpec, arguments: Mapping[str, Any], record: VersionedRecord
    ) -> Change:
        values = _edit_arguments(self.parameters, arguments)
        if not self.removes:
            values["max_length"] = text_limit(spec)
        body = getattr(record, spec.primary_text_field)
        return document_change(self.name, self.edit_with(body, **values))


@dataclass(frozen=True)
class LineOp(TextOp):
    """A text op on any surface's text field (`field`, else the primary one), made by one
    function of the text engine, `edit_with`: it takes the field's text, then each of the
    op's other parameters by its keyword, and the surface's limit as `max_length`."""

    edit_with: Callable[..., str] = field(kw_only=True)

    def prepare(
        self, spec: SurfaceSpec, arguments: dict[str, Any], agent: Agent, actor: Actor
    ) -> dict[str, Any]:
        checked = checked_texts(self.parameters, arguments)
        return {**checked, "text_field": text_field_of(spec, arguments.get("field"))}

    def build(
        self, spec: SurfaceSpec, arguments: Mapping[str, Any], record: VersionedRecord
    ) -> Change:
        text_field = arguments["text_field"]
        params = tuple(param for param in self.parameters if param.name != TEXT_FIELD.name)
        text = self.edit_with(
            getattr(record, text_field),
            **_edit_arguments(params, arguments),
            max_length=text_limit(spec),
        )
        return Change(op=self.name, values={text_field: text}, text_field=text_field)


def _edit_arguments(params: tuple[Param, ...], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The text engine's keywords: each parameter's argument, an absent one as its default."""
    return {param.keyword: arguments.get(param.keyword, param.default) for param in params}


def checked_texts(params: tuple[Param, ...], arguments: dict[str, Any]) -> dict[str, Any]:
    """The text and flag arguments as every write takes them (strings without NULs, true or
    false), the others as given."""
    checked = dict(arguments)
    for param in params:
        value = checked.get(param.keyword)
        if value is None:
            continue
        if param.kind is Kind.TEXT:
            checked[param.keyword] = validation.text(value, param.keyword)
        elif param.kind is Kind.BOOLEAN:
            checked[param.keyword] = validation.flag(value, param.keyword)
    return checked
