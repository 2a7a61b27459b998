from __future__ import annotations


def test_full_read_then_phrase_edit(api, agent, make):
    memory = make.memory(agent, "Alice lives in Paris.")
    read = api.call("get", f"memories/{memory.pk}/")
    assert read.status_code == 200, read.json()
    assert read["ETag"] == '"1"'
    edited = api.call(
        "post", f"memories/{memory.pk}/edit/", {"old_string": "Paris", "new_string": "Lyon"}
    )
    assert edited.status_code == 200, edited.json()
    assert edited.json()["version"] == 2
