from stores.embeddings.base import EmbeddingBackend, get_backend

__all__ = ["EmbeddingBackend", "get_backend"]
