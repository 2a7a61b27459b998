"""A bulk pass keeps the garbage collector out of its way, and leaves it as it found it."""

from __future__ import annotations

import gc

import pytest

from stores.runtime.collector import BULK_THRESHOLD, rare_collections


def test_a_pass_freezes_the_heap_and_collects_rarely_then_restores_both():
    thresholds, frozen = gc.get_threshold(), gc.get_freeze_count()

    with rare_collections():
        assert gc.get_threshold()[0] == max(BULK_THRESHOLD, thresholds[0])
        assert gc.get_freeze_count() > frozen

    assert gc.get_threshold() == thresholds
    assert gc.get_freeze_count() == frozen


def test_a_nested_pass_leaves_the_setting_to_the_outer_one():
    thresholds = gc.get_threshold()

    with rare_collections():
        with rare_collections():
            pass
        assert gc.get_threshold()[0] == max(BULK_THRESHOLD, thresholds[0])
        assert gc.get_freeze_count() > 0

    assert gc.get_threshold() == thresholds


def test_a_pass_that_raises_still_restores_the_collector():
    thresholds, frozen = gc.get_threshold(), gc.get_freeze_count()
    with pytest.raises(RuntimeError), rare_collections():
        raise RuntimeError("refused")
    assert (gc.get_threshold(), gc.get_freeze_count()) == (thresholds, frozen)
