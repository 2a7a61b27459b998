"""The pair model: its features, fitting with a penalty chosen on held-out sets, its verdicts,
and a stored model read back or refused."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from stores.editing.likeness import Kind
from stores.embeddings.pairs import (
    LABELS,
    PENALTIES,
    PairModelError,
    dump,
    fit,
    load,
    pair_features,
)

WIDTH = 16
# A direction that, changed between two otherwise alike texts, makes them contradict.
CONTRADICTION = 3

finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False)
vectors = arrays(np.float64, (2, WIDTH), elements=finite).filter(
    lambda pair: bool((np.linalg.norm(pair, axis=1) > 1e-3).all())
)


def labelled_pairs(seed: int, count: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Pairs of three kinds: a text and itself slightly moved (duplicate), the same with the
    contradiction's direction turned over (conflict), two texts apart (fine)."""
    rng = np.random.default_rng(seed)
    first, second, labels = [], [], []
    for number in range(count):
        base = rng.normal(size=WIDTH)
        base[CONTRADICTION] = 3.0
        label = LABELS[number % 3]
        if label == "duplicate":
            other = base + rng.normal(scale=0.1, size=WIDTH)
        elif label == "conflict":
            other = base + rng.normal(scale=0.1, size=WIDTH)
            other[CONTRADICTION] = -3.0
        else:
            other = rng.normal(size=WIDTH)
        first.append(base)
        second.append(other)
        labels.append(label)
    return np.asarray(first), np.asarray(second), labels


@given(vectors, st.floats(0.1, 100))
@settings(max_examples=50)
def test_features_are_the_same_whichever_text_comes_first_and_whatever_its_length(pair, scale):
    first, second = pair[:1], pair[1:]

    assert np.allclose(pair_features(first, second), pair_features(second, first))
    assert np.allclose(pair_features(first * scale, second), pair_features(first, second))
    assert pair_features(first, second).shape == (1, 2 * WIDTH + 1)


def test_a_fitted_model_tells_the_three_kinds_apart_on_pairs_it_never_saw():
    first, second, labels = labelled_pairs(seed=1, count=180)
    groups = ["a", "b", "c"] * 60
    model = fit(first, second, labels, groups, embedding_model="test/model")

    new_first, new_second, truth = labelled_pairs(seed=2, count=60)
    verdicts = model.verdicts(new_first, new_second)

    read = [str(verdict[0]) if verdict else "fine" for verdict in verdicts]
    assert sum(got == want for got, want in zip(read, truth, strict=True)) >= 57
    assert all(1 / 3 < verdict[1] <= 1 for verdict in verdicts if verdict)
    assert {verdict[0] for verdict in verdicts if verdict} == {Kind.DUPLICATE, Kind.CONFLICT}


def test_the_penalty_is_chosen_by_the_sets_held_out_in_turn():
    first, second, labels = labelled_pairs(seed=3, count=90)
    model = fit(first, second, labels, ["x", "y"] * 45, embedding_model="test/model")

    right = model.about["held_out_right_by_penalty"]
    assert set(right) == {str(penalty) for penalty in PENALTIES}
    assert right[str(model.about["penalty"])] == max(right.values())
    assert model.about["pairs"] == {"fine": 30, "duplicate": 30, "conflict": 30}
    assert model.about["groups"] == ["x", "y"]


def test_a_stored_model_reads_back_with_the_same_verdicts(tmp_path):
    first, second, labels = labelled_pairs(seed=4, count=60)
    model = fit(first, second, labels, ["a", "b"] * 30, embedding_model="test/model")
    path = tmp_path / "model.json"
    dump(model, path)

    again = load(path)

    assert again.embedding_model == "test/model"
    assert np.allclose(
        again.probabilities(first, second), model.probabilities(first, second), atol=1e-4
    )


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda stored: stored.pop("weights"), "not a pair model"),
        (lambda stored: stored.update(labels=["fine", "conflict", "duplicate"]), "labels"),
        (lambda stored: stored.update(bias=[0.0, 0.0]), "do not fit together"),
        (lambda stored: stored.update(centre="many"), "not a pair model"),
    ],
)
def test_a_damaged_model_is_refused_with_what_is_wrong(tmp_path, damage, message):
    first, second, labels = labelled_pairs(seed=5, count=30)
    path = tmp_path / "model.json"
    dump(fit(first, second, labels, ["a"] * 30, embedding_model="test/model"), path)
    stored = json.loads(path.read_text())
    damage(stored)
    path.write_text(json.dumps(stored))

    with pytest.raises(PairModelError, match=message):
        load(path)


def test_a_file_that_is_not_json_is_refused(tmp_path):
    path = tmp_path / "model.json"
    path.write_text("<html>")

    with pytest.raises(PairModelError, match="not a pair model"):
        load(path)


def test_pairs_missing_a_label_or_with_an_unknown_one_are_refused():
    first, second, labels = labelled_pairs(seed=6, count=30)

    with pytest.raises(PairModelError, match="every label"):
        fit(first, second, ["fine"] * 30, ["a"] * 30, embedding_model="m")
    with pytest.raises(PairModelError, match="unknown labels"):
        fit(first, second, ["same", *labels[1:]], ["a"] * 30, embedding_model="m")
