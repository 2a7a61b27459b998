"""recall: memories ranked by relevance to a query, as previews (never the full text)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stores.editing import Status
from stores.engine.actors import Actor
from stores.models import Agent
from stores.opnames import OpName
from stores.ops.base import Op, Rest, Target, ToolSpec
from stores.ops.params import Kind, Param
from stores.selectors.filters import MEMORY_FILTERS, FilterSpec, MemoryFilters
from stores.selectors.records import MAX_OFFSET
from stores.selectors.search import recall


@dataclass(frozen=True)
class Recall(Op):
    def run(self, *, agent: Agent, actor: Actor, **values: Any) -> dict[str, Any]:
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


OP = Recall(
    OpName.RECALL,
    "Recall: memories ranked by relevance to a query, as previews (never the full text).",
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
)
