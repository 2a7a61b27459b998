from stores.embeddings.base import (
    EmbeddingBackend,
    EmbeddingError,
    EmbeddingUnavailable,
    get_backend,
)

__all__ = ["EmbeddingBackend", "EmbeddingError", "EmbeddingUnavailable", "get_backend"]
