"""Settings, read from environment variables.

With nothing set, memoryadmin runs on its embedded default: SQLite (WAL, immediate
transactions, a busy timeout), eager Celery tasks and a local embedding model.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from memoryadmin.ops.private_files import installation_secret, private_database, private_directory

BASE_DIR = Path(__file__).resolve().parent.parent


def env(name: str, default: str | None = None) -> str | None:
    return os.environ.get(f"MEMORYADMIN_{name}", default)


def env_bool(name: str, default: bool) -> bool:
    value = env(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in (env(name, default) or "").split(",") if item.strip()]


PRODUCTION = env("ENV", "development") == "production"
# Django's technical error pages show settings, paths and source to whoever triggers an error:
# only when asked for (MEMORYADMIN_DEBUG=true), never by default.
DEBUG = env_bool("DEBUG", False)

# Production must not fall back to a development default: name every missing variable at once.
PRODUCTION_REQUIRED = ("SECRET_KEY", "ALLOWED_HOSTS", "DATABASE_URL", "BROKER_URL")
if PRODUCTION:
    _missing = [f"MEMORYADMIN_{name}" for name in PRODUCTION_REQUIRED if not env(name)]
    if _missing:
        raise ImproperlyConfigured(
            f"MEMORYADMIN_ENV=production needs {', '.join(_missing)} to be set (see .env.example)."
        )

DATA_DIR = Path(env("DATA_DIR", str(BASE_DIR / "var")) or "var")

# Without MEMORYADMIN_SECRET_KEY (production requires it), each installation makes its own
# key on first start and keeps it beside the database: a key written in the source signs
# every installation's sessions alike.
SECRET_KEY = env("SECRET_KEY") or ""
if not SECRET_KEY:
    try:
        SECRET_KEY = installation_secret(private_directory(DATA_DIR) / "secret_key")
    except (OSError, ValueError) as error:
        raise ImproperlyConfigured(
            f"Cannot read or create the secret key in {DATA_DIR} ({error}); "
            "set MEMORYADMIN_SECRET_KEY or MEMORYADMIN_DATA_DIR."
        ) from error

ALLOWED_HOSTS = env_list(
    "ALLOWED_HOSTS", "" if PRODUCTION else "localhost,127.0.0.1,[::1],testserver"
)

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
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "memoryadmin.web.admin_controls.AdminControlsMiddleware",
]

ROOT_URLCONF = "memoryadmin.urls"
WSGI_APPLICATION = "memoryadmin.wsgi.application"

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
            ],
            # visible_controls, for memory text wherever a template shows it.
            "builtins": ["memoryadmin.web.filters"],
        },
    },
]

_database_url = env("DATABASE_URL")
if _database_url:
    DATABASES = {
        "default": dj_database_url.parse(
            _database_url,
            # Django's threads are a fixed pool (memoryadmin/asgi.py), so each thread's kept
            # connection serves its next request.
            conn_max_age=int(env("CONN_MAX_AGE", "60") or 0),
            conn_health_checks=True,
        )
    }
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            # Every agent's memory: readable by the user running memoryadmin only.
            "NAME": private_database(private_directory(DATA_DIR) / "memoryadmin.sqlite3"),
            # Several agents write at once: take the write lock at BEGIN and wait for it,
            # instead of failing read-then-write transactions with "database is locked".
            "OPTIONS": {
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env("STATIC_ROOT", str(BASE_DIR / "var" / "static")) or "var/static")

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"

# Background work: with no broker, tasks run in-process (the embedded default).
CELERY_BROKER_URL = env("BROKER_URL")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
if CELERY_TASK_ALWAYS_EAGER:
    # An eager task never reaches a broker, but Celery still opens a producer to learn the
    # serializer; with no broker named, kombu logged "No hostname was supplied" at every
    # write. The in-memory transport, named with a host, is never used and logs nothing.
    CELERY_BROKER_URL = "memory://localhost/"
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_TASK_TIME_LIMIT = 300
CELERY_TASK_SOFT_TIME_LIMIT = 240
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_RESULT_BACKEND = env("RESULT_BACKEND", env("BROKER_URL"))
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

MEMORYADMIN = {
    "EMBEDDINGS": {
        "BACKEND": env("EMBEDDING_BACKEND", "stores.embeddings.local.LocalE5Backend"),
        "OPTIONS": {},
    },
    # Largest text a record may hold, per surface, in characters; larger writes are refused.
    "MAX_TEXT_LENGTH": {
        "memory": int(env("MAX_MEMORY_LENGTH", "100000") or 100000),
        "working": int(env("MAX_WORKING_LENGTH", "100000") or 100000),
        "skill": int(env("MAX_SKILL_LENGTH", "500000") or 500000),
        "task": int(env("MAX_TASK_LENGTH", "50000") or 50000),
        "rules": int(env("MAX_RULES_LENGTH", "500000") or 500000),
        "file": int(env("MAX_FILE_LENGTH", "500000") or 500000),
    },
}

# A body must fit the largest text a write may carry, as JSON from any client: Python's json
# escapes every non-ASCII character, and a character outside the BMP takes 12 bytes
# ("\ud83d\ude00"). Django's 2.5 MiB default refused a full-length skill in Chinese.
DATA_UPLOAD_MAX_MEMORY_SIZE = 12 * max(MEMORYADMIN["MAX_TEXT_LENGTH"].values()) + 1024 * 1024

# --- Agent API (issue 3) ----------------------------------------------------------------
INSTALLED_APPS += ["drf_spectacular_sidecar"]
MEMORYADMIN["API"] = {
    # Requests per token (or logged-in user) and period; a client over it gets 429.
    "RATE_LIMIT": env("API_RATE_LIMIT", "600/minute"),
}
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "memoryadmin.api.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_THROTTLE_CLASSES": ["memoryadmin.api.throttling.CallerRateThrottle"],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
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
    },
}

# --- Web UI for humans (memoryadmin.web) ---
# Memory text is LLM-written and untrusted: the UI runs no inline script and loads nothing
# from elsewhere, so an injected <script>, handler attribute or remote image cannot run or leak.
MIDDLEWARE = [*MIDDLEWARE, "csp.middleware.CSPMiddleware"]
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'none'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
        "base-uri": ["'none'"],
    },
}

# --- MCP door (issue 9) -------------------------------------------------------------------
# The app is served over ASGI so that /mcp/ (the MCP SDK's Starlette endpoint) runs in the
# same process as Django: see memoryadmin/asgi.py.
ASGI_APPLICATION = "memoryadmin.asgi.application"

# --- Background work and recall -------------------------------------------------------

# Production embeddings: an OpenAI-compatible /v1/embeddings endpoint (OpenAI, Ollama, vLLM,
# TEI). The model must produce 384 dimensions or accept the `dimensions` parameter.
if env("EMBEDDING_URL"):
    MEMORYADMIN["EMBEDDINGS"] = {
        "BACKEND": env("EMBEDDING_BACKEND", "stores.embeddings.http.OpenAICompatibleBackend"),
        "OPTIONS": {
            "url": env("EMBEDDING_URL"),
            "model": env("EMBEDDING_MODEL", ""),
            "api_key": env("EMBEDDING_API_KEY", ""),
            "send_dimensions": env_bool("EMBEDDING_SEND_DIMENSIONS", True),
            "batch_size": int(env("EMBEDDING_BATCH_SIZE", "64") or 64),
            "timeout": float(env("EMBEDDING_TIMEOUT", "30") or 30),
            "max_retries": int(env("EMBEDDING_MAX_RETRIES", "3") or 3),
            "query_prefix": env("EMBEDDING_QUERY_PREFIX", ""),
            "document_prefix": env("EMBEDDING_DOCUMENT_PREFIX", ""),
            # Characters of a text sent at most (stores/embeddings/base.py explains 4096).
            "max_input_chars": int(env("EMBEDDING_MAX_INPUT_CHARS", "4096") or 4096),
        },
    }

MEMORYADMIN["DECAY"] = {
    # Importance halves every HALF_LIFE_DAYS since the memory was last decayed (or created).
    "HALF_LIFE_DAYS": float(env("DECAY_HALF_LIFE_DAYS", "30") or 30),
    "BATCH_SIZE": int(env("DECAY_BATCH_SIZE", "20000") or 20000),
}
# Threads per web process that run Django (memoryadmin/asgi.py), each with its own database
# connection: enough that requests waiting on a row lock or a commit leave others running.
MEMORYADMIN["WEB_THREADS"] = int(env("WEB_THREADS", "8") or 8)
MEMORYADMIN["EXPIRY_BATCH_SIZE"] = int(env("EXPIRY_BATCH_SIZE", "500") or 500)
MEMORYADMIN["REEMBED_BATCH_SIZE"] = int(env("REEMBED_BATCH_SIZE", "64") or 64)
# How a write's new text gets its vector, after commit: "task" sends a Celery task to the
# broker (from a background thread, off the request); "thread" embeds in a background thread
# of the writing process. Either way no answer waits for the model. Without a broker the
# default is "thread", for the server, the shell and commands alike ("task" there would run
# the model inside the write, eagerly: the tests ask for that); the periodic sweep embeds
# whatever a stopped process left stale.
MEMORYADMIN["REEMBED_AFTER_WRITE"] = env(
    "REEMBED_AFTER_WRITE", "thread" if CELERY_TASK_ALWAYS_EAGER else "task"
)
if MEMORYADMIN["REEMBED_AFTER_WRITE"] not in ("task", "thread"):
    raise ImproperlyConfigured("MEMORYADMIN_REEMBED_AFTER_WRITE must be 'task' or 'thread'.")
MEMORYADMIN["SEARCH"] = {
    # How many candidates each side brings to the fusion, at least (more when a page
    # reaches further). Past about 40 nearest neighbours PostgreSQL tends to prefer an
    # exact scan to the HNSW index (measured on 100,000 rows: 140 ms instead of 6 ms), and
    # ranks past 40 add little to the fusion.
    "CANDIDATES": int(env("SEARCH_CANDIDATES", "100") or 100),
    "VECTOR_CANDIDATES": int(env("SEARCH_VECTOR_CANDIDATES", "40") or 40),
    # The relevance cut-off: a query is answered when its best result's fused score (0..1,
    # the mean of the lexical and the vector strength; see stores/selectors/search.py)
    # reaches it; recall then lists, and counts, the results reaching it and those within
    # RELATIVE_SCORE (0.65) of the best. 0 lists every candidate either side gives some
    # strength.
    # At 0.25 a memory holding none of the query's words answers it when its vector stands
    # about 2.6 standard deviations above the store's typical memory for the query.
    "MIN_SCORE": float(env("SEARCH_MIN_SCORE", "0.25") or 0.25),
    # pgvector HNSW search breadth: higher finds more true neighbours, slower. Many agents
    # share one index, and an agent's nearest neighbours are found among the index's: for
    # an agent holding a third of 300,000 memories, recall@10 against an exact scan was
    # 0.906 at 100, 0.958 at 200 and 0.968 at 300 (p95 40 ms; bench/edit_path.py).
    "HNSW_EF_SEARCH": int(env("SEARCH_HNSW_EF_SEARCH", "300") or 300),
    # The vector side ignores neighbours at or under this cosine similarity. 0 drops only
    # unrelated vectors; e5 models score unrelated pairs around 0.7, so raise it for them
    # if a search should not return loosely related memories.
    "VECTOR_MIN_SIMILARITY": float(env("SEARCH_VECTOR_MIN_SIMILARITY", "0") or 0),
    # "Similar memories" shows neighbours at least this similar (cosine).
    "SIMILAR_THRESHOLD": float(env("SIMILAR_THRESHOLD", "0.85") or 0.85),
}

# Celery beat (production, with a broker): the periodic passes, intervals in seconds.
CELERY_BEAT_SCHEDULE = {
    "sweep-stale-embeddings": {
        "task": "stores.tasks.sweep_stale_embeddings",
        "schedule": float(env("SWEEP_INTERVAL", "600") or 600),
    },
    "decay-memories": {
        "task": "stores.tasks.decay_memories",
        "schedule": float(env("DECAY_INTERVAL", "86400") or 86400),
    },
    "purge-expired-working-memory": {
        "task": "stores.tasks.purge_expired_working_memory",
        "schedule": float(env("EXPIRY_INTERVAL", "60") or 60),
    },
}

# --- Production stack (issue 7): static files, security headers, health, logs --------------
# Health probes answer before host validation and the HTTPS redirect (a container probe
# talks plain HTTP to 127.0.0.1); request ids are set first so every log line carries one.
MIDDLEWARE = [
    "memoryadmin.ops.requests.RequestIdMiddleware",
    "memoryadmin.ops.health.HealthCheckMiddleware",
    *MIDDLEWARE,
    "memoryadmin.ops.database.DatabaseUnavailableMiddleware",
]
if PRODUCTION:
    # WhiteNoise serves the collected static files from the app itself (no separate web
    # server); in development runserver serves them from the source folders.
    MIDDLEWARE.insert(
        MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1,
        "whitenoise.middleware.WhiteNoiseMiddleware",
    )
    # Hashed, compressed names: cached for a year by browsers, built by collectstatic.
    STORAGES = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
    }

CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")
# Behind a TLS-terminating proxy, it tells us the original scheme; trust the header only
# when such a proxy is there to overwrite whatever a client sent.
if env_bool("TRUST_X_FORWARDED_PROTO", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("SSL_REDIRECT", PRODUCTION)
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", PRODUCTION)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SESSION_COOKIE_HTTPONLY = True
SECURE_HSTS_SECONDS = int(env("HSTS_SECONDS", "31536000" if PRODUCTION else "0") or 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("HSTS_PRELOAD", False)
if not SECURE_HSTS_PRELOAD:
    # Preloading puts the domain on browsers' built-in lists, which takes months to undo:
    # an operator's decision (MEMORYADMIN_HSTS_PRELOAD=true), not a default.
    SILENCED_SYSTEM_CHECKS = ["security.W021"]
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Workers log through Django's LOGGING (JSON in production) instead of Celery's own format.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # A task a killed worker held is handed out again after this long; the sweep finds
    # its records sooner.
    "visibility_timeout": int(env("BROKER_VISIBILITY_TIMEOUT", "3600") or 3600),
}
# An edit must not wait long on a broker that is down: the sweep re-embeds what it missed.
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2}
# The result backend (Redis too) subscribes to each task's result as it is sent; its own
# default retries a dead Redis for ~20 s, which an edit would wait through.
CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS = {
    "retry_policy": {"max_retries": 2, "interval_start": 0, "interval_step": 0.2}
}
CELERY_BROKER_CONNECTION_TIMEOUT = float(env("BROKER_CONNECTION_TIMEOUT", "2") or 2)

if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # An unreachable host must fail a request (503) in seconds, not hang a worker thread.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault(
        "connect_timeout", int(env("DATABASE_CONNECT_TIMEOUT", "5") or 5)
    )

MEMORYADMIN["READINESS_TIMEOUT"] = float(env("READINESS_TIMEOUT", "3") or 3)

# One JSON object per line in production (MEMORYADMIN_LOG_FORMAT=json|text overrides).
LOG_FORMAT = env("LOG_FORMAT", "json" if PRODUCTION else "text")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request_id": {"()": "memoryadmin.ops.logs.RequestIdFilter"},
        "client_errors": {"()": "memoryadmin.ops.logs.ClientErrorFilter"},
    },
    "formatters": {
        "json": {
            "()": "memoryadmin.ops.logs.JsonFormatter",
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

# --- Shared cache (issue 8) ---
# The API rate limit counts in the cache. Each gunicorn worker is a process with its own
# memory, so without a shared cache a token got the limit once per worker. Production sets
# MEMORYADMIN_CACHE_URL, or shares the broker's Redis; the embedded default (one process)
# keeps the local memory cache.
_cache_url = env("CACHE_URL") or (
    CELERY_BROKER_URL if (CELERY_BROKER_URL or "").startswith(("redis://", "rediss://")) else None
)
if _cache_url:
    CACHES = {
        "default": {
            # Django's own, with its Redis client kept (memoryadmin/ops/cache.py).
            "BACKEND": "memoryadmin.ops.cache.ReusedClientRedisCache",
            "LOCATION": _cache_url,
            "KEY_PREFIX": "memoryadmin",
        }
    }

# --- OpenAPI links (issue 8): a create's `id` is the `ref` of the record's other operations.
SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"] = [
    "drf_spectacular.hooks.postprocess_schema_enums",
    "memoryadmin.api.schema.add_record_links",
    "memoryadmin.api.schema.tool_call_paths",
    "memoryadmin.api.schema.require_constrained_bodies",
]

# --- PostgreSQL connection pool, opt-in ---
# Each of Django's threads keeps a connection of its own (WEB_THREADS per process). A pool per
# process (Django 5.1+, psycopg_pool) shares fewer connections among them, for a database
# that has fewer to give. Off by default: after a database restart the pool reconnects with
# a growing back-off, so the service takes longer to recover than with a connection per
# thread (tests/e2e/test_faults.py).
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and env_bool(
    "DATABASE_POOL", False
):
    DATABASES["default"]["CONN_MAX_AGE"] = 0  # the pool keeps them; Django must not
    # With a pool, Django turns this into the pool's check of each connection it hands out.
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    DATABASES["default"]["OPTIONS"]["pool"] = {
        "min_size": int(env("DATABASE_POOL_MIN_SIZE", "1") or 1),
        "max_size": int(env("DATABASE_POOL_MAX_SIZE", "20") or 20),
        # A request waits this long for a free connection before failing (503).
        "timeout": float(env("DATABASE_POOL_TIMEOUT", "10") or 10),
    }

# --- API answers that quote a lone surrogate from the request are rendered, not a 500.
REST_FRAMEWORK["DEFAULT_RENDERER_CLASSES"] = [
    "memoryadmin.api.renderers.SafeJSONRenderer",
    *REST_FRAMEWORK["DEFAULT_RENDERER_CLASSES"][1:],
]

# --- Login throttling (issue 12) ------------------------------------------------------------
# django-axes counts failed logins of every login form (the UI, the admin, the browsable
# API's) and refuses a username from an address after LOGIN_FAILURE_LIMIT failures for
# LOGIN_COOLOFF_MINUTES; each further failure meanwhile starts the wait again. Counted per
# username *and* address: one attacker cannot lock the administrator out everywhere by
# guessing from elsewhere, only lock themselves out. The address is the connection's: behind
# a proxy, let the server take it from X-Forwarded-For (FORWARDED_ALLOW_IPS, see README).
INSTALLED_APPS += ["axes"]
MIDDLEWARE += ["axes.middleware.AxesMiddleware"]
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = int(env("LOGIN_FAILURE_LIMIT", "5") or 5)
AXES_COOLOFF_TIME = timedelta(minutes=float(env("LOGIN_COOLOFF_MINUTES", "15") or 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "memoryadmin.web.views.login.locked_out"
# No start-up banner on every manage.py command; failures and lockouts are still logged.
AXES_VERBOSE = False

# --- Input limits (issue 12): what any caller may make the server parse or embed ---------
# A recall query is a few words or a sentence. 1,000 characters is about 150 English words,
# more than any search needs, and still fits the one 512-token window e5 reads; longer
# queries were refused only by their cost (20 KB queries stalled other agents' searches).
MEMORYADMIN["MAX_QUERY_LENGTH"] = int(env("MAX_QUERY_LENGTH", "1000") or 1000)
# How deeply objects and arrays may nest in a request body (REST, tools, MCP). The deepest
# legitimate body is metadata inside a create or an MCP call, a few levels past the metadata
# limit; Python's own parser gave up near 990 levels with a 500.
MEMORYADMIN["MAX_JSON_DEPTH"] = int(env("MAX_JSON_DEPTH", "32") or 32)
# A memory's metadata is a small free-form object shown in the admin: at most this deep and
# this many characters as compact JSON, whichever door (API, shell, importer) writes it.
MEMORYADMIN["MAX_METADATA_DEPTH"] = int(env("MAX_METADATA_DEPTH", "20") or 20)
MEMORYADMIN["MAX_METADATA_SIZE"] = int(env("MAX_METADATA_SIZE", "65536") or 65536)

# --- Change feed (issue 16) -------------------------------------------------------------------
MEMORYADMIN["CHANGES"] = {
    # Longest long poll (GET /api/v1/changes/?wait=): a client asks again after it.
    "MAX_WAIT": 30,
    # On SQLite (no LISTEN/NOTIFY) a waiting request re-reads its agent's head this often; on
    # PostgreSQL only while the LISTEN connection is being re-established.
    "POLL_INTERVAL": float(env("CHANGES_POLL_INTERVAL", "0.5") or 0.5),
    # Long polls one token (or person) may hold at once in one web process; more answer 429
    # with retry_after. An agent needs one: every poll of an agent sees the same changes.
    "MAX_HELD_POLLS": int(env("CHANGES_MAX_HELD_POLLS", "8") or 8),
}

# --- Webhooks (issue 16) ------------------------------------------------------------------------
MEMORYADMIN["WEBHOOKS"] = {
    # How deliveries leave after a write commits: "task" enqueues a Celery task; "thread"
    # sends from a background thread of the writing process (the default without a broker,
    # where a Celery task would run inside the request).
    # (CELERY_BROKER_URL names the unused in-memory transport when there is no broker.)
    "DELIVERY": env("WEBHOOK_DELIVERY", "thread" if CELERY_TASK_ALWAYS_EAGER else "task")
    or "thread",
    # Seconds to connect and for each read of one delivery.
    "TIMEOUT": float(env("WEBHOOK_TIMEOUT", "10") or 10),
    # Tries of one change (network errors, 5xx, 408, 429) before it is given up on; the wait
    # after try n is BACKOFF_SECONDS * 2**(n-1), at most MAX_BACKOFF_SECONDS.
    "MAX_ATTEMPTS": int(env("WEBHOOK_MAX_ATTEMPTS", "8") or 8),
    "BACKOFF_SECONDS": float(env("WEBHOOK_BACKOFF_SECONDS", "10") or 10),
    "MAX_BACKOFF_SECONDS": float(env("WEBHOOK_MAX_BACKOFF_SECONDS", "3600") or 3600),
    # A webhook is disabled after this many changes in a row were given up on.
    "MAX_FAILURES": int(env("WEBHOOK_MAX_FAILURES", "5") or 5),
    # Loopback, private and link-local addresses are refused unless this is set (tests, or a
    # receiver on the same private network, on purpose).
    "ALLOW_PRIVATE": env_bool("WEBHOOK_ALLOW_PRIVATE", False),
    # Attempts kept in each webhook's delivery log.
    "LOG_KEEP": int(env("WEBHOOK_LOG_KEEP", "500") or 500),
    # Fernet keys that encrypt the signing secrets at rest, comma separated: the first
    # encrypts, all decrypt (rotation: stores/webhooks/sealing.py). Unset: one derived from
    # SECRET_KEY.
    "SECRET_KEYS": env_list("WEBHOOK_SECRET_KEYS"),
}
if MEMORYADMIN["WEBHOOKS"]["DELIVERY"] not in ("task", "thread"):
    raise ImproperlyConfigured("MEMORYADMIN_WEBHOOK_DELIVERY must be 'task' or 'thread'.")
# What a write's commit did not get out (a stopped worker or process, a lost retry) goes out
# at the next sweep.
CELERY_BEAT_SCHEDULE["deliver-webhooks"] = {
    "task": "stores.tasks.sweep_webhooks",
    "schedule": float(env("WEBHOOK_SWEEP_INTERVAL", "60") or 60),
}
