"""The scan at the door, in the engine: each policy per category, on creates, edits, dry runs
and imports; a person's override, recorded; the policies staff's to set."""

from __future__ import annotations

import json

import pytest

from stores.editing import Status
from stores.engine.actors import Actor
from stores.engine.doorscan import overriding
from stores.engine.sources import Source
from stores.models import Agent, AuditEntry, Memory, Revision, ScanOverride, ScanPolicy
from stores.services import record_create, record_edit, record_replace
from stores.services.agents import agent_update
from stores.services.importing.cleaning import clean_values
from stores.services.importing.entries import Incoming
from stores.services.importing.run import import_records
from stores.services.reviews import revision_approve
from tests.factories import AgentFactory, UserFactory, agent_token

AWS_KEY = "AKIAQ7XJ2L5N8P3R6T9V"
EMAIL = "jane.doe@example.org"


@pytest.fixture
def agent_actor(agent):
    return Actor.for_token(agent_token(agent)[0])


def create(agent, actor, content):
    values = {"content": content}
    return record_create(surface_key="memory", agent=agent, actor=actor, values=values)


def with_policy(agent, **policies):
    Agent.objects.filter(pk=agent.pk).update(**policies)
    agent.refresh_from_db()
    return agent


def test_by_default_credentials_are_refused_naming_the_kind_never_the_value(agent, agent_actor):
    result = create(agent, agent_actor, f"The deploy key is {AWS_KEY}.")

    assert result.status is Status.SENSITIVE_DATA
    assert AWS_KEY not in str(result.as_dict())
    assert "credentials (AWS Access Key)" in result.message
    assert "Nothing was written" in result.message and "vault" in result.message
    assert result.details["found"] == [{"category": "credentials", "kind": "AWS Access Key"}]
    assert not Memory.objects.filter(agent=agent).exists()


def test_by_default_personal_data_is_stored_and_flagged(agent, agent_actor):
    result = create(agent, agent_actor, f"Her work address is {EMAIL}.")

    assert result.status is Status.CREATED
    assert Memory.objects.get(pk=result.id).content == f"Her work address is {EMAIL}."
    assert result.details["scan"] == {
        "found": [{"category": "personal_data", "kind": "email address"}],
        "policy": {"personal_data": "allow"},
    }
    assert "personal data (email address)" in result.message
    assert Revision.objects.get(record_id=result.id).review == Revision.Review.NOT_NEEDED


def test_mask_stores_the_text_masked_and_tells_the_writer(agent, agent_actor):
    with_policy(agent, personal_data_policy=ScanPolicy.MASK, credentials_policy=ScanPolicy.MASK)

    result = create(agent, agent_actor, f"Key {AWS_KEY}; mail {EMAIL}.")

    assert result.status is Status.CREATED
    stored = Memory.objects.get(pk=result.id).content
    assert stored == "Key [masked AWS Access Key]; mail [masked email address]."
    revision = Revision.objects.get(record_id=result.id)
    assert AWS_KEY not in revision.after_text and EMAIL not in revision.after_text
    assert "masked" in result.message and AWS_KEY not in result.message
    assert result.details["scan"]["policy"] == {"credentials": "mask", "personal_data": "mask"}


def test_hold_parks_the_write_for_review(agent, agent_actor, staff_user):
    with_policy(agent, credentials_policy=ScanPolicy.HOLD)

    result = create(agent, agent_actor, f"The deploy key is {AWS_KEY}.")

    assert result.status is Status.CREATED
    assert result.details["review"] == "pending"
    assert "held for a person's review" in result.message
    revision = Revision.objects.get(record_id=result.id)
    assert revision.review == Revision.Review.PENDING
    approved = revision_approve(
        agent=agent, revision_id=revision.pk, actor=Actor.for_user(staff_user)
    )
    assert approved.status is Status.APPROVED


def test_refuse_personal_data_when_the_policy_says_so(agent, agent_actor):
    with_policy(agent, personal_data_policy=ScanPolicy.REFUSE)

    result = create(agent, agent_actor, "Card 4111 1111 1111 1111 for the hotel.")

    assert result.status is Status.SENSITIVE_DATA
    assert "personal data (card number)" in result.message
    assert "4111" not in str(result.as_dict())


def test_allow_lets_credentials_through_and_says_so(agent, agent_actor):
    with_policy(agent, credentials_policy=ScanPolicy.ALLOW)

    result = create(agent, agent_actor, f"The deploy key is {AWS_KEY}.")

    assert result.status is Status.CREATED
    assert "Note: the text holds credentials (AWS Access Key)" in result.message


def test_an_edit_is_scanned_by_what_it_adds_and_a_refusal_leaves_the_record(
    agent, agent_actor, make
):
    memory = make.memory(agent, f"Reach her at {EMAIL}.\nLikes tea.")

    kept = record_edit(
        surface_key="memory", agent=agent, ref=memory.pk, actor=agent_actor,
        old_string="tea", new_string="coffee",
    )  # fmt: skip
    refused = record_edit(
        surface_key="memory", agent=agent, ref=memory.pk, actor=agent_actor,
        old_string="coffee", new_string=f"coffee; key {AWS_KEY}",
    )  # fmt: skip

    assert kept.status is Status.UPDATED and "scan" not in kept.details
    assert refused.status is Status.SENSITIVE_DATA
    memory.refresh_from_db()
    assert (memory.version, memory.content) == (2, f"Reach her at {EMAIL}.\nLikes coffee.")


