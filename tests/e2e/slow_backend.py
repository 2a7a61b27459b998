"""The fake embedder, slowed down, for the worker in the end-to-end tests.

It makes the same vectors under the same model name as FakeBackend (so the web process and
the worker agree on what is fresh) but takes E2E_EMBED_DELAY seconds per text, and writes
one line per call to E2E_EMBED_MARKER: the test knows a batch is under way and kills the
worker in the middle of it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

from stores.embeddings.fake import FakeBackend


class SlowFakeBackend(FakeBackend):
    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        marker = os.environ.get("E2E_EMBED_MARKER")
        if marker:
            with Path(marker).open("a") as file:
                file.write(f"{len(texts)}\n")
        time.sleep(float(os.environ.get("E2E_EMBED_DELAY", "0")) * len(texts))
        return super().embed_documents(texts)
