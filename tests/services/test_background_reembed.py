"""The embedded default embeds after a write in a background thread: no answer waits for it."""

from __future__ import annotations

import threading

import pytest

from stores import tasks
from stores.embeddings.fake import FakeBackend
from stores.engine.actors import Actor
from stores.models import Memory, Suggestion
from stores.runtime.queues import AfterWriteQueue
from stores.services import record_edit

MAINTAINER = Actor.maintainer("tests")


class GatedBackend(FakeBackend):
    """The fake model, held at its door until the test lets it through."""

    model_name = "fake/gated"
    gate = threading.Event()
    entered = threading.Event()

    def _embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.entered.set()
        assert self.gate.wait(30), "the test never opened the gate"
        return super()._embed_documents(texts)


@pytest.fixture
def threaded(settings):
    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        "REEMBED_AFTER_WRITE": "thread",
        "EMBEDDINGS": {"BACKEND": f"{__name__}.GatedBackend", "OPTIONS": {}},
    }
    GatedBackend.gate.set()
    yield
    GatedBackend.gate.set()
    assert tasks.background_reembedder.drain(30)
    assert tasks.background_suggester.drain(30)


def fresh(memory: Memory) -> bool:
    memory.refresh_from_db()
    return memory.embedding is not None and memory.embedding_hash == memory.text_hash


@pytest.mark.django_db(transaction=True)
def test_an_edit_answers_while_the_model_is_still_embedding_it(threaded, agent, make):
    memory = make.memory(agent, "The user drinks tea.")
    assert tasks.background_reembedder.drain(30)
    assert fresh(memory)
    GatedBackend.gate.clear()
    GatedBackend.entered.clear()

    result = record_edit(
        surface_key="memory",
        agent=agent,
        ref=memory.pk,
        actor=MAINTAINER,
        old_string="tea",
        new_string="coffee",
    )

    assert result.status == "updated"
    assert GatedBackend.entered.wait(30), "the edit never reached the model"
    assert not fresh(memory), "the answer came back only after the vector was stored"
    GatedBackend.gate.set()
    assert tasks.background_reembedder.drain(30)
    assert fresh(memory)


@pytest.mark.django_db(transaction=True)
def test_writes_made_while_a_batch_embeds_are_coalesced_into_the_next(threaded, agent, make):
    first = make.memory(agent, "The user drinks tea.")
    assert tasks.background_reembedder.drain(30)
    GatedBackend.gate.clear()
    GatedBackend.entered.clear()
    record_edit(
        surface_key="memory",
        agent=agent,
        ref=first.pk,
        actor=MAINTAINER,
        old_string="tea",
        new_string="coffee",
    )
    assert GatedBackend.entered.wait(30)
    later = [make.memory(agent, f"The user owns {n} bicycles.") for n in range(3)]
    for memory in later:
        record_edit(
            surface_key="memory",
            agent=agent,
            ref=memory.pk,
            actor=MAINTAINER,
            old_string="bicycles",
            new_string="kayaks",
        )

    GatedBackend.gate.set()

    assert tasks.background_reembedder.drain(30)
    assert all(fresh(memory) for memory in [first, *later])


@pytest.mark.django_db(transaction=True)
def test_the_suggestion_pass_waits_for_the_writes_to_pause(threaded, settings, agent, make):
    settings.MEMORYADMIN = {**settings.MEMORYADMIN, "SUGGEST_QUIET_SECONDS": 600}
    # Each write waits for its vector: an in-memory SQLite refuses a write while another
    # connection's is under way, and this test is not about that.
    make.memory(agent, "The user lives in Paris.")
    assert tasks.background_reembedder.drain(30)
    make.memory(agent, "The user lives in Lyon.")
    assert tasks.background_reembedder.drain(30)
    assert not Suggestion.objects.filter(agent=agent).exists(), "judged before the pause"

    assert tasks.background_suggester.drain(30)  # a drain (an exit, a test) does not wait

    assert Suggestion.objects.get(agent=agent).kind == Suggestion.Kind.CONFLICT


def test_a_queue_waiting_for_quiet_handles_a_burst_once_after_its_last_id():
    batches: list[list[int]] = []
    handled = threading.Event()

    def handle(_key: str, ids: list[int]) -> None:
        batches.append(ids)
        handled.set()

    queue = AfterWriteQueue("test-quiet", handle, quiet=lambda: 1.0)
    for record_id in range(5):
        queue.submit("memory", record_id)
        assert not handled.wait(0.1), "handled before the submissions paused"
    assert handled.wait(30)
    assert queue.drain(30)
    assert batches == [[0, 1, 2, 3, 4]]
