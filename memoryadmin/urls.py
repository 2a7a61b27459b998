from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include("memoryadmin.web.urls")),
]

# The agent API (issue 3): /api/v1/, /api/schema/, /api/docs/.
urlpatterns += [path("api/", include("memoryadmin.api.urls"))]

# A database outage met outside a view answers 503 like one met inside (memoryadmin.ops).
handler500 = "memoryadmin.ops.database.server_error"
