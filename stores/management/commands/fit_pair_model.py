"""Fit the suggestion pass's pair model for the configured embedding model.

    manage.py fit_pair_model --pairs SET.json [--pairs SET.json ...] [--half tuning] --out PATH

Each set is `{"pairs": [{"label": "duplicate" | "conflict" | "fine", "first": ..., "second":
..., "half": ...}]}` (the shape of tests/fixtures/suggestions/*.json). Each text is embedded as
a memory holding it would be, and the model (stores.embeddings.pairs) is fitted on the pairs
of `--half` (all of them when not given), its penalty chosen with each set held out in turn.
Point SUGGEST_SIMILARITY's PAIR_MODEL for this embedding model at the file written.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from django.core.management.base import BaseCommand, CommandError

from stores.embeddings.base import get_backend
from stores.embeddings.pairs import LABELS, PairModelError, dump, fit
from stores.models import Memory

# Texts embedded to a request.
_BATCH = 64


class Command(BaseCommand):
    help = "Fit the suggestion pass's pair model to labelled pairs, for this embedding model."

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--pairs", action="append", required=True, type=Path, help="A labelled set (JSON)."
        )
        parser.add_argument("--half", default="", help="Only the pairs of this half.")
        parser.add_argument("--out", required=True, type=Path, help="Where to write the model.")

    def handle(self, *args: Any, **options: Any) -> None:
        pairs: list[dict[str, str]] = []
        groups: list[str] = []
        for path in options["pairs"]:
            for pair in _pairs_of(path):
                if not options["half"] or pair.get("half") == options["half"]:
                    pairs.append(pair)
                    groups.append(path.stem)
        if not pairs:
            raise CommandError(f"no pairs of half {options['half']!r} in the sets given")
        backend = get_backend()
        vectors = _embedded(
            backend, sorted({text for p in pairs for text in (p["first"], p["second"])})
        )
        try:
            model = fit(
                np.asarray([vectors[pair["first"]] for pair in pairs]),
                np.asarray([vectors[pair["second"]] for pair in pairs]),
                [pair["label"] for pair in pairs],
                groups,
                embedding_model=backend.model_name,
            )
        except PairModelError as error:
            raise CommandError(str(error)) from error
        about = model.about | {
            "sets": [path.name for path in options["pairs"]],
            "half": options["half"] or "all",
        }
        dump(replace(model, about=about), options["out"])
        self.stdout.write(
            f"fitted for {backend.model_name} on {len(pairs)} pairs "
            f"({', '.join(f'{n} {label}' for label, n in about['pairs'].items())}); "
            f"penalty {about['penalty']}; written to {options['out']}"
        )
        for penalty, share in about["held_out_right_by_penalty"].items():
            self.stdout.write(f"  penalty {penalty}: {share:.1%} of the held-out sets' pairs right")


def _pairs_of(path: Path) -> list[dict[str, str]]:
    try:
        pairs = json.loads(path.read_text("utf-8"))["pairs"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise CommandError(f"{path}: not a labelled set ({error})") from error
    for number, pair in enumerate(pairs, 1):
        if not isinstance(pair, dict) or not all(
            isinstance(pair.get(key), str) for key in ("label", "first", "second")
        ):
            raise CommandError(f"{path}: pair {number} needs a label, a first and a second text")
        if pair["label"] not in LABELS:
            raise CommandError(
                f"{path}: pair {number}'s label {pair['label']!r} is not one of {list(LABELS)}"
            )
    return pairs


def _embedded(backend: Any, texts: list[str]) -> dict[str, list[float]]:
    """Each text's vector as a memory holding it alone would have (its default category is
    embedded with it)."""
    vectors: dict[str, list[float]] = {}
    for start in range(0, len(texts), _BATCH):
        chunk = texts[start : start + _BATCH]
        as_memories = [Memory(content=text).embedding_text() for text in chunk]
        vectors |= dict(zip(chunk, backend.embed_documents(as_memories), strict=True))
    return vectors
