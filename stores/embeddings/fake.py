"""A deterministic bag-of-words embedder for tests: shared words give similar vectors."""

from __future__ import annotations

import hashlib
import math
import re

from stores.embeddings.base import EmbeddingBackend
from stores.models import EMBEDDING_DIMENSIONS

_WORD = re.compile(r"\w+", re.UNICODE)


class FakeBackend(EmbeddingBackend):
    model_name = "fake/bag-of-words"
    dimensions = EMBEDDING_DIMENSIONS

    def __init__(self, model_name: str | None = None) -> None:
        if model_name:
            self.model_name = model_name

    def _embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._embed(text) for text in texts]

    def _embed_query(self, text: str) -> list[float]:
        return self._embed(text)

    def _embed(self, text: str) -> list[float]:
        vector = [0.0] * self.dimensions
        for word in _WORD.findall(text.casefold()):
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
            index = int.from_bytes(digest[:4], "little") % self.dimensions
            vector[index] += 1.0 if digest[4] % 2 else -1.0
        norm = math.sqrt(sum(value * value for value in vector)) or 1.0
        return [value / norm for value in vector]