def test_the_sources_excerpt_and_link_are_scanned_as_the_text_is(agent, agent_actor):
    quoted = agent_actor.with_source(Source(conversation="c-9", excerpt=f"my key is {AWS_KEY}"))
    linked = agent_actor.with_source(
        Source(conversation="c-9", url="https://bot:Hunter2Hunter2@chat.example.com/c-9")
    )

    refused = create(agent, quoted, "The user rotates keys monthly.")
    with_policy(agent, credentials_policy=ScanPolicy.MASK)
    masked = create(agent, linked, "The user rotates keys monthly.")

    assert refused.status is Status.SENSITIVE_DATA and AWS_KEY not in refused.message
    revision = Revision.objects.get(record_id=masked.id)
    assert revision.source_url == "https://bot:[masked password in a URL]@chat.example.com/c-9"
    assert revision.source_conversation == "c-9"
    assert Memory.objects.get(pk=masked.id).content == "The user rotates keys monthly."


def test_a_dry_run_answers_what_the_write_would(agent, agent_actor, make):
    memory = make.memory(agent, "Likes tea.")
    with_policy(agent, personal_data_policy=ScanPolicy.MASK)

    preview = record_replace(
        surface_key="memory", agent=agent, ref=memory.pk, actor=agent_actor,
        text=f"Likes tea. Mail {EMAIL}.", expected_version=1, dry_run=True,
    )  # fmt: skip

    assert preview.status is Status.UPDATED
    assert preview.details["text"] == "Likes tea. Mail [masked email address]."
    memory.refresh_from_db()
    assert memory.version == 1


def test_a_person_overrides_one_refused_write_and_it_is_recorded(agent, staff_user):
    person = Actor.for_user(staff_user)

    with overriding("The key is a revoked example for the runbook."):
        stored = create(agent, person, f"Revoked key {AWS_KEY}.")
    again = create(agent, person, f"Another {AWS_KEY}.")

    assert stored.status is Status.CREATED
    assert "A person chose to store it as written." in stored.message
    override = ScanOverride.objects.get()
    assert (override.agent, override.surface, override.record_id, override.revision_id) == (
        agent,
        "memory",
        stored.id,
        stored.revision,
    )
    assert (override.user, override.actor) == (staff_user, person.label)
    assert override.found == [{"category": "credentials", "kind": "AWS Access Key"}]
    assert override.reason == "The key is a revoked example for the runbook."
    assert AWS_KEY not in str(override.__dict__)
    [entry] = AuditEntry.objects.filter(kind=AuditEntry.Kind.OVERRIDE)
    assert (entry.agent, entry.actor) == (agent, person.label)
    assert entry.details["found"] == ["AWS Access Key"]
    assert AWS_KEY not in json.dumps(entry.details)
    # One write: the next is scanned as ever.
    assert again.status is Status.SENSITIVE_DATA


def test_an_agent_cannot_override(agent, agent_actor):
    with overriding("I insist."):
        result = create(agent, agent_actor, f"Key {AWS_KEY}.")

    assert result.status is Status.SENSITIVE_DATA
    assert not ScanOverride.objects.exists()


def test_an_import_masks_holds_or_refuses_each_new_entry(agent, staff_user):
    with_policy(agent, personal_data_policy=ScanPolicy.MASK)

    def entry(ref, content):
        values = clean_values("memory", {"content": content})
        return Incoming(surface="memory", ref=ref, values=values, source=f"{ref}.md")

    report = import_records(
        agent=agent,
        items=[entry("a", f"Key {AWS_KEY}."), entry("b", f"Mail {EMAIL}."), entry("c", "Tea.")],
        actor=Actor.for_user(staff_user),
    )

    assert [problem.path for problem in report.problems] == ["a.md"]
    assert "credentials (AWS Access Key)" in report.problems[0].message
    assert AWS_KEY not in report.problems[0].message
    contents = dict(Memory.objects.filter(agent=agent).values_list("alias", "content"))
    assert contents == {"b": "Mail [masked email address].", "c": "Tea."}


def test_an_import_holds_an_entry_for_review(agent, staff_user):
    with_policy(agent, credentials_policy=ScanPolicy.HOLD)
    values = clean_values("memory", {"content": f"Key {AWS_KEY}."})

    import_records(
        agent=agent,
        items=[Incoming(surface="memory", ref="k", values=values, source="k.md")],
        actor=Actor.for_user(staff_user),
    )

    revision = Revision.objects.get(agent=agent)
    assert (revision.op, revision.review) == ("import", Revision.Review.PENDING)


def test_only_staff_set_the_scan_policies(agent, staff_user):
    editor = UserFactory()
    agent.grants.create(user=editor, role="editor")

    refused = agent_update(
        actor=Actor.for_user(editor), agent=agent, values={"credentials_policy": "allow"}
    )
    done = agent_update(
        actor=Actor.for_user(staff_user), agent=agent, values={"credentials_policy": "hold"}
    )

    assert refused.status is Status.FORBIDDEN
    assert done.status is Status.UPDATED
    assert Agent.objects.get(pk=agent.pk).credentials_policy == "hold"


def test_a_new_agent_refuses_credentials_and_allows_personal_data(db):
    agent = AgentFactory()

    assert (agent.credentials_policy, agent.personal_data_policy) == ("refuse", "allow")
