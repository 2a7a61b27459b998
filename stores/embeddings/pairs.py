"""What two memories' embeddings say of the pair: a small model fitted to labelled pairs.

The rule of `stores.editing.likeness` decides a pair when its words say it. A paraphrase that
changes every word ("T-shirt size M" / "The user wears medium in tops") or a contradiction
said positively on one side ("never eats breakfast" / "has porridge every morning") it leaves
alone, and the embeddings' cosine cannot tell those from two different facts about one topic:
on the project's labelled sets the three kinds' similarities overlap almost whole. Where the
vectors differ says more than how far apart they are. This model reads a pair as Sentence-BERT's
NLI classifier does, from the product and the absolute difference of the two unit vectors and
their cosine, with a multinomial logistic regression: fine, duplicate or conflict.

A model's weights mean something only for the embedding model whose vectors they were fitted
on, so each is fitted for one (`manage.py fit_pair_model`) and names it; its penalty is chosen
by cross-validation with each labelled set held out in turn, so it is chosen for sets it did
not see. It reads meaning only: who or when a text is about (two people, "used to" beside
"now") its vectors barely show, and the pass asks it only about pairs the rule's structure
does not keep apart (`likeness.kept_apart`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from stores.editing.likeness import Kind

Vectors = npt.NDArray[np.float64]

# The model's classes, in the order of its weights' columns.
FINE = "fine"
LABELS: tuple[str, ...] = (FINE, Kind.DUPLICATE.value, Kind.CONFLICT.value)
# The penalties (L2, on standardised features) cross-validation chooses among.
PENALTIES = (0.003, 0.01, 0.03, 0.1, 0.3, 1.0)
# Full-batch gradient descent: standardised features converge well within these steps, and
# the same pairs give the same weights on every machine.
_STEPS = 1500
_STEP_SIZE = 0.1
# Digits kept of each number in the stored model: more change no verdict.
_DIGITS = 6


class PairModelError(ValueError):
    """A stored pair model that cannot be read, or labelled pairs that cannot be fitted."""


@dataclass(frozen=True)
class PairModel:
    """A fitted model: the embedding model it reads, and its weights."""

    embedding_model: str
    centre: Vectors
    scale: Vectors
    weights: Vectors  # one column per label
    bias: Vectors
    # How it was fitted: the sets, how many pairs of each label, the cross-validation.
    about: dict[str, Any] = field(default_factory=dict)

    def probabilities(self, first: Vectors, second: Vectors) -> Vectors:
        """Each pair's probability of each label (rows: pairs; columns: LABELS)."""
        return self.read(pair_features(first, second))

    def read(self, features: Vectors) -> Vectors:
        """`probabilities` of pairs given by their features."""
        return _softmax(((features - self.centre) / self.scale) @ self.weights + self.bias)

    def verdicts(self, first: Vectors, second: Vectors) -> list[tuple[Kind, float] | None]:
        """Each pair's most probable label and its probability, None where that is fine.
        (A floor on the probability found fewer of the held-out sets' pairs for every one it
        kept from being suggested wrongly.)"""
        found: list[tuple[Kind, float] | None] = []
        for row in self.probabilities(first, second):
            best = int(row.argmax())
            found.append(None if LABELS[best] == FINE else (Kind(LABELS[best]), float(row[best])))
        return found

    def as_json(self) -> dict[str, Any]:
        return {
            "embedding_model": self.embedding_model,
            "about": self.about,
            "labels": list(LABELS),
            "centre": _rounded(self.centre),
            "scale": _rounded(self.scale),
            "weights": _rounded(self.weights),
            "bias": _rounded(self.bias),
        }


def pair_features(first: Vectors, second: Vectors) -> Vectors:
    """Rows of pair features: the unit vectors' product, their absolute difference and
    their cosine. Each is the same whichever text comes first."""
    first, second = _unit(first), _unit(second)
    product = first * second
    return np.hstack([product, np.abs(first - second), product.sum(axis=1, keepdims=True)])


