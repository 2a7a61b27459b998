"""The importer's bulk insert: every row with its id, clashes updated, a fixed statement count."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from stores.models import ImportedSource, Memory
from stores.runtime.bulk import insert_rows


def memories(agent, count: int, start: int = 0) -> list[Memory]:
    return [
        Memory(agent=agent, content=f"Memory {n}.", tags=["t"], metadata={"n": n}, alias=f"m{n}")
        for n in range(start, start + count)
    ]


def test_inserted_rows_carry_their_ids_and_every_value(agent):
    rows = memories(agent, 3)
    insert_rows(Memory, rows)
    stored = {memory.pk: memory for memory in Memory.objects.filter(agent=agent)}
    assert sorted(stored) == sorted(row.pk for row in rows)
    for row in rows:
        assert (stored[row.pk].content, stored[row.pk].metadata) == (row.content, row.metadata)
        assert stored[row.pk].tags == ["t"] and stored[row.pk].created_at == row.created_at


def test_a_row_that_clashes_updates_the_one_there(agent):
    first = ImportedSource(agent=agent, source_format="rockbot", path="a.json", record_id=1)
    insert_rows(ImportedSource, [first])
    again = ImportedSource(agent=agent, source_format="rockbot", path="a.json", record_id=2)
    new = ImportedSource(agent=agent, source_format="rockbot", path="b.json", record_id=3)
    insert_rows(
        ImportedSource,
        [again, new],
        unique_fields=("agent", "source_format", "path"),
        update_fields=("record_id",),
    )
    rows = dict(ImportedSource.objects.values_list("path", "record_id"))
    assert rows == {"a.json": 2, "b.json": 3}


@pytest.mark.parametrize("count", [300, 1200])
def test_postgres_inserts_any_number_of_rows_in_the_same_statements(postgres_only, agent, count):
    with CaptureQueriesContext(connection) as statements:
        insert_rows(Memory, memories(agent, count))
    # The ids, then the COPY (which Django does not log): not one INSERT per 500 rows.
    assert len(statements) == 1
    assert Memory.objects.filter(agent=agent).count() == count
