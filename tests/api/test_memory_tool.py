"""Claude's memory tool (memory_20250818) through POST /api/v1/tools/memory/ and MCP.

The cases are those of the Anthropic SDK's own tests of its filesystem implementation
(tests/lib/tools/memory_tools/test_filesystem.py in anthropic-sdk-python), with the
sentences it answers; the file tree is read from the database, where each file is a record.
"""

from __future__ import annotations

from typing import Any

import pytest

from memoryadmin.mcp.server import _call
from stores.models import AgentToken, MemoryFile, Revision
from tests.api.conftest import client_for
from tests.factories import agent_token

pytestmark = pytest.mark.django_db


class Door:
    """One way to send the tool a command: the REST tools endpoint, or MCP's tool call."""

    def __init__(self, kind: str, token: AgentToken, raw: str) -> None:
        self.kind = kind
        self.token = token
        self.api = client_for(raw)

    def __call__(self, **command: Any) -> tuple[bool, str]:
        if self.kind == "rest":
            response = self.api.call("post", "tools/memory/", command)
            assert response.status_code == 200, response.json()
            answer = response.json()
        else:
            result = _call(lambda request: self.token, None, "memory", command)
            answer = result.structured_content
            assert result.is_error == answer["is_error"]
        return answer["is_error"], answer["content"][0]["text"]

    def ok(self, **command: Any) -> str:
        is_error, text = self(**command)
        assert not is_error, text
        return text

    def error(self, **command: Any) -> str:
        is_error, text = self(**command)
        assert is_error, text
        return text


@pytest.fixture(params=["rest", "mcp"])
def memory(request, agent) -> Door:
    token, raw = agent_token(agent)
    return Door(request.param, token, raw)


def tree(agent) -> dict[str, str]:
    return dict(MemoryFile.objects.filter(agent=agent).values_list("path", "content"))


def test_create(memory, agent):
    text = memory.ok(command="create", path="/memories/test_file.txt", file_text="Hello, World!")
    assert text == "File created successfully at: /memories/test_file.txt"
    assert tree(agent) == {"/memories/test_file.txt": "Hello, World!"}


def test_create_nested_directories(memory, agent):
    text = memory.ok(command="create", path="/memories/deep/nested/file.txt", file_text="Nested")
    assert text == "File created successfully at: /memories/deep/nested/file.txt"
    assert tree(agent) == {"/memories/deep/nested/file.txt": "Nested"}


def test_create_error_if_file_already_exists(memory, agent):
    memory.ok(command="create", path="/memories/existing.txt", file_text="First")
    text = memory.error(command="create", path="/memories/existing.txt", file_text="Second")
    assert text == "File /memories/existing.txt already exists"
    assert tree(agent) == {"/memories/existing.txt": "First"}


def test_create_under_a_file_is_refused(memory, agent):
    memory.ok(command="create", path="/memories/notes", file_text="A file.")
    text = memory.error(command="create", path="/memories/notes/inner.md", file_text="x")
    assert "/memories/notes is a file" in text


def test_view_file(memory):
    memory.ok(command="create", path="/memories/view_test.txt", file_text="Line 1\nLine 2\nLine 3")
    assert memory.ok(command="view", path="/memories/view_test.txt") == (
        "Here's the content of /memories/view_test.txt with line numbers:\n"
        "     1\tLine 1\n     2\tLine 2\n     3\tLine 3"
    )


def test_view_directory(memory):
    memory.ok(command="create", path="/memories/dir/file1.txt", file_text="File 1")
    memory.ok(command="create", path="/memories/dir/file2.txt", file_text="File 2")
    text = memory.ok(command="view", path="/memories/dir")
    assert text == (
        "Here're the files and directories up to 2 levels deep in /memories/dir, excluding "
        "hidden items:\n12B\t/memories/dir\n6B\t/memories/dir/file1.txt\n"
        "6B\t/memories/dir/file2.txt"
    )


def test_view_of_the_root_lists_two_levels_with_sizes_and_no_hidden_items(memory):
    memory.ok(command="create", path="/memories/a.md", file_text="x" * 1536)
    memory.ok(command="create", path="/memories/b/c.md", file_text="é")
    memory.ok(command="create", path="/memories/b/d/e.md", file_text="deep")
    memory.ok(command="create", path="/memories/.hidden/f.md", file_text="secret")
    assert memory.ok(command="view", path="/memories").splitlines()[1:] == [
        "1.5K\t/memories",
        "1.5K\t/memories/a.md",
        "6B\t/memories/b/",
        "2B\t/memories/b/c.md",
        "4B\t/memories/b/d/",
    ]


