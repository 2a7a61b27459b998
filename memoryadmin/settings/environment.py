"""Where settings come from: `MEMORYADMIN_*` environment variables, and what production needs.

With nothing set, memoryadmin runs on its embedded default: SQLite (WAL, immediate
transactions, a busy timeout), eager Celery tasks and a local embedding model.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent.parent


def env(name: str, default: str | None = None) -> str | None:
    return os.environ.get(f"MEMORYADMIN_{name}", default)


def env_bool(name: str, default: bool) -> bool:
    value = env(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


# A variable set but empty takes the default: an .env file or a compose file names some
# variables without a value.
def env_int(name: str, default: int) -> int:
    return int(env(name) or default)


def env_float(name: str, default: float) -> float:
    return float(env(name) or default)


def env_text(name: str, default: str = "") -> str:
    return env(name) or default


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
