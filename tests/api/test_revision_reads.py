"""The revision endpoints read what they answer with, in a fixed number of queries."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from stores.engine.actors import Actor
from stores.services import record_edit


def test_the_revision_list_reads_no_texts_it_does_not_return(api, agent, make):
    """Regression: the list read every revision's whole text before and after, and both
    states, to answer with neither."""
    memory = make.memory(agent, "The user likes tea." + " More of the same." * 2000)
    for old, new in (("tea", "mate"), ("mate", "coffee"), ("coffee", "cocoa")):
        result = record_edit(
            surface_key="memory",
            agent=agent,
            ref=memory.pk,
            actor=Actor.maintainer("tests"),
            old_string=old,
            new_string=new,
        )
        assert result.ok, result.message

    with CaptureQueriesContext(connection) as queries:
        listed = api.call("get", "revisions/?surface=memory")

    assert listed.status_code == 200
    assert [row["op"] for row in listed.json()["results"]] == ["edit"] * 3 + ["create"]
    revision_reads = [q["sql"] for q in queries if 'FROM "stores_revision"' in q["sql"]]
    assert len(revision_reads) == 2  # the page and its count
    assert not any("before_text" in sql or "after_state" in sql for sql in revision_reads)
    read = api.call("get", f"revisions/{listed.json()['results'][0]['id']}/")
    assert read.json()["record"]["after_text"].startswith("The user likes cocoa.")
