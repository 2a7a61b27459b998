"""The five surfaces: list, create, full read, PATCH, DELETE and every op as POST <id>/<op>/."""

from __future__ import annotations

from typing import Any, ClassVar

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from memoryadmin.api.exceptions import ApiError
from memoryadmin.api.preconditions import etag, precondition
from memoryadmin.api.schema import (
    AGENT_PARAMETER,
    REF_PARAMETER,
    WRITE_PARAMETERS,
    read_responses,
    write_responses,
)
from memoryadmin.api.serializers import inputs, outputs
from memoryadmin.api.views.base import AgentViewSet
from stores.editing import PhraseEdit, Status
from stores.models import Subject
from stores.selectors.filters import MemoryFilters
from stores.selectors.records import record_data, record_summary, records_for_agent
from stores.selectors.search import recall
from stores.services import (
    SurfaceSpec,
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
    surface,
    working_set_ttl,
)


class SurfaceViewSet(AgentViewSet):
    surface_key: ClassVar[str]
    create_input: ClassVar[type[serializers.Serializer]]
    fields_input: ClassVar[type[serializers.Serializer]]
    # What the OpenAPI schema says a full read, a list page and the list's query hold.
    read_output: ClassVar[type[serializers.Serializer]]
    page_output: ClassVar[type[serializers.Serializer]]
    list_query: ClassVar[type[serializers.Serializer]] = inputs.PageQuery
    lookup_field = "ref"
    lookup_value_regex = "[^/]+"

    @property
    def spec(self) -> SurfaceSpec:
        return surface(self.surface_key)

    # --- reads ---------------------------------------------------------------------------

    def list(self, request: Request) -> Response:
        query = self.parse(inputs.PageQuery, request.query_params)
        records = records_for_agent(self.spec, self.caller.agent).order_by("-updated_at", "-id")
        limit, offset = query["limit"], query["offset"]
        items = [record_summary(self.spec, r) for r in records[offset : offset + limit]]
        return self.page(items, records.count(), limit, offset)

    def retrieve(self, request: Request, ref: str) -> Response:
        record = find_record(self.spec, agent=self.caller.agent, ref=ref, actor=self.caller.actor)
        return Response(
            {"status": str(Status.OK), "record": record_data(record)},
            headers={"ETag": etag(record.version)},
        )

    # --- writes --------------------------------------------------------------------------

    def create(self, request: Request) -> Response:
        values = self.creation_values(self.parse(self.create_input))
        result = record_create(
            surface_key=self.surface_key,
            agent=self.caller.agent,
            actor=self.caller.actor,
            values=values,
        )
        response = self.render(result)
        if result.ok:
            response["Location"] = request.build_absolute_uri(f"{result.id}/")
        return response

    def creation_values(self, values: dict[str, Any]) -> dict[str, Any]:
        return values

    def partial_update(self, request: Request, ref: str) -> Response:
        values = self.parse(self.fields_input)
        condition = self.precondition(values)
        allow_shorter = values.pop("allow_shorter")
        return self.render(
            record_update(
                surface_key=self.surface_key,
                agent=self.caller.agent,
                ref=ref,
                actor=self.caller.actor,
                changes=values,
                expected_version=condition.expected_version,
                allow_shorter=allow_shorter,
            ),
            condition,
        )

    def destroy(self, request: Request, ref: str) -> Response:
        query = self.parse(inputs.AgentQuery, request.query_params)
        condition = precondition(request, query.get("expected_version"))
        return self.render(
            record_forget(
                surface_key=self.surface_key,
                agent=self.caller.agent,
                ref=ref,
                actor=self.caller.actor,
                expected_version=condition.expected_version,
            ),
            condition,
        )

    @action(detail=True, methods=["post"])
    def edit(self, request: Request, ref: str) -> Response:
        values = self.parse(inputs.EditInput)
        condition = self.precondition(values)
        edits = None
        if "edits" in values:
            edits = [
                PhraseEdit(e["old_string"], e["new_string"], e["replace_all"])
                for e in values["edits"]
            ]
        return self.render(
            record_edit(
                surface_key=self.surface_key,
                agent=self.caller.agent,
                ref=ref,
                actor=self.caller.actor,
                old_string=values.get("old_string"),
                new_string=values.get("new_string"),
                replace_all=values["replace_all"],
                edits=edits,
                field=values.get("field"),
                expected_version=condition.expected_version,
            ),
            condition,
        )

    @action(detail=True, methods=["post"])
    def replace(self, request: Request, ref: str) -> Response:
        values = self.parse(inputs.ReplaceInput)
        condition = self.precondition(values)
        return self.render(
            record_replace(
                surface_key=self.surface_key,
                agent=self.caller.agent,
                ref=ref,
                actor=self.caller.actor,
                text=values["text"],
                field=values.get("field"),
                expected_version=condition.expected_version,
                allow_shorter=values["allow_shorter"],
            ),
            condition,
        )

    @action(detail=True, methods=["post"])
    def revert(self, request: Request, ref: str) -> Response:
        values = self.parse(inputs.RevertInput)
        condition = self.precondition(values)
        return self.render(
            record_revert(
                surface_key=self.surface_key,
                agent=self.caller.agent,
                ref=ref,
                actor=self.caller.actor,
                revision_id=values["revision_id"],
                to=values["to"],
                expected_version=condition.expected_version,
            ),
            condition,
        )

    def record_op(self, function: Any, ref: str, values: dict[str, Any]) -> Response:
        """Run one surface-specific op of the service on record `ref`."""
        condition = self.precondition(values)
        return self.render(
            function(
                agent=self.caller.agent,
                ref=ref,
                actor=self.caller.actor,
                expected_version=condition.expected_version,
                **values,
            ),
            condition,
        )