def load(path: Path) -> PairModel:
    """The pair model stored at `path` (`dump`'s JSON)."""
    try:
        stored = json.loads(Path(path).read_text("utf-8"))
        if stored["labels"] != list(LABELS):
            raise PairModelError(f"{path}: labels {stored['labels']}, expected {list(LABELS)}")
        model = PairModel(
            embedding_model=str(stored["embedding_model"]),
            centre=np.asarray(stored["centre"], dtype=np.float64),
            scale=np.asarray(stored["scale"], dtype=np.float64),
            weights=np.asarray(stored["weights"], dtype=np.float64),
            bias=np.asarray(stored["bias"], dtype=np.float64),
            about=dict(stored.get("about", {})),
        )
    except (OSError, ValueError, KeyError, TypeError) as error:
        if isinstance(error, PairModelError):
            raise
        raise PairModelError(f"{path}: not a pair model ({error})") from error
    width = len(model.centre)
    shapes = (model.scale.shape, model.weights.shape, model.bias.shape)
    if width % 2 != 1 or shapes != ((width,), (width, len(LABELS)), (len(LABELS),)):
        raise PairModelError(f"{path}: its weights do not fit together")
    return model


def dump(model: PairModel, path: Path) -> None:
    Path(path).write_text(json.dumps(model.as_json(), indent=1) + "\n", "utf-8")


def fit(
    first: Vectors,
    second: Vectors,
    labels: Sequence[str],
    groups: Sequence[str],
    *,
    embedding_model: str,
    penalties: Sequence[float] = PENALTIES,
) -> PairModel:
    """A model fitted to the pairs (`first[i]`, `second[i]`) labelled `labels[i]` (of
    LABELS), its penalty the one whose models, fitted with each group (a labelled set) left
    out in turn, gave the most left-out pairs their label. (The least log-loss chose
    heavier penalties, whose flatter probabilities found fewer pairs on sets never seen.)"""
    unknown = sorted(set(labels) - set(LABELS))
    if unknown:
        raise PairModelError(f"unknown labels {unknown}: each pair is one of {list(LABELS)}")
    if len(set(labels)) < len(LABELS):
        raise PairModelError(f"the pairs need every label of {list(LABELS)}")
    features = pair_features(first, second)
    targets = np.asarray([LABELS.index(label) for label in labels])
    group_of = np.asarray(groups)
    held_out = sorted(set(groups))
    right: dict[float, float] = {}
    if len(held_out) > 1:
        for penalty in penalties:
            named = 0
            for group in held_out:
                fitting = group_of != group
                model = _fitted(features[fitting], targets[fitting], penalty, embedding_model)
                read = model.read(features[~fitting]).argmax(axis=1)
                named += int((read == targets[~fitting]).sum())
            right[penalty] = named / len(targets)
        chosen = max(right, key=lambda penalty: right[penalty])
    else:
        chosen = penalties[len(penalties) // 2]
    model = _fitted(features, targets, chosen, embedding_model)
    about = {
        "pairs": {label: int((targets == index).sum()) for index, label in enumerate(LABELS)},
        "groups": held_out,
        "penalty": chosen,
        "held_out_right_by_penalty": {
            str(penalty): round(share, 4) for penalty, share in right.items()
        },
    }
    return PairModel(
        model.embedding_model, model.centre, model.scale, model.weights, model.bias, about
    )


def _fitted(
    features: Vectors, targets: npt.NDArray[np.int_], penalty: float, name: str
) -> PairModel:
    centre = features.mean(axis=0)
    scale = features.std(axis=0) + 1e-6
    standard = (features - centre) / scale
    weights = np.zeros((features.shape[1], len(LABELS)))
    bias = np.zeros(len(LABELS))
    truth = np.eye(len(LABELS))[targets]
    for _ in range(_STEPS):
        error = _softmax(standard @ weights + bias) - truth
        weights -= _STEP_SIZE * (standard.T @ error / len(targets) + penalty * weights)
        bias -= _STEP_SIZE * error.mean(axis=0)
    return PairModel(name, centre, scale, weights, bias)


def _softmax(scores: Vectors) -> Vectors:
    exp = np.exp(scores - scores.max(axis=1, keepdims=True))
    return exp / exp.sum(axis=1, keepdims=True)


def _unit(vectors: Vectors) -> Vectors:
    vectors = np.atleast_2d(np.asarray(vectors, dtype=np.float64))
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def _rounded(values: Vectors) -> Any:
    return np.vectorize(lambda value: float(f"{value:.{_DIGITS}g}"))(values).tolist()
