"""The agent API: Django REST framework and the OpenAPI schema drf-spectacular builds."""

from __future__ import annotations

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "memoryadmin.api.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_THROTTLE_CLASSES": ["memoryadmin.api.throttling.CallerRateThrottle"],
    "DEFAULT_RENDERER_CLASSES": [
        # An answer quoting a lone surrogate from the request is rendered, not a 500.
        "memoryadmin.api.renderers.SafeJSONRenderer",
        "memoryadmin.api.renderers.BrowsableAPIRenderer",
    ],
    # JSON only: nested edits and typed fields do not survive form encoding. Bounded in
    # depth (MAX_JSON_DEPTH): a body nested ~1,000 deep was a RecursionError and a 500.
    "DEFAULT_PARSER_CLASSES": ["memoryadmin.api.parsers.BoundedJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "memoryadmin.api.exceptions.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "memoryadmin agent API",
    "DESCRIPTION": "Read and correct an AI agent's memory. Every answer carries a `status` "
    "word; see the README section 'Agent API'.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "StatusWord": "memoryadmin.api.serializers.outputs.STATUS_WORDS",
        "ReadStatus": ["ok"],
        "MemoryStore": "stores.models.memories.Memory.Store",
        "RevisionSide": "stores.services.erasure.SIDES",
        # A flag sent only as true: clear a working memory's expiry; hold the unsourced writes.
        "OnlyTrue": [(True, True)],
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        # A create's `id` is the `ref` of the record's other operations: OpenAPI links say so.
        "memoryadmin.api.schema.add_record_links",
        "memoryadmin.api.schema.tool_call_paths",
        "memoryadmin.api.schema.require_constrained_bodies",
        "memoryadmin.api.schema.declare_door_refusals",
        "memoryadmin.api.schema.blank_as_any_of",
        "memoryadmin.api.schema.free_json_without_nul",
    ],
}