def test_view_file_with_range(memory):
    memory.ok(
        command="create",
        path="/memories/range_test.txt",
        file_text="Line 1\nLine 2\nLine 3\nLine 4\nLine 5",
    )
    text = memory.ok(command="view", path="/memories/range_test.txt", view_range=[2, 4])
    assert text == (
        "Here's the content of /memories/range_test.txt with line numbers:\n"
        "     2\tLine 2\n     3\tLine 3\n     4\tLine 4"
    )
    to_end = memory.ok(command="view", path="/memories/range_test.txt", view_range=[4, -1])
    assert to_end.endswith("     4\tLine 4\n     5\tLine 5")


def test_view_error_for_non_existent_file(memory):
    assert memory.error(command="view", path="/memories/nonexistent.txt") == (
        "The path /memories/nonexistent.txt does not exist. Please provide a valid path."
    )


def test_str_replace(memory, agent):
    memory.ok(
        command="create", path="/memories/replace_test.txt", file_text="Line 1\nOld Text\nLine 3"
    )
    text = memory.ok(
        command="str_replace",
        path="/memories/replace_test.txt",
        old_str="Old Text",
        new_str="New Text",
    )
    assert text == (
        "The memory file has been edited. Here is the snippet showing the change (with line "
        "numbers):\n     1\tLine 1\n     2\tNew Text\n     3\tLine 3"
    )
    assert tree(agent) == {"/memories/replace_test.txt": "Line 1\nNew Text\nLine 3"}


def test_str_replace_with_the_same_text_answers_as_an_edit_and_writes_nothing(memory, agent):
    memory.ok(command="create", path="/memories/same.txt", file_text="a\nb\nc")
    text = memory.ok(command="str_replace", path="/memories/same.txt", old_str="b", new_str="b")
    assert text.endswith("     1\ta\n     2\tb\n     3\tc")
    assert Revision.objects.filter(agent=agent, surface="file").count() == 1


def test_str_replace_error_when_string_not_found(memory):
    memory.ok(command="create", path="/memories/replace_test.txt", file_text="Line 1\nLine 2")
    text = memory.error(
        command="str_replace", path="/memories/replace_test.txt", old_str="NotFound", new_str="x"
    )
    assert text == (
        "No replacement was performed, old_str `NotFound` did not appear verbatim in "
        "/memories/replace_test.txt."
    )


def test_str_replace_error_when_string_appears_multiple_times(memory, agent):
    memory.ok(command="create", path="/memories/replace_test.txt", file_text="Hello\nWorld\nHello")
    text = memory.error(
        command="str_replace", path="/memories/replace_test.txt", old_str="Hello", new_str="Hi"
    )
    assert text == (
        "No replacement was performed. Multiple occurrences of old_str `Hello` in lines: 1, 3. "
        "Please ensure it is unique"
    )
    assert tree(agent) == {"/memories/replace_test.txt": "Hello\nWorld\nHello"}


def test_str_replace_error_for_non_existent_file(memory):
    text = memory.error(
        command="str_replace", path="/memories/nonexistent.txt", old_str="a", new_str="b"
    )
    assert text == "The path /memories/nonexistent.txt does not exist. Please provide a valid path."


@pytest.mark.parametrize(
    ("line", "inserted", "expected"),
    [
        (1, "Inserted Line", "Line 1\nInserted Line\nLine 2\n"),
        (0, "First Line", "First Line\nLine 1\nLine 2\n"),
        (2, "Last Line", "Line 1\nLine 2\nLast Line\n"),
    ],
    ids=["middle", "beginning", "end"],
)
def test_insert(memory, agent, line, inserted, expected):
    memory.ok(command="create", path="/memories/insert_test.txt", file_text="Line 1\nLine 2")
    text = memory.ok(
        command="insert", path="/memories/insert_test.txt", insert_line=line, insert_text=inserted
    )
    assert text == "The file /memories/insert_test.txt has been edited."
    assert tree(agent) == {"/memories/insert_test.txt": expected}


def test_insert_error_for_non_existent_file(memory):
    text = memory.error(
        command="insert", path="/memories/nonexistent.txt", insert_line=0, insert_text="text"
    )
    assert text == "The path /memories/nonexistent.txt does not exist. Please provide a valid path."


