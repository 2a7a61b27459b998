"""The memory filters: declared once here, built by every door, applied by one selector.

Each field of `MemoryFilters` is one filter, and its `FilterSpec` says what a caller may send
for it. The doors derive their inputs from `MEMORY_FILTERS` instead of declaring their own:
the REST query serializer (`memoryadmin.api.serializers.inputs`), the tools' JSON Schema
(`stores.tools.schema`, and so the MCP tools) and the web list's form
(`memoryadmin.web.forms`). `filtered_memories` is the one place they are applied; recall and
search rank within what it returns.

An empty text filter is no filter, whichever door it came by: a web form sends every field,
filled in or not, and `?tag=` has always listed as if no tag was given.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, get_type_hints

from django.conf import settings
from django.db import connection
from django.db.models import BooleanField, Q, QuerySet
from django.db.models.expressions import RawSQL

from stores.models import SHARED_BANK, Agent, Memory, Revision, Subject
from stores.selectors.revisions import records_written_by
from stores.surfaces import MEMORY

# The subject filter's word for the agent-wide bank (memories about nobody in particular):
# the bank's own name, as recall shows it.
SHARED_SUBJECT = SHARED_BANK


def max_query_length() -> int:
    """The longest query recall takes, in characters: every door declares this one limit."""
    return settings.MEMORYADMIN["MAX_QUERY_LENGTH"]


@dataclass(frozen=True)
class FilterSpec:
    """What a door needs to accept one filter: its words for people and models, its bounds.

    `name`, `kind` and `default` come from the `MemoryFilters` field carrying the spec.
    """

    description: str
    label: str
    # Its name in a URL query string (the REST API and the web list), when not `name`.
    param: str = ""
    max_length: int | None = None
    choices: tuple[tuple[str, str], ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    name: str = ""
    kind: type = str
    default: Any = None


_SPEC = "memory_filter"


def _declare(default: Any, **spec: Any) -> Any:
    return field(default=default, metadata={_SPEC: FilterSpec(**spec)})


def _importance_bound(sign: str, words: str) -> Any:
    """A bound of the importance, which lies in 0..1."""
    return _declare(
        None,
        label=f"Importance {sign}",
        minimum=0,
        maximum=1,
        description=f"Only memories {words} this important (0..1).",
    )


@dataclass(frozen=True)
class MemoryFilters:
    """Which of an agent's memories a recall, a search or a list looks at, and the query
    that ranks them. Every filter left at its default lets every memory through."""

    query: str = _declare(
        "",
        param="q",
        label="Search",
        max_length=max_query_length(),
        description="Words to recall: a few words or a sentence. Empty: every memory "
        "passing the filters, newest first.",
    )
    category: str | None = _declare(
        None,
        label="Category",
        max_length=Memory._meta.get_field("category").max_length,
        description="Only memories of this category (exact match).",
    )
    store: str | None = _declare(
        None,
        label="Store",
        choices=tuple(Memory.Store.choices),
        description="Only memories of this store: 'working' for the editable long-term "
        "memories (the default store; not working memory, which is a surface of its own), "
        "'episodic' for the history of events (invalidate only), 'fact' for read-only facts.",
    )
    tag: str | None = _declare(
        None,
        label="Tag",
        description="Only memories carrying this tag (a whole tag, exact match).",
    )
    subject: str | None = _declare(
        None,
        label="Bank",
        max_length=Subject._meta.get_field("external_id").max_length,
        description=f"Only memories about this person, by external id; '{SHARED_SUBJECT}' "
        "for the agent-wide memories, about nobody in particular.",
    )
    importance_min: float | None = _importance_bound("≥", "at least")
    importance_max: float | None = _importance_bound("≤", "at most")
    source_conversation: str | None = _declare(
        None,
        label="Conversation",
        max_length=Revision._meta.get_field("source_conversation").max_length,
        description="Only memories this conversation (its source's id) created or changed.",
    )
    include_invalidated: bool = _declare(
        False,
        label="Include invalidated",
        description="Also memories marked no longer true (invalidated, or superseded by "
        "another memory).",
    )

    def __post_init__(self) -> None:
        for spec in MEMORY_FILTERS:
            if spec.default is None and getattr(self, spec.name) == "":
                object.__setattr__(self, spec.name, None)

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> MemoryFilters:
        """The filters among a door's parsed input keyed by filter name (tool arguments);
        other keys are not filters and are left out, None is the default."""
        return cls._pick(values, lambda spec: spec.name)

    @classmethod
    def from_query(cls, values: Mapping[str, Any]) -> MemoryFilters:
        """The same from a parsed URL query string, keyed by each filter's `param`."""
        return cls._pick(values, lambda spec: spec.param)

    @classmethod
    def _pick(cls, values: Mapping[str, Any], key: Callable[[FilterSpec], str]) -> MemoryFilters:
        return cls(
            **{
                spec.name: values[key(spec)]
                for spec in MEMORY_FILTERS
                if values.get(key(spec)) is not None
            }
        )


def _kind(annotation: Any) -> type:
    # `str | None` is a text filter that may be left out; its kind is str.
    if isinstance(annotation, types.UnionType):
        (annotation,) = (arg for arg in annotation.__args__ if arg is not type(None))
    return annotation


def _specs() -> tuple[FilterSpec, ...]:
    hints = get_type_hints(MemoryFilters)
    specs = []
    for declared in fields(MemoryFilters):
        spec = declared.metadata[_SPEC]
        specs.append(
            replace(
                spec,
                name=declared.name,
                param=spec.param or declared.name,
                kind=_kind(hints[declared.name]),
                default=declared.default,
            )
        )
    return tuple(specs)


# Every filter as the doors declare it, in the order of MemoryFilters.
MEMORY_FILTERS: tuple[FilterSpec, ...] = _specs()


def filtered_memories(*, agent: Agent, filters: MemoryFilters) -> QuerySet[Memory]:
    """The memories of `agent` that pass `filters` (the query ranks; it filters nothing)."""
    memories = Memory.objects.filter(agent=agent)
    if filters.category is not None:
        memories = memories.filter(category=filters.category)
    if filters.store is not None:
        memories = memories.filter(store=filters.store)
    if filters.tag is not None:
        memories = memories.filter(has_tag(filters.tag))
    if filters.subject == SHARED_SUBJECT:
        memories = memories.filter(subject__isnull=True)
    elif filters.subject is not None:
        memories = memories.filter(subject__external_id=filters.subject)
    if filters.importance_min is not None:
        memories = memories.filter(importance__gte=filters.importance_min)
    if filters.importance_max is not None:
        memories = memories.filter(importance__lte=filters.importance_max)
    if filters.source_conversation is not None:
        written = records_written_by(agent, MEMORY.key, filters.source_conversation)
        memories = memories.filter(pk__in=written)
    if not filters.include_invalidated:
        memories = memories.filter(still_true())
    return memories


def still_true() -> Q:
    """Memories neither invalidated nor superseded by another (an import can link a
    successor without an invalidation time): what recall shows unless told otherwise."""
    return Q(invalidated_at__isnull=True, superseded_by__isnull=True)


def has_tag(tag: str) -> Q:
    """Memories (or any record with a JSON `tags` list) that carry `tag`."""
    if connection.vendor == "postgresql":
        return Q(tags__contains=[tag])
    # SQLite has no JSON containment lookup; its JSON1 table function does the same.
    table = Memory._meta.db_table
    return Q(
        RawSQL(
            f'EXISTS (SELECT 1 FROM json_each("{table}"."tags") WHERE json_each.value = %s)',
            [tag],
            output_field=BooleanField(),
        )
    )
