"""The embedding backend interface and how the configured one is chosen."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Protocol

from django.conf import settings
from django.utils.module_loading import import_string


class EmbeddingUnavailable(ConnectionError):
    """The embedding service could not answer now (down, overloaded, timed out).

    A ConnectionError, so the re-embed task retries it with backoff; the record stays
    stale meanwhile and the periodic sweep catches it if every retry fails.
    """


class EmbeddingError(RuntimeError):
    """The embedding service answered, but not with usable vectors (bad config, bad model)."""


class EmbeddingBackend(Protocol):
    """Turns texts into unit vectors. Documents and queries may be embedded differently."""

    #: Recorded beside every vector; a different name marks every vector stale.
    model_name: str
    dimensions: int

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...


@functools.cache
def _load(dotted_path: str, options: tuple[tuple[str, object], ...]) -> EmbeddingBackend:
    backend_class = import_string(dotted_path)
    return backend_class(**dict(options))


def get_backend() -> EmbeddingBackend:
    config = settings.MEMORYADMIN["EMBEDDINGS"]
    return _load(config["BACKEND"], tuple(sorted(config.get("OPTIONS", {}).items())))
