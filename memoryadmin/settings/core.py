"""The Django project itself: its apps, middleware, templates, entry points and static files."""

from __future__ import annotations

from pathlib import Path

from memoryadmin.settings.environment import BASE_DIR, PRODUCTION, env

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "django_filters",
    "django_htmx",
    "template_partials",
    "stores",
    "memoryadmin",
    # Swagger UI and ReDoc served from here, not from a CDN the content policy refuses.
    "drf_spectacular_sidecar",
    # Failed logins counted and refused (login.py).
    "axes",
    # Requests counted by route and status for /metrics (memoryadmin/hosting/metrics.py).
    "django_prometheus",
]

MIDDLEWARE = [
    # django-prometheus times a request between its two middleware: the first and the last.
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    # Request ids are set first so every log line carries one; health probes answer before
    # host validation and the HTTPS redirect (a container probe talks plain HTTP to 127.0.0.1).
    "memoryadmin.hosting.requests.RequestIdMiddleware",
    "memoryadmin.hosting.health.HealthCheckMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # WhiteNoise serves the collected static files from the app itself (no separate web
    # server); in development runserver serves them from the source folders.
    *(["whitenoise.middleware.WhiteNoiseMiddleware"] if PRODUCTION else []),
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # A page's blank 405 (a form's address opened) becomes a page saying what to do.
    "memoryadmin.web.not_allowed.MethodNotAllowedPage",
    # The admin's pages show bidirectional and invisible controls as the app's own marker.
    "memoryadmin.web.admin_controls.AdminControlsMiddleware",
    # The content security policy of every page (security.py).
    "csp.middleware.CSPMiddleware",
    "memoryadmin.hosting.database.DatabaseUnavailableMiddleware",
    # Failed logins counted and refused (login.py).
    "axes.middleware.AxesMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]

# django-prometheus's migration gauges would query the database as each process starts.
PROMETHEUS_EXPORT_MIGRATIONS = False

ROOT_URLCONF = "memoryadmin.urls"
WSGI_APPLICATION = "memoryadmin.wsgi.application"
# The app is served over ASGI so that /mcp/ (the MCP SDK's Starlette endpoint) runs in the
# same process as Django: see memoryadmin/asgi.py.
ASGI_APPLICATION = "memoryadmin.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                # Whether the login page offers single sign-on, the password form, or both.
                "memoryadmin.web.sso.login_options",
                # How often an open page asks what changed since it was loaded.
                "memoryadmin.web.views.live.page_poll",
            ],
            # visible_controls, for memory text wherever a template shows it.
            "builtins": ["memoryadmin.web.filters"],
        },
    },
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env("STATIC_ROOT", str(BASE_DIR / "var" / "static")) or "var/static")
if PRODUCTION:
    # Hashed, compressed names: cached for a year by browsers, built by collectstatic.
    STORAGES = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
    }