def test_insert_error_for_invalid_insert_line(memory):
    memory.ok(command="create", path="/memories/insert_test.txt", file_text="Line 1\nLine 2")
    text = memory.error(
        command="insert", path="/memories/insert_test.txt", insert_line=10, insert_text="text"
    )
    assert text == "Invalid `insert_line` parameter: 10. It should be within the range [0, 2]."


def test_delete(memory, agent):
    memory.ok(command="create", path="/memories/delete_me.txt", file_text="To be deleted")
    assert memory.ok(command="delete", path="/memories/delete_me.txt") == (
        "Successfully deleted /memories/delete_me.txt"
    )
    assert tree(agent) == {}


def test_delete_directory(memory, agent):
    memory.ok(command="create", path="/memories/subdir/file.txt", file_text="Content")
    memory.ok(command="create", path="/memories/subdir/more/other.txt", file_text="More")
    memory.ok(command="create", path="/memories/subdirectory.txt", file_text="Kept")
    assert memory.ok(command="delete", path="/memories/subdir") == (
        "Successfully deleted /memories/subdir"
    )
    assert tree(agent) == {"/memories/subdirectory.txt": "Kept"}


def test_delete_error_when_file_not_found(memory):
    text = memory.error(command="delete", path="/memories/nonexistent.txt")
    assert text == "The path /memories/nonexistent.txt does not exist"


def test_delete_not_allow_deleting_memories_directory(memory):
    text = memory.error(command="delete", path="/memories")
    assert text == "Cannot delete the /memories directory itself"


def test_rename(memory, agent):
    memory.ok(command="create", path="/memories/old_name.txt", file_text="Original content")
    text = memory.ok(
        command="rename", old_path="/memories/old_name.txt", new_path="/memories/new_name.txt"
    )
    assert text == "Successfully renamed /memories/old_name.txt to /memories/new_name.txt"
    assert tree(agent) == {"/memories/new_name.txt": "Original content"}


def test_rename_to_nested_path(memory, agent):
    memory.ok(command="create", path="/memories/file.txt", file_text="Content")
    text = memory.ok(
        command="rename", old_path="/memories/file.txt", new_path="/memories/nested/dir/file.txt"
    )
    assert text == "Successfully renamed /memories/file.txt to /memories/nested/dir/file.txt"
    assert tree(agent) == {"/memories/nested/dir/file.txt": "Content"}


def test_rename_of_a_directory_moves_everything_in_it(memory, agent):
    memory.ok(command="create", path="/memories/a/one.md", file_text="1")
    memory.ok(command="create", path="/memories/a/b/two.md", file_text="2")
    memory.ok(command="rename", old_path="/memories/a", new_path="/memories/z")
    assert tree(agent) == {"/memories/z/one.md": "1", "/memories/z/b/two.md": "2"}
    assert "into itself" in memory.error(
        command="rename", old_path="/memories/z", new_path="/memories/z/inner"
    )


def test_rename_error_when_source_not_found(memory):
    text = memory.error(
        command="rename", old_path="/memories/nonexistent.txt", new_path="/memories/new.txt"
    )
    assert text == "The path /memories/nonexistent.txt does not exist"


def test_rename_error_when_destination_exists(memory, agent):
    memory.ok(command="create", path="/memories/file1.txt", file_text="File 1")
    memory.ok(command="create", path="/memories/file2.txt", file_text="File 2")
    text = memory.error(
        command="rename", old_path="/memories/file1.txt", new_path="/memories/file2.txt"
    )
    assert text == "The destination /memories/file2.txt already exists"
    assert tree(agent) == {"/memories/file1.txt": "File 1", "/memories/file2.txt": "File 2"}


def test_path_validation_reject_paths_not_starting_with_memories(memory, agent):
    text = memory.error(command="create", path="/invalid/path.txt", file_text="Invalid")
    assert text.startswith("Path must start with /memories")
    assert tree(agent) == {}


@pytest.mark.parametrize(
    "path",
    [
        "/memories/../../../etc/passwd",
        "/memories/a/../../secret",
        "/memories/%2e%2e/%2e%2e/etc/passwd",
        "/memories/..%2fetc",
        "/memories/..\\..\\etc",
        "/memoriesX/file",
        "//memories/x",
        "memories/x",
        "/etc/passwd",
    ],
)
def test_path_validation_reject_paths_trying_to_escape_memories(memory, agent, path):
    for command in (
        {"command": "create", "path": path, "file_text": "Escape attempt"},
        {"command": "view", "path": path},
        {"command": "delete", "path": path},
        {"command": "rename", "old_path": "/memories/x.md", "new_path": path},
    ):
        memory.error(**command)
    assert memory.error(command="create", path="/memories/../../../etc/passwd", file_text="x") == (
        "Path /memories/../../../etc/passwd would escape /memories directory"
    )
    assert tree(agent) == {}


