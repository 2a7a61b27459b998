"""A hypothesis state machine: take-backs of one conversation interleaved with the writes of
another conversation, of a person (no source) and of the conversation itself.

Writes add unique words to a small pool of memories (each creates with, and writes before, its
own end mark), and a person merges one memory into another now and then. After every step:

- no acknowledged word of another source is lost: each stands in a memory that exists and is
  live, or is superseded by a live one (so a fact always has a live holder);
- after an applied take-back, a word of the conversation is left only in a record the answer
  listed as left as it was (`conflict`), with who wrote after it; every result says why;
- a dry run wrote nothing.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from stores.editing import Status
from stores.engine.actors import Actor
from stores.engine.sources import Source
from stores.models import Memory, Revision
from stores.services import memory_merge, record_create, record_edit
from stores.services.takeback import conversation_takeback
from tests.factories import AgentFactory

EXAMPLES = int(os.environ.get("MEMORYADMIN_STATEFUL_EXAMPLES", "100"))
STEPS = int(os.environ.get("MEMORYADMIN_STATEFUL_STEPS", "40"))

BAD = "conv-bad"
WRITERS = {
    "bad": Actor.maintainer("bad").with_source(Source(conversation=BAD)),
    "good": Actor.maintainer("good").with_source(Source(conversation="conv-good")),
    "person": Actor.maintainer("person"),
}
OTHERS = ("good", "person")


class TakebackMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.agent = AgentFactory()
        self.marks: dict[int, str] = {}  # memory id -> its end mark
        self.counter = 0
        self.kept: set[str] = set()  # acknowledged words of other sources
        self.bad_words: set[str] = set()
        self.refused: set[int] = set()

    def word(self, writer: str) -> str:
        self.counter += 1
        return f"{writer}{self.counter}"

    @rule(writer=st.sampled_from(sorted(WRITERS)))
    def create(self, writer):
        word = self.word(writer)
        mark = f"[end {self.counter}]"
        made = record_create(
            surface_key="memory",
            agent=self.agent,
            actor=WRITERS[writer],
            values={"content": f"{word} {mark}"},
        )
        assert made.ok, made
        self.marks[made.id] = mark
        self._acknowledged(writer, word)

    @precondition(lambda self: self.marks)
    @rule(writer=st.sampled_from(sorted(WRITERS)), data=st.data())
    def add(self, writer, data):
        pk = data.draw(st.sampled_from(sorted(self.marks)))
        word = self.word(writer)
        result = record_edit(
            surface_key="memory",
            agent=self.agent,
            ref=pk,
            actor=WRITERS[writer],
            old_string=self.marks[pk],
            new_string=f"{word} {self.marks[pk]}",
        )
        if result.ok:
            self._acknowledged(writer, word)
        else:
            assert result.status in (Status.NOT_FOUND, Status.NOT_EDITABLE), result

    @precondition(lambda self: len(self.marks) > 1)
    @rule(data=st.data())
    def keep_one(self, data):
        kept, merged = data.draw(
            st.lists(st.sampled_from(sorted(self.marks)), min_size=2, max_size=2, unique=True)
        )
        live = Memory.objects.filter(pk__in=[kept, merged], invalidated_at__isnull=True)
        if live.count() != 2:
            return
        result = memory_merge(
            agent=self.agent, actor=WRITERS["person"], ref=kept, merge_from=[merged]
        )
        assert result.ok, result

    @rule()
    def preview(self):
        if not Revision.objects.filter(agent=self.agent, source_conversation=BAD).exists():
            return
        revisions = Revision.objects.count()
        texts = dict(Memory.objects.filter(agent=self.agent).values_list("pk", "content"))
        conversation_takeback(
            agent=self.agent, actor=Actor.maintainer("admin"), conversation=BAD, dry_run=True
        )
        assert Revision.objects.count() == revisions
        assert dict(Memory.objects.filter(agent=self.agent).values_list("pk", "content")) == (texts)

    @rule()
    def take_back(self):
        if not Revision.objects.filter(agent=self.agent, source_conversation=BAD).exists():
            return
        answer = conversation_takeback(
            agent=self.agent, actor=Actor.maintainer("admin"), conversation=BAD
        )
        for result in answer.results:
            assert result.why, result
            if result.status == Status.CONFLICT:
                assert result.changed_by, result
        self.refused = {r.id for r in answer.results if r.refused}
        for pk, content in Memory.objects.filter(agent=self.agent).values_list("pk", "content"):
            left = [word for word in self.bad_words if word in content.split()]
            assert not left or pk in self.refused, (pk, content, answer.as_dict())

    def _acknowledged(self, writer: str, word: str) -> None:
        (self.kept if writer in OTHERS else self.bad_words).add(word)

    @invariant()
    def no_acknowledged_write_of_another_source_is_lost(self):
        memories = {
            pk: (content.split(), invalidated, holder)
            for pk, content, invalidated, holder in Memory.objects.filter(
                agent=self.agent
            ).values_list("pk", "content", "invalidated_at", "superseded_by_id")
        }

        def live(pk: int | None, seen: int = 0) -> bool:
            if pk is None or pk not in memories or seen > len(memories):
                return False
            _, invalidated, holder = memories[pk]
            return invalidated is None or live(holder, seen + 1)

        held = {word for pk, (words, _, _) in memories.items() if live(pk) for word in words}
        assert self.kept <= held, sorted(self.kept - held)


@pytest.mark.django_db
def test_take_backs_interleaved_with_others_writes_lose_none_of_them():
    run_state_machine_as_test(
        TakebackMachine,
        settings=settings(
            max_examples=EXAMPLES,
            stateful_step_count=STEPS,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
