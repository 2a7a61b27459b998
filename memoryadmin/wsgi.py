"""Django alone as a WSGI application, for tools that expect one (production serves
memoryadmin.asgi, which runs this same Django in its threads beside MCP and the change feed)."""

from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryadmin.settings")

application = get_wsgi_application()
