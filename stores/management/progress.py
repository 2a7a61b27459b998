"""Progress bars for long maintenance runs (shown on a terminal only, never in logs)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from tqdm import tqdm


@contextmanager
def progress_bar(label: str, unit: str) -> Iterator[Callable[..., None]]:
    """Yield a `progress(done, total)` callback (or `progress(name, done, total)`)."""
    bars: dict[str, tqdm] = {}

    def update(*args: object) -> None:
        name, done, total = (label, *args) if len(args) == 2 else args
        bar = bars.get(str(name))
        if bar is None:
            # disable=None: draw only when stderr is a terminal.
            bar = bars[str(name)] = tqdm(total=int(total), desc=str(name), unit=unit, disable=None)
        bar.total = int(total)
        bar.update(int(done) - bar.n)

    try:
        yield update
    finally:
        for bar in bars.values():
            bar.close()