def test_every_command_is_a_revision_of_the_file_surface(memory, agent):
    memory.ok(command="create", path="/memories/log.md", file_text="a\n")
    memory.ok(command="str_replace", path="/memories/log.md", old_str="a", new_str="b")
    memory.ok(command="insert", path="/memories/log.md", insert_line=1, insert_text="c")
    memory.ok(command="rename", old_path="/memories/log.md", new_path="/memories/journal.md")
    memory.ok(command="delete", path="/memories/journal.md")
    ops = Revision.objects.filter(agent=agent, surface="file").order_by("id")
    assert list(ops.values_list("op", flat=True)) == [
        "create",
        "edit",
        "insert",
        "update",
        "forget",
    ]
    assert {revision.channel for revision in ops} == {"api"}


def test_missing_fields_of_a_command_are_refused_before_anything_runs(agent):
    api = client_for(agent_token(agent)[1])
    response = api.call("post", "tools/memory/", {"command": "create", "path": "/memories/a"})
    assert response.status_code == 400
    assert "file_text" in response.json()["message"]
    listed = api.call("get", "tools/").json()
    names = [entry["function"]["name"] for entry in listed["tools"]]
    assert "memory" in names


def test_a_read_only_token_views_but_every_write_is_refused_in_words(agent, make):
    make("file", agent, path="/memories/kept.md", content="Kept.\n")
    api = client_for(agent_token(agent, read_only=True)[1])

    viewed = api.call("post", "tools/memory/", {"command": "view", "path": "/memories/kept.md"})
    assert viewed.json()["is_error"] is False
    for command in (
        {"command": "create", "path": "/memories/new.md", "file_text": "x"},
        {"command": "str_replace", "path": "/memories/kept.md", "old_str": "Kept", "new_str": "x"},
        {"command": "delete", "path": "/memories/kept.md"},
        {"command": "rename", "old_path": "/memories/kept.md", "new_path": "/memories/b.md"},
    ):
        answer = api.call("post", "tools/memory/", command).json()
        assert answer["is_error"] is True, command
        assert answer["status"] == "forbidden"
        assert answer["content"][0]["text"]
    assert tree(agent) == {"/memories/kept.md": "Kept.\n"}


def test_rest_files_keep_the_memory_tools_tree_a_path_is_a_file_or_a_directory(api, agent):
    assert (
        api.call("post", "files/", {"path": "/memories/a", "content": "A file."}).status_code == 201
    )
    under_a_file = api.call("post", "files/", {"path": "/memories/a/b", "content": "x"})
    assert (under_a_file.status_code, under_a_file.json()["status"]) == (409, "conflict")
    assert "/memories/a is a file" in under_a_file.json()["message"]

    inner = api.call("post", "files/", {"path": "/memories/d/inner.md", "content": "x"}).json()
    over_a_directory = api.call("post", "files/", {"path": "/memories/d", "content": "x"})
    assert (over_a_directory.status_code, over_a_directory.json()["status"]) == (409, "conflict")
    assert "/memories/d is a directory" in over_a_directory.json()["message"]
    renamed = api.call("patch", f"files/{inner['id']}/", {"path": "/memories/a/inner.md"})
    assert (renamed.status_code, renamed.json()["status"]) == (409, "conflict")

    assert tree(agent) == {"/memories/a": "A file.", "/memories/d/inner.md": "x"}
    is_error, listed = Door("rest", *agent_token(agent))(command="view", path="/memories")
    assert not is_error and "/memories/a/" not in listed


def test_rest_files_refuse_a_name_longer_than_a_file_system_takes_in_bytes(api, agent, tmp_path):
    # 255 characters of two bytes each: within a character count, past ext4's 255 bytes,
    # so export_files could not write it.
    name = "é" * 255
    answer = api.call("post", "files/", {"path": f"/memories/{name}", "content": "x"})
    assert (answer.status_code, answer.json()["status"]) == (400, "invalid")
    assert "255 bytes" in answer.json()["message"]
    fits = api.call("post", "files/", {"path": f"/memories/{'é' * 127}", "content": "x"})
    assert fits.status_code == 201
