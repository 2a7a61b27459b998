"""A piece of work the domain hands on after a commit, done by whichever layer connects to it.

The services say *that* a committed write leaves work (a record to re-embed, an agent's
webhooks to deliver to); the background layer (stores.tasks, connected when the app is ready)
says *how*: a thread, a Celery task, or at once. So the services never import the layer that
imports them, and import-linter keeps it so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, ParamSpec

from django.core.exceptions import ImproperlyConfigured

P = ParamSpec("P")


class Handoff(Generic[P]):
    def __init__(self, name: str) -> None:
        self.name = name
        self.handler: Callable[P, None] | None = None

    def connect(self, handler: Callable[P, None]) -> None:
        self.handler = handler

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> None:
        if self.handler is None:
            raise ImproperlyConfigured(
                f"Nothing does {self.name!r}: the stores app connects it when it is ready."
            )
        self.handler(*args, **kwargs)
