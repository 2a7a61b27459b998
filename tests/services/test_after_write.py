"""A write's answer never waits for its re-embedding: not for the model, not for the broker."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from stores import tasks
from stores.embeddings.fake import FakeBackend
from stores.engine.actors import Actor
from stores.services import record_edit

ROOT = Path(__file__).resolve().parents[2]
MAINTAINER = Actor.maintainer("tests")


class HeldBackend(FakeBackend):
    """The fake model, which will not embed until the writer has its answer (`released`)."""

    model_name = "fake/held"
    released = threading.Event()
    waited = False

    def _embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not self.released.wait(20):
            HeldBackend.waited = True  # the write that asked for this was still waiting
        return super()._embed_documents(texts)


SHELL_WRITE = f"""
import sys
from {__name__} import HeldBackend
from stores.models import Agent
from stores.engine.actors import Actor
from stores.services import record_create
agent = Agent.objects.create(name="shell")
result = record_create(
    surface_key="memory", agent=agent, actor=Actor.maintainer("shell"),
    values={{"content": "The user drinks tea."}},
)
# The model cannot finish before `released`: had the write waited for it, it would have
# given up waiting (after 20 s) and said so.
print("answered", result.status, "the write waited for the model:", HeldBackend.waited)
HeldBackend.released.set()
"""


def test_a_shell_write_answers_before_the_model_and_is_embedded_before_the_shell_exits(tmp_path):
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in ("MEMORYADMIN_BROKER_URL", "MEMORYADMIN_DATABASE_URL")
        and not key.startswith("MEMORYADMIN_REEMBED")
    }
    environment.update(
        MEMORYADMIN_DATA_DIR=str(tmp_path),
        MEMORYADMIN_EMBEDDING_BACKEND=f"{__name__}.HeldBackend",
        MEMORYADMIN_LOG_LEVEL="WARNING",
    )

    def manage(*arguments: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *arguments],
            cwd=ROOT,
            env=environment,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    manage("migrate", "-v0")
    shell = manage("shell", "-c", SHELL_WRITE)
    check = manage(
        "shell",
        "-c",
        "from stores.models import Memory; m = Memory.objects.get(); "
        "print('stored at exit:', m.embedding_hash == m.text_hash, m.embedding_model)",
    )

    # The model ran only once the answer was in: the write did not wait for it.
    assert "answered created the write waited for the model: False" in shell
    # The shell, on its way out, waited for its background re-embed.
    assert "stored at exit: True fake/held" in check


@pytest.fixture
def broker(settings, monkeypatch):
    """A broker that records which thread sent each task (nothing is really sent)."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.MEMORYADMIN = {**settings.MEMORYADMIN, "REEMBED_AFTER_WRITE": "task"}
    sent: list[tuple[str, list[int], str]] = []

    def delay(surface_key, record_ids):
        sent.append((surface_key, list(record_ids), threading.current_thread().name))

    monkeypatch.setattr(tasks.reembed_records, "delay", delay)
    yield sent
    assert tasks.background_sender.drain(10)


def test_with_a_broker_the_task_is_sent_after_commit_off_the_request(
    broker, agent, make, django_capture_on_commit_callbacks
):
    memories = [make.memory(agent, f"The user owns {n} bicycles.") for n in range(3)]
    assert tasks.background_sender.drain(10)
    broker.clear()

    with django_capture_on_commit_callbacks(execute=True):
        for memory in memories:
            assert record_edit(
                surface_key="memory",
                agent=agent,
                ref=memory.pk,
                actor=MAINTAINER,
                old_string="bicycles",
                new_string="kayaks",
            ).ok
        assert broker == []  # nothing before the commit

    assert tasks.background_sender.drain(10)
    sent_ids = sorted(pk for _surface, ids, _thread in broker for pk in ids)
    assert sent_ids == sorted(memory.pk for memory in memories)
    assert {thread for _surface, _ids, thread in broker} == {"memoryadmin-reembed-sender"}
