"""bin/typecheck's baseline only goes down: a new error fails, a fixed one must be kept, and
the strict packages are excused nothing."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from collections import Counter
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def typecheck() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("typecheck", str(ROOT / "bin" / "typecheck"))
    spec = importlib.util.spec_from_loader("typecheck", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


OUTPUT = """\
stores/engine/commit.py:10: error: Incompatible types in assignment  [assignment]
stores/engine/commit.py:20: error: Incompatible types in assignment  [assignment]
stores/engine/commit.py:30: note: See https://mypy.readthedocs.io
memoryadmin/web/forms.py:5: error: Missing type parameters  [type-arg]
memoryadmin/web/forms.py:9: error: Something without a code
"""
STRICT = ("stores/editing/", "stores/ops/")


def test_errors_are_counted_per_file_and_code_and_notes_are_not():
    counts, lines = typecheck().errors_by_key(OUTPUT)

    assert counts == Counter(
        {
            ("stores/engine/commit.py", "assignment"): 2,
            ("memoryadmin/web/forms.py", "type-arg"): 1,
            ("memoryadmin/web/forms.py", "error"): 1,
        }
    )
    assert lines[("memoryadmin/web/forms.py", "type-arg")] == [OUTPUT.splitlines()[3]]


def test_the_baseline_reads_back_what_it_wrote():
    module = typecheck()
    counts, _ = module.errors_by_key(OUTPUT)

    assert module.read_baseline(module.write_baseline(counts)) == counts


def test_one_error_more_fails_and_one_fewer_must_lower_the_baseline():
    module = typecheck()
    baseline, _ = module.errors_by_key(OUTPUT)
    more = baseline + Counter({("stores/engine/commit.py", "assignment"): 1})
    elsewhere = baseline + Counter({("stores/services/new.py", "arg-type"): 1})
    fewer = baseline - Counter({("stores/engine/commit.py", "assignment"): 1})

    assert module.judge(baseline, baseline, STRICT) == ([], [], [])
    assert module.judge(more, baseline, STRICT)[0] == [("stores/engine/commit.py", "assignment")]
    assert module.judge(elsewhere, baseline, STRICT)[0] == [("stores/services/new.py", "arg-type")]
    assert module.judge(fewer, baseline, STRICT)[1] == [("stores/engine/commit.py", "assignment")]


def test_a_strict_package_is_excused_nothing():
    module = typecheck()
    error = Counter({("stores/ops/edit.py", "no-untyped-def"): 1})

    assert module.judge(error, Counter(), STRICT)[0] == [("stores/ops/edit.py", "no-untyped-def")]
    assert module.judge(error, error, STRICT)[2] == [("stores/ops/edit.py", "no-untyped-def")]


def test_the_strict_packages_are_read_from_pyproject_and_the_baseline_excuses_none():
    module = typecheck()
    baseline = module.read_baseline(module.BASELINE.read_text())

    assert module.strict_prefixes() == STRICT
    assert baseline and not [key for key in baseline if key[0].startswith(STRICT)]
