"""The one progress bar of the management commands."""

from __future__ import annotations

import io

from rich.console import Console

from stores.management.progress import console_for, progress_bar


def terminal() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=True, width=100), out


def test_a_sweep_of_several_surfaces_draws_one_line_each():
    console, out = terminal()
    with progress_bar(console, "re-embed", unit="records") as bar:
        bar.report("memory", 3, 4)
        bar.report("skill", 2, 2)
    drawn = out.getvalue()
    assert "re-embed memory" in drawn and "3/4" in drawn
    assert "re-embed skill" in drawn and "2/2" in drawn


def test_a_counted_run_advances_one_bar():
    console, out = terminal()
    with progress_bar(console, "importing files", total=5) as bar:
        for _ in range(5):
            bar.advance()
        bar.report(5, 5)
    assert out.getvalue().count("importing files") >= 1 and "5/5" in out.getvalue()


def test_nothing_is_drawn_off_a_terminal():
    """Regression: maintenance commands drew on the process's stderr, not the command's,
    so a caller capturing the command's output could not keep the bar out."""
    out = io.StringIO()
    with progress_bar(console_for(out), "decay", unit="ids") as bar:
        bar.report(1, 2)
    assert out.getvalue() == ""
