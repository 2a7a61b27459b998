"""Progress bars for long maintenance runs (shown on a terminal only, never in logs).

Drawn with rich, like the import and export commands' bars, so the commands share one
library.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn


@contextmanager
def progress_bar(label: str, unit: str) -> Iterator[Callable[..., None]]:
    """Yield a `progress(done, total)` callback (or `progress(name, done, total)`)."""
    console = Console(stderr=True)
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(unit),
        console=console,
        disable=not console.is_terminal,
    )
    tasks: dict[str, TaskID] = {}

    def update(*args: object) -> None:
        name, done, total = (label, *args) if len(args) == 2 else args
        task = tasks.get(str(name))
        if task is None:
            task = tasks[str(name)] = progress.add_task(str(name), total=int(total))
        progress.update(task, completed=int(done), total=int(total))

    with progress:
        yield update