class MemoryViewSet(SurfaceViewSet):
    surface_key = "memory"
    create_input = inputs.MemoryCreateInput
    fields_input = inputs.MemoryFieldsInput
    read_output = outputs.MemoryRead
    page_output = outputs.RecallPage
    list_query = inputs.RecallQuery

    def list(self, request: Request) -> Response:
        """Recall: memories ranked by relevance to q, as previews (never the full text)."""
        query = self.parse(inputs.RecallQuery, request.query_params)
        limit, offset = query["limit"], query["offset"]
        found = recall(
            agent=self.caller.agent,
            filters=MemoryFilters.from_query(query),
            limit=limit,
            offset=offset,
        )
        return self.page([hit.as_dict() for hit in found.hits], found.total, limit, offset)

    def creation_values(self, values: dict[str, Any]) -> dict[str, Any]:
        external_id = values.pop("subject", None)
        if external_id:
            subject = Subject.objects.filter(
                agent=self.caller.agent, external_id=external_id
            ).first()
            if subject is None:
                raise ApiError(
                    Status.INVALID, f"No subject {external_id!r} among this agent's people."
                )
            values["subject"] = subject
        return values

    @action(detail=True, methods=["post"])
    def set_importance(self, request: Request, ref: str) -> Response:
        return self.record_op(memory_set_importance, ref, self.parse(inputs.SetImportanceInput))

    @action(detail=True, methods=["post"])
    def reinforce(self, request: Request, ref: str) -> Response:
        return self.record_op(memory_reinforce, ref, self.parse(inputs.VersionOnlyInput))

    @action(detail=True, methods=["post"])
    def invalidate(self, request: Request, ref: str) -> Response:
        values = self.parse(inputs.InvalidateInput)
        values["replacement_ref"] = values.pop("replacement_id", None)
        return self.record_op(memory_invalidate, ref, values)


class WorkingMemoryViewSet(SurfaceViewSet):
    surface_key = "working"
    create_input = inputs.WorkingCreateInput
    fields_input = inputs.WorkingFieldsInput
    read_output = outputs.WorkingRead
    page_output = outputs.WorkingPage

    @action(detail=True, methods=["post"])
    def set_ttl(self, request: Request, ref: str) -> Response:
        return self.record_op(working_set_ttl, ref, self.parse(inputs.SetTtlInput))


class SkillViewSet(SurfaceViewSet):
    surface_key = "skill"
    create_input = inputs.SkillCreateInput
    fields_input = inputs.SkillFieldsInput
    read_output = outputs.SkillRead
    page_output = outputs.SkillPage

    @action(detail=True, methods=["post"])
    def append(self, request: Request, ref: str) -> Response:
        return self.record_op(skill_append, ref, self.parse(inputs.AppendInput))

    @action(detail=True, methods=["post"])
    def replace_section(self, request: Request, ref: str) -> Response:
        return self.record_op(skill_replace_section, ref, self.parse(inputs.ReplaceSectionInput))

    @action(detail=True, methods=["post"])
    def delete_section(self, request: Request, ref: str) -> Response:
        return self.record_op(skill_delete_section, ref, self.parse(inputs.DeleteSectionInput))


class TaskViewSet(SurfaceViewSet):
    surface_key = "task"
    create_input = inputs.TaskCreateInput
    fields_input = inputs.TaskFieldsInput
    read_output = outputs.TaskRead
    page_output = outputs.TaskPage


