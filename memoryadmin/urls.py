from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

from memoryadmin.hosting.metrics import metrics

urlpatterns = [
    path("admin/", admin.site.urls),
    path("metrics", metrics, name="metrics"),
    path("accounts/", include("django.contrib.auth.urls")),
    # Single sign-on (memoryadmin/web/sso.py): 404 while MEMORYADMIN_OIDC_* are not set.
    path("oidc/", include("mozilla_django_oidc.urls")),
    path("", include("memoryadmin.web.urls")),
]

# The agent API: /api/v1/, /api/schema/, /api/docs/. The browsable API's login
# comes first, at the top level: DRF's templates reverse "rest_framework:login", which does
# not resolve inside the "api" namespace (NoReverseMatch), and the API's catch-all would
# answer its paths otherwise.
urlpatterns += [
    path("api/auth/", include("rest_framework.urls")),
    path("api/", include("memoryadmin.api.urls")),
]

# A database outage met outside a view answers 503 like one met inside (memoryadmin.hosting).
handler500 = "memoryadmin.hosting.database.server_error"
