"""The layers hold: the import contracts of pyproject.toml (also run by bin/test)."""

from __future__ import annotations

from django.conf import settings
from importlinter.cli import EXIT_STATUS_SUCCESS, lint_imports


def test_the_import_contracts_hold(monkeypatch):
    # Broken contracts are printed with the import chain that breaks each one.
    monkeypatch.chdir(settings.BASE_DIR)
    assert lint_imports(no_cache=True, no_logo=True) == EXIT_STATUS_SUCCESS