class RulesViewSet(SurfaceViewSet):
    surface_key = "rules"
    create_input = inputs.RulesCreateInput
    fields_input = inputs.RulesFieldsInput
    read_output = outputs.RulesRead
    page_output = outputs.RulesPage

    def rule_op(self, function: Any, ref: str, values: dict[str, Any]) -> Response:
        # The rule ops address the agent's one document; the path must name it.
        find_record(self.spec, agent=self.caller.agent, ref=ref, actor=self.caller.actor)
        condition = self.precondition(values)
        return self.render(
            function(
                agent=self.caller.agent,
                actor=self.caller.actor,
                expected_version=condition.expected_version,
                **values,
            ),
            condition,
        )

    @action(detail=True, methods=["post"])
    def add_rule(self, request: Request, ref: str) -> Response:
        return self.rule_op(rules_add, ref, self.parse(inputs.AddRuleInput))

    @action(detail=True, methods=["post"])
    def remove_rule(self, request: Request, ref: str) -> Response:
        return self.rule_op(rules_remove, ref, self.parse(inputs.RemoveRuleInput))

    @action(detail=True, methods=["post"])
    def replace_rule(self, request: Request, ref: str) -> Response:
        return self.rule_op(rules_replace, ref, self.parse(inputs.ReplaceRuleInput))


# --- the OpenAPI description of each surface ----------------------------------------------

_OPS: dict[str, type[serializers.Serializer]] = {
    "edit": inputs.EditInput,
    "replace": inputs.ReplaceInput,
    "revert": inputs.RevertInput,
    "set_importance": inputs.SetImportanceInput,
    "reinforce": inputs.VersionOnlyInput,
    "invalidate": inputs.InvalidateInput,
    "set_ttl": inputs.SetTtlInput,
    "append": inputs.AppendInput,
    "replace_section": inputs.ReplaceSectionInput,
    "delete_section": inputs.DeleteSectionInput,
    "add_rule": inputs.AddRuleInput,
    "remove_rule": inputs.RemoveRuleInput,
    "replace_rule": inputs.ReplaceRuleInput,
}
_SUMMARIES = {
    "edit": "Phrase edit: replace an exact phrase (or a batch of them, all or nothing).",
    "replace": "Full replacement of a text field; needs expected_version or If-Match.",
    "revert": "Back to how the record stood after/before a revision, as a new revision.",
    "set_importance": "Set importance (clamped to 0..1).",
    "reinforce": "A new observation: moves last_seen_at and the reinforcement count.",
    "invalidate": "Mark superseded, optionally by another memory.",
    "set_ttl": "Change the expiry (ttl seconds, expires_at, or clear).",
    "append": "Append to the body or to one section.",
    "replace_section": "Replace one section's body.",
    "delete_section": "Delete one section.",
    "add_rule": "Add one rule; the rest of the document stays byte for byte.",
    "remove_rule": "Remove one rule.",
    "replace_rule": "Rewrite one rule in place.",
}


def _document(viewset: type[SurfaceViewSet]) -> None:
    tag = surface(viewset.surface_key).api_path
    read, page, list_query = viewset.read_output, viewset.page_output, viewset.list_query
    on_record = [AGENT_PARAMETER, REF_PARAMETER]
    views = {
        "list": extend_schema(tags=[tag], parameters=[list_query], responses=read_responses(page)),
        "retrieve": extend_schema(
            tags=[tag],
            parameters=on_record,
            responses=read_responses(read),
            description='The full record, with `ETag: "<version>"`.',
        ),
        "create": extend_schema(
            tags=[tag],
            parameters=WRITE_PARAMETERS,
            request=viewset.create_input,
            responses=write_responses(201),
        ),
        "partial_update": extend_schema(
            tags=[tag],
            parameters=[*WRITE_PARAMETERS, REF_PARAMETER],
            request=viewset.fields_input,
            responses=write_responses(),
            description="Set fields. A text field here is a full replacement: it needs "
            "expected_version or If-Match.",
        ),
        "destroy": extend_schema(
            tags=[tag],
            parameters=[*WRITE_PARAMETERS, REF_PARAMETER, inputs.AgentQuery],
            responses=write_responses(),
            description="Forget (hard delete; the revision keeps the last text).",
        ),
    }
    for name, input_serializer in _OPS.items():
        if hasattr(viewset, name):
            views[name] = extend_schema(
                tags=[tag],
                summary=_SUMMARIES[name],
                parameters=[*WRITE_PARAMETERS, REF_PARAMETER],
                request=input_serializer,
                responses=write_responses(),
            )
    extend_schema_view(**views)(viewset)


# Each surface's viewset, by surface key; the router mounts each at its `api_path`.
SURFACE_VIEWSETS: dict[str, type[SurfaceViewSet]] = {
    viewset.surface_key: viewset
    for viewset in (MemoryViewSet, WorkingMemoryViewSet, SkillViewSet, TaskViewSet, RulesViewSet)
}
for _viewset in SURFACE_VIEWSETS.values():
    _document(_viewset)
