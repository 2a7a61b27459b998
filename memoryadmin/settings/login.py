"""Who may sign in: passwords, the login pages, and throttling of failed logins."""

from __future__ import annotations

from datetime import timedelta

from memoryadmin.settings.environment import env_float, env_int

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"

# django-axes counts failed logins of every login form (the UI, the admin, the browsable
# API's) and refuses a username from an address after LOGIN_FAILURE_LIMIT failures for
# LOGIN_COOLOFF_MINUTES; each further failure meanwhile starts the wait again. Counted per
# username *and* address: one attacker cannot lock the administrator out everywhere by
# guessing from elsewhere, only lock themselves out. The address is the connection's: behind
# a proxy, let the server take it from X-Forwarded-For (FORWARDED_ALLOW_IPS, see README).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    # Django's password check, refused while MEMORYADMIN_LOCAL_PASSWORDS is false.
    "memoryadmin.web.sso.LocalPasswordBackend",
    "memoryadmin.web.sso.SSOBackend",
]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_float("LOGIN_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "memoryadmin.web.views.login.locked_out"
# No start-up banner on every manage.py command; failures and lockouts are still logged.
AXES_VERBOSE = False

# Single sign-on with OpenID Connect (memoryadmin/web/sso.py): mozilla-django-oidc with the
# provider's discovery document, PKCE, state and nonce; groups mapped to staff and to per-agent
# grants at every login. What the provider is: MEMORYADMIN["OIDC"] (app.py).
OIDC_AUTHENTICATE_CLASS = "memoryadmin.web.sso.SSOStart"
OIDC_CALLBACK_CLASS = "memoryadmin.web.sso.SSOCallback"
LOGIN_REDIRECT_URL_FAILURE = "/accounts/login/?sso=refused"
