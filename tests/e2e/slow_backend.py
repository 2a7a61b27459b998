"""The fake embedder, slowed down, for the worker in the end-to-end tests.

It makes the same vectors under the same model name as FakeBackend (so the web process and
the worker agree on what is fresh) but takes E2E_EMBED_DELAY seconds per text: a sweep is
slow enough for a test to kill the worker in the middle of it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

from stores.embeddings.fake import FakeBackend


class SlowFakeBackend(FakeBackend):
    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        time.sleep(float(os.environ.get("E2E_EMBED_DELAY", "0")) * len(texts))
        return super().embed_documents(texts)
