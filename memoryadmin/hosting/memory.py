"""Memory of answered requests given back to the system, not kept after a load of bodies.

Measured on the held-bodies load of bench/hostile.py (E12: 300 connections each sending a
2.4 MiB body, 13 of them read within the budget): the server stayed 32 MiB above where it
began. Of that, 31 MiB were the 13 answered requests themselves, each with its body: every
Django request is in a reference cycle (its message storage, its htmx details and the REST
framework's request each point back at it), so it is freed only by a full collection of
Python's garbage collector, which may not come for a long time. After `gc.collect()` 10 MiB
more were free but kept on glibc's heap, which `malloc_trim(0)` gives back. Python's own
arenas and glibc's per-thread arenas kept under 3 MiB (the pool's threads, started by the
first load): MALLOC_ARENA_MAX would change nothing here.

So each time `RELEASE_EVERY` of the budget has been read in bodies and answered, the cycles
are collected and the heap trimmed: once per that many bytes of bodies, not per request,
whether or not other bodies are held (waiting until none was let a steady stream of bodies
pile up past the budget: 130 read in that load, the server 129 MiB above its start).

A full collection walks every object the collector tracks: 340 ms for the 180,000 that
importing the application makes, the event loop stopped meanwhile (on 2 cores other work
kept busy). Those live as long as the process, so once loaded they are frozen (`gc.freeze`:
never walked again, and never collected, which only a cycle among them would need); a
collection then walks the 15,000 or so made since, in 20 to 35 ms on the same machine.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import time
from collections.abc import Callable

logger = logging.getLogger("memoryadmin.memory")

# The share of the in-flight budget read in bodies after which memory is given back.
RELEASE_EVERY = 0.25


def _heap_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, None under another C library (musl, macOS): nothing to trim."""
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None


_malloc_trim = _heap_trim()


def freeze_loaded() -> None:
    """Exclude every object alive now from later collections: call once, when the process has
    loaded what it keeps for its whole life."""
    gc.collect()
    gc.freeze()


def give_back() -> None:
    """Free the answered requests still in reference cycles, then return glibc's free heap."""
    started = time.perf_counter()
    gc.collect()
    if _malloc_trim is not None:
        _malloc_trim(0)
    logger.debug("memory given back in %.1f ms", (time.perf_counter() - started) * 1000)
