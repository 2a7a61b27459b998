"""Production embeddings: any OpenAI-compatible `/v1/embeddings` endpoint.

Works with OpenAI, Ollama (`http://host:11434/v1`), vLLM and Hugging Face TEI. The vector
column holds 384 dimensions, so the model must produce 384 (e.g. multilingual-e5-small,
all-MiniLM-L6-v2, bge-small) or accept the `dimensions` request parameter (OpenAI
text-embedding-3-*). A model that answers with another size is refused with a clear
error; nothing is stored.

Written on the standard library's urllib rather than adding httpx or requests: neither is
a dependency, and one JSON POST with a timeout and a retry loop does not justify one.
"""

from __future__ import annotations

import json
import logging
import math
import time
import urllib.error
import urllib.request

from stores.embeddings.base import (
    DEFAULT_MAX_INPUT_CHARS,
    EmbeddingBackend,
    EmbeddingError,
    EmbeddingUnavailable,
)
from stores.models import EMBEDDING_DIMENSIONS

logger = logging.getLogger("memoryadmin.embeddings")

# Answers worth retrying: rate limited, or the server (or a proxy before it) is struggling.
TRANSIENT_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
MAX_RETRY_AFTER_SECONDS = 30.0


class OpenAICompatibleBackend(EmbeddingBackend):
    """Embeds through `POST {url}/embeddings`, in batches, with a timeout and retries."""

    dimensions = EMBEDDING_DIMENSIONS

    def __init__(
        self,
        *,
        url: str,
        model: str,
        api_key: str = "",
        send_dimensions: bool = True,
        batch_size: int = 64,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        query_prefix: str = "",
        document_prefix: str = "",
        max_input_chars: int = DEFAULT_MAX_INPUT_CHARS,
    ) -> None:
        if not url or not model:
            raise EmbeddingError("The HTTP embedding backend needs a url and a model name.")
        url = url.rstrip("/")
        self.url = url if url.endswith("/embeddings") else f"{url}/embeddings"
        self.model = model
        # Recorded beside every vector. Prefixes change the vectors, so they are part of it.
        prefixes = f"|{document_prefix!r}" if (query_prefix or document_prefix) else ""
        self.model_name = f"{model}{prefixes}"
        self.api_key = api_key
        self.send_dimensions = send_dimensions
        self.batch_size = max(1, int(batch_size))
        self.timeout = float(timeout)
        self.max_retries = max(0, int(max_retries))
        self.backoff = float(backoff)
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        # Sent at most: the service's work and the request size stay bounded, whatever the
        # record. Raise it for a model that reads more (OpenAI's read 8,191 tokens).
        self.max_input_chars = max(1, int(max_input_chars))

    def _embed_documents(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = [
                f"{self.document_prefix}{text}" for text in texts[start : start + self.batch_size]
            ]
            vectors.extend(self._embed(batch))
        return vectors

    def _embed_query(self, text: str) -> list[float]:
        return self._embed([f"{self.query_prefix}{text}"])[0]

    # --- one request ---------------------------------------------------------------------

    def _embed(self, texts: list[str]) -> list[list[float]]:
        body: dict[str, object] = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self.send_dimensions:
            body["dimensions"] = self.dimensions
        answer = self._post(json.dumps(body).encode())
        return self._vectors(answer, expected=len(texts))

    def _post(self, payload: bytes) -> dict:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        attempt = 0
        while True:
            request = urllib.request.Request(self.url, data=payload, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return json.loads(response.read())
            except urllib.error.HTTPError as error:
                detail = error.read(500).decode("utf-8", "replace")
                if error.code not in TRANSIENT_STATUSES:
                    raise EmbeddingError(
                        f"The embedding service at {self.url} refused the request "
                        f"({error.code}): {detail}"
                    ) from error
                problem = f"HTTP {error.code}"
                wait = _retry_after(error.headers.get("Retry-After"))
            except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
                problem = str(getattr(error, "reason", error))
                wait = None
            except json.JSONDecodeError as error:
                raise EmbeddingError(
                    f"The embedding service at {self.url} sent no JSON."
                ) from error
            if attempt >= self.max_retries:
                raise EmbeddingUnavailable(
                    f"The embedding service at {self.url} did not answer after "
                    f"{attempt + 1} attempts (last: {problem})."
                )
            delay = wait if wait is not None else self.backoff * (2**attempt)
            logger.warning(
                "embedding request failed (%s); retry %d/%d in %.1fs",
                problem,
                attempt + 1,
                self.max_retries,
                delay,
            )
            time.sleep(delay)
            attempt += 1

    def _vectors(self, answer: dict, *, expected: int) -> list[list[float]]:
        try:
            items = sorted(answer["data"], key=lambda item: item.get("index", 0))
            vectors = [[float(value) for value in item["embedding"]] for item in items]
        except (KeyError, TypeError, ValueError) as error:
            raise EmbeddingError(
                f"The embedding service at {self.url} answered without a `data` list of "
                "embeddings (is encoding_format=float supported?)."
            ) from error
        if len(vectors) != expected:
            raise EmbeddingError(
                f"The embedding service returned {len(vectors)} vectors for {expected} texts."
            )
        for vector in vectors:
            if len(vector) != self.dimensions:
                raise EmbeddingError(
                    f"The model {self.model!r} returned {len(vector)} dimensions; memoryadmin "
                    f"stores {self.dimensions}. Use a {self.dimensions}-dimension model or one "
                    "that accepts the `dimensions` parameter (and keep send_dimensions on)."
                )
        return [_unit(vector) for vector in vectors]


def _unit(vector: list[float]) -> list[float]:
    # Cosine ranking ignores length, but unit vectors keep scores comparable across backends.
    norm = math.sqrt(sum(value * value for value in vector))
    return vector if norm == 0 else [value / norm for value in vector]


def _retry_after(header: str | None) -> float | None:
    if not header:
        return None
    try:
        return min(max(float(header), 0.0), MAX_RETRY_AFTER_SECONDS)
    except ValueError:
        return None
