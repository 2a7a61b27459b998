"""URLs of the browser UI. `surface` is a key of the surface registry (stores.surfaces.SURFACES)."""

from __future__ import annotations

from django.urls import path

from memoryadmin.web.views import (
    create,
    erasures,
    history,
    home,
    lists,
    live,
    portability,
    records,
    review,
    sources,
    suggestions,
    tokens,
    webhooks,
)

app_name = "web"

agent = "a/<slug:agent_name>/"
record = agent + "<str:surface>/<int:pk>/"

urlpatterns = [
    path("", home.agent_index, name="agents"),
    path("agents/new/", home.agent_new, name="agent_new"),
    path("erase/", erasures.erasure_page, name="erase"),
    path("audit/", erasures.audit_log, name="audit"),
    path("audit/export.csv", erasures.audit_export, {"form": "csv"}, name="audit_csv"),
    path("audit/export.json", erasures.audit_export, {"form": "json"}, name="audit_json"),
    path("audit/<int:entry_id>/receipt.json", erasures.erasure_receipt, name="erasure_receipt"),
    path(agent, home.dashboard, name="dashboard"),
    path(agent + "changes/", history.agent_changes, name="changes"),
    path(agent + "changes/live/", live.changes_live, name="changes_live"),
    path(agent + "changes/<int:revision_id>/", history.change_detail, name="change_detail"),
    path(agent + "review/", review.review_queue, name="review"),
    path(agent + "suggestions/", suggestions.suggestion_inbox, name="suggestions"),
    path(
        agent + "suggestions/merge-exact/",
        suggestions.suggestion_merge_exact,
        name="suggestions_merge_exact",
    ),
    path(
        agent + "suggestions/<int:suggestion_id>/settle/",
        suggestions.suggestion_settle,
        name="suggestion_settle",
    ),
    path(agent + "sources/", sources.sources_page, name="sources"),
    path(agent + "sources/takeback/", sources.sources_takeback, name="sources_takeback"),
    path(agent + "sources/hold/", sources.sources_hold, name="sources_hold"),
    path(agent + "review/act/", review.review_act, name="review_act"),
    path(agent + "review/mode/", review.review_mode, name="review_mode"),
    path(agent + "tokens/", tokens.token_list, name="tokens"),
    path(agent + "tokens/new/", tokens.token_new, name="token_new"),
    path(agent + "tokens/<int:token_id>/revoke/", tokens.token_revoke_view, name="token_revoke"),
    path(agent + "webhooks/", webhooks.webhook_list, name="webhooks"),
    path(agent + "webhooks/new/", webhooks.webhook_new, name="webhook_new"),
    path(agent + "webhooks/<int:webhook_id>/", webhooks.webhook_detail, name="webhook_detail"),
    path(
        agent + "webhooks/<int:webhook_id>/enabled/",
        webhooks.webhook_switch,
        name="webhook_switch",
    ),
    path(
        agent + "webhooks/<int:webhook_id>/delete/",
        webhooks.webhook_remove,
        name="webhook_remove",
    ),
    path(agent + "pam/", portability.pam_import, name="pam_import"),
    path(agent + "pam/memory-store.json", portability.pam_export, name="pam_export"),
    path(agent + "<str:surface>/", lists.record_list_view, name="record_list"),
    path(agent + "<str:surface>/bulk/", lists.record_bulk, name="record_bulk"),
    path(agent + "<str:surface>/new/", create.record_new, name="record_new"),
    path(record, records.record_detail, name="record_detail"),
    path(record + "history/", history.record_history, name="record_history"),
    path(
        record + "history/<int:revision_id>/redact/",
        history.redact_revision,
        name="redact_revision",
    ),
    path(record + "live/", live.record_live, name="record_live"),
    # Every op on a record, named as the service names it (web.ops), and its preview.
    path(record + "ops/<slug:op>/", records.record_op, name="record_op"),
    path(
        record + "ops/<slug:op>/preview/",
        records.record_op,
        {"preview": True},
        name="record_preview",
    ),
]
