"""`manage.py fit_pair_model`: a model fitted for the configured embedding model from labelled
sets, one half of them when asked, and labelled sets it cannot read refused."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from stores.embeddings.pairs import load

PAIRS = [
    ("duplicate", "The user lives in Paris.", "User is based in Paris, France."),
    ("duplicate", "Drinks tea every morning.", "Has a cup of tea each morning."),
    ("conflict", "The user lives in Paris.", "The user lives in Rome."),
    ("conflict", "Never drinks coffee.", "Drinks two coffees a day."),
    ("fine", "The user lives in Paris.", "The user's sister lives in Rome."),
    ("fine", "Drinks tea every morning.", "Likes green tea best."),
]


def labelled_set(path: Path, halves: tuple[str, ...] = ("tuning",)) -> Path:
    pairs = [
        {"label": label, "first": first, "second": second, "half": half}
        for half in halves
        for label, first, second in PAIRS
    ]
    path.write_text(json.dumps({"pairs": pairs}))
    return path


def test_a_model_is_fitted_for_the_embedding_model_and_says_how(tmp_path):
    first, second = labelled_set(tmp_path / "one.json"), labelled_set(tmp_path / "two.json")
    out = tmp_path / "model.json"
    said = StringIO()

    call_command("fit_pair_model", "--pairs", first, "--pairs", second, "--out", out, stdout=said)

    model = load(out)
    assert model.embedding_model == "fake/bag-of-words"
    assert model.about["sets"] == ["one.json", "two.json"]
    assert model.about["pairs"] == {"fine": 4, "duplicate": 4, "conflict": 4}
    assert f"on 12 pairs (4 fine, 4 duplicate, 4 conflict); penalty {model.about['penalty']}" in (
        said.getvalue()
    )


def test_only_the_half_asked_for_is_fitted_on(tmp_path):
    both = labelled_set(tmp_path / "set.json", halves=("tuning", "held-out"))
    out = tmp_path / "model.json"

    call_command(
        "fit_pair_model", "--pairs", both, "--half", "tuning", "--out", out, stdout=StringIO()
    )

    assert sum(load(out).about["pairs"].values()) == len(PAIRS)
    with pytest.raises(CommandError, match="no pairs of half 'other'"):
        call_command("fit_pair_model", "--pairs", both, "--half", "other", "--out", out)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[1, 2", "not a labelled set"),
        ('{"pairs": [{"label": "duplicate", "first": "a"}]}', "pair 1 needs a label"),
        ('{"pairs": [{"label": "same", "first": "a", "second": "b"}]}', "'same' is not one of"),
    ],
)
def test_a_set_it_cannot_read_is_refused_and_nothing_is_written(tmp_path, content, message):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    out = tmp_path / "model.json"

    with pytest.raises(CommandError, match=message):
        call_command("fit_pair_model", "--pairs", bad, "--out", out)
    assert not out.exists()
