"""/api/: the versioned agent API, its OpenAPI schema and interactive docs."""

from __future__ import annotations

from csp.decorators import csp_update
from django.urls import URLPattern, include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.decorators import api_view, permission_classes, schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import DefaultRouter
from rest_framework.views import APIView

from memoryadmin.api import memory_stores
from memoryadmin.api.views.changes import ChangeViewSet
from memoryadmin.api.views.erasures import ErasureView
from memoryadmin.api.views.exports import ExportViewSet
from memoryadmin.api.views.revisions import RevisionViewSet
from memoryadmin.api.views.sources import SourceViewSet
from memoryadmin.api.views.suggestions import SuggestionViewSet
from memoryadmin.api.views.surfaces import SURFACE_VIEWSETS
from memoryadmin.api.views.tools import ToolViewSet
from memoryadmin.api.views.webhooks import WebhookViewSet
from memoryadmin.doors.errors import error_body
from stores.editing import Status
from stores.surfaces import SURFACES


class Router(DefaultRouter):
    include_root_view = False


router = Router()
for spec in SURFACES.values():
    router.register(spec.api_path, SURFACE_VIEWSETS[spec.key], basename=spec.key)
router.register("revisions", RevisionViewSet, basename="revision")
router.register("webhooks", WebhookViewSet, basename="webhook")
router.register("suggestions", SuggestionViewSet, basename="suggestion")
router.register("sources", SourceViewSet, basename="source")

change_list = ChangeViewSet.as_view({"get": "list"})
export_pam = ExportViewSet.as_view({"get": "pam"})
tool_list = ToolViewSet.as_view({"get": "list"})
tool_detail = ToolViewSet.as_view({"get": "retrieve", "post": "create_call"})


@api_view(["GET", "POST", "PUT", "PATCH", "DELETE"])
@permission_classes([AllowAny])
@schema(None)
def unknown_path(request: Request, rest: str = "") -> Response:
    """An unknown path under /api/ answers JSON like every other answer, not an HTML page."""
    return Response(error_body(Status.NOT_FOUND, f"No API endpoint at {request.path}."), status=404)


@api_view(["GET"])
@permission_classes([AllowAny])
@schema(None)
def api_index(request: Request) -> Response:
    """Where an agent starts: every collection and door, as absolute URLs (`bin/serve` prints
    /api/v1/ as the address agents connect to). A token is needed to use them, not to read
    this list."""

    def at(path: str) -> str:
        return request.build_absolute_uri(path)

    collections = {spec.api_path: at(f"/api/v1/{spec.api_path}/") for spec in SURFACES.values()}
    return Response(
        {
            "collections": {
                **collections,
                "revisions": at("/api/v1/revisions/"),
                "webhooks": at("/api/v1/webhooks/"),
                "suggestions": at("/api/v1/suggestions/"),
                "sources": at("/api/v1/sources/"),
                "memory_stores": at("/api/v1/memory_stores"),
            },
            "changes": at("/api/v1/changes/"),
            "export_pam": at("/api/v1/export/pam/"),
            "tools": at("/api/v1/tools/"),
            "mcp": at("/mcp/"),
            "schema": at("/api/schema/"),
            "docs": at("/api/docs/"),
            "authentication": "Authorization: Bearer <token>",
        }
    )


STORE = r"(?P<memory_store_id>[^/]+)"
VERSION = r"(?P<memory_version_id>[^/]+)"


def sdk_path(rest: str, view: type[APIView], name: str) -> URLPattern:
    """A memory stores API path; the SDK sends it without a trailing slash, POSTs included,
    so both are taken."""
    return re_path(rf"^v1/memory_stores{rest}/?$", view.as_view(), name=name)


app_name = "api"
urlpatterns = [
    path("v1/", api_index, name="index"),
    path("v1/", include(router.urls)),
    path("v1/changes/", change_list, name="change-list"),
    path("v1/export/pam/", export_pam, name="export-pam"),
    path("v1/erasures/", ErasureView.as_view(), name="erasures"),
    path("v1/tools/", tool_list, name="tool-list"),
    path("v1/tools/<str:name>/", tool_detail, name="tool-detail"),
    sdk_path("", memory_stores.StoreCollection, "memory-stores"),
    sdk_path(f"/{STORE}", memory_stores.StoreDetail, "memory-store"),
    sdk_path(f"/{STORE}/archive", memory_stores.StoreArchive, "memory-store-archive"),
    sdk_path(f"/{STORE}/memories", memory_stores.MemoryCollection, "memory-store-memories"),
    sdk_path(
        f"/{STORE}/memories/(?P<memory_id>[^/]+)",
        memory_stores.MemoryDetail,
        "memory-store-memory",
    ),
    sdk_path(f"/{STORE}/memory_versions", memory_stores.VersionCollection, "memory-store-versions"),
    sdk_path(
        f"/{STORE}/memory_versions/{VERSION}", memory_stores.VersionDetail, "memory-store-version"
    ),
    sdk_path(
        f"/{STORE}/memory_versions/{VERSION}/redact",
        memory_stores.VersionRedact,
        "memory-store-version-redact",
    ),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves Swagger UI's start-up script from its own URL (?script) instead
    # of inline, and the template keeps its page rules in a static file, so the docs work
    # under the strict Content-Security-Policy (no inline script or style). Swagger UI draws
    # its icons as data: images, which this page alone may show.
    path(
        "docs/",
        csp_update({"img-src": ["'self'", "data:"]})(
            SpectacularSwaggerSplitView.as_view(
                url_name="api:schema", template_name="api/swagger_ui.html"
            )
        ),
        name="docs",
    ),
    re_path(r"^(?P<rest>[\s\S]*)$", unknown_path, name="unknown"),
]
