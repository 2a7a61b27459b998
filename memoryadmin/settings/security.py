"""What keeps a deployment safe: its secret key, hosts, HTTPS, cookies and content policy."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from memoryadmin.hosting.private_files import installation_secret, private_directory
from memoryadmin.settings.environment import DATA_DIR, PRODUCTION, env, env_bool, env_list, env_text

# Without MEMORYADMIN_SECRET_KEY (production requires it), each installation makes its own
# key on first start and keeps it beside the database: a key written in the source signs
# every installation's sessions alike.
SECRET_KEY = env_text("SECRET_KEY")
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

# Memory text is LLM-written and untrusted: the UI runs no inline script and loads nothing
# from elsewhere, so an injected <script>, handler attribute or remote image cannot run or leak.
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
