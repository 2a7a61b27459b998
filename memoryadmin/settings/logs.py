"""Logs: one JSON object per line in production, each carrying its request's id."""

from __future__ import annotations

from memoryadmin.settings.environment import PRODUCTION, env

# MEMORYADMIN_LOG_FORMAT=json|text overrides the default of the environment.
LOG_FORMAT = env("LOG_FORMAT", "json" if PRODUCTION else "text")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request_id": {"()": "memoryadmin.hosting.logs.RequestIdFilter"},
        "client_errors": {"()": "memoryadmin.hosting.logs.ClientErrorFilter"},
    },
    "formatters": {
        "json": {
            "()": "memoryadmin.hosting.logs.JsonFormatter",
            "fmt": "%(levelname)s %(name)s %(message)s",
        },
        "text": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["request_id"],
        }
    },
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "INFO"},
        # A 4xx is an answer (no_match, conflict, not_found are what agents act on), already
        # logged with its status by memoryadmin.requests; django.request called each a warning.
        "django.request": {"filters": ["client_errors"]},
    },
}
