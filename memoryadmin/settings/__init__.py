"""Settings, read from environment variables, one module per concern.

`DJANGO_SETTINGS_MODULE=memoryadmin.settings` loads them all. A module imports what it needs of
another by name (`from memoryadmin.settings.environment import env`), and every setting is
built in one place, in one module, so the order of the imports below decides nothing
(tests/ops/test_settings_modules.py holds both):

- environment: the `MEMORYADMIN_*` variables, production's required ones, DEBUG, DATA_DIR
- core: apps, middleware, templates, entry points, static files
- security: secret key, hosts, HTTPS and cookies, content security policy
- login: passwords, login pages, throttling of failed logins
- database: SQLite by default, PostgreSQL (timeouts, the optional pool)
- background: Celery and beat's periodic passes
- caches: the shared cache the API rate limit counts in
- logs: JSON or text lines with request ids
- api: REST framework and the OpenAPI schema
- app: `MEMORYADMIN`, memoryadmin's own settings (limits, recall, feed, webhooks)
"""

from memoryadmin.settings.api import *  # noqa: F403
from memoryadmin.settings.app import *  # noqa: F403
from memoryadmin.settings.background import *  # noqa: F403
from memoryadmin.settings.caches import *  # noqa: F403
from memoryadmin.settings.core import *  # noqa: F403
from memoryadmin.settings.database import *  # noqa: F403
from memoryadmin.settings.environment import *  # noqa: F403
from memoryadmin.settings.login import *  # noqa: F403
from memoryadmin.settings.logs import *  # noqa: F403
from memoryadmin.settings.security import *  # noqa: F403
