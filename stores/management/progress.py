"""The one progress bar of the management commands (shown on a terminal only, never in logs).

Drawn with rich, which also draws the commands' summary tables. A command either advances
the bar as it goes (import and export count lines, files or records) or hands `report` to a
service that says how far it is (`progress(done, total)`, or `progress(name, done, total)`
for a sweep of several surfaces, one line each).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


def console_for(stream: IO[str]) -> Console:
    """A console on the command's own stream, so tests and redirects capture what it prints."""
    return Console(file=stream, soft_wrap=True, highlight=False)


class Bar:
    def __init__(self, progress: Progress, label: str, total: int | None) -> None:
        self._progress = progress
        self._label = label
        self._tasks: dict[str, TaskID] = {}
        self._main = progress.add_task(label, total=total) if total is not None else None

    def advance(self, amount: int = 1) -> None:
        if self._main is None:
            self._main = self._progress.add_task(self._label, total=None)
        self._progress.advance(self._main, amount)

    def report(self, *args: object) -> None:
        """`report(done, total)`, or `report(name, done, total)` for one line per name."""
        name, done, total = (None, *args) if len(args) == 2 else args
        if name is None:
            if self._main is None:
                self._main = self._progress.add_task(self._label, total=int(total))
            task = self._main
        else:
            task = self._tasks.get(str(name))
            if task is None:
                task = self._tasks[str(name)] = self._progress.add_task(
                    f"{self._label} {name}", total=int(total)
                )
        self._progress.update(task, completed=int(done), total=int(total))


@contextmanager
def progress_bar(
    console: Console, label: str, *, total: int | None = None, unit: str = ""
) -> Iterator[Bar]:
    """A bar labelled `label` on `console`, drawn only if it is a terminal."""
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(unit),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=not console.is_terminal,
    )
    with progress:
        yield Bar(progress, label, total)
