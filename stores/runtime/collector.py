"""The cyclic garbage collector kept out of the way of a bulk pass (an import of many records).

A pass builds and drops Python objects by the hundred thousand (parsed JSON, validated models,
rows), which sets the collector off every few hundred allocations; its full collections
walked the whole heap (Django, the driver, the validators) each time, a sixth of the CPU of
an import. Within `rare_collections` what the process held before the pass is left out of
every collection (frozen) and young objects are collected less often; both are restored
when the outermost pass ends, and the pass's own garbage is still collected.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# Allocations between collections of the youngest generation (Python's default is 700).
BULK_THRESHOLD = 50_000

_lock = threading.Lock()
_passes = 0
_thresholds: tuple[int, ...] = ()


@contextmanager
def rare_collections() -> Iterator[None]:
    """Collect garbage rarely, and never through what was alive when the pass began; nested
    and concurrent passes share the setting, which the last to end restores."""
    global _passes, _thresholds
    with _lock:
        _passes += 1
        if _passes == 1:
            _thresholds = gc.get_threshold()
            gc.freeze()
            gc.set_threshold(max(BULK_THRESHOLD, _thresholds[0]), *_thresholds[1:])
    try:
        yield
    finally:
        with _lock:
            _passes -= 1
            if _passes == 0:
                gc.set_threshold(*_thresholds)
                gc.unfreeze()
