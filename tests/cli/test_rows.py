"""The JSON rows: every field on every item, each kind's facts in the documented fields."""

from __future__ import annotations

import json

import pytest

from acp_adapters import (
    ApprovalRequestItem,
    AssistantMessageItem,
    CommandExecutionItem,
    ErrorItem,
    FetchItem,
    FileChangeItem,
    FileReadItem,
    NoticeItem,
    PlanItem,
    ReasoningItem,
    SearchItem,
    ToolItem,
    UserMessageItem,
)
from acp_adapters.cli.rows import FIELDS, dumps, dumps_line, item_row, item_rows, portable
from acp_adapters.timeline import ITEM_TYPES, PlanStep

PATCH = "--- /ws/a.py\n+++ /ws/a.py\n@@ -1,1 +1,1 @@\n-a = 1\n+a = 2\n"


@pytest.mark.parametrize("item_type", ITEM_TYPES, ids=lambda t: t.__name__)
def test_every_kind_has_every_field_in_order(item_type: type) -> None:
    row = item_row(item_type(id="x", ordinal=3, turn=1))
    assert tuple(row) == FIELDS
    assert row["kind"] == item_type.model_fields["kind"].default
    assert (row["ordinal"], row["id"], row["turn"], row["status"]) == (3, "x", 1, "completed")
    json.dumps(row)  # JSON-ready as it is


def test_file_change_row() -> None:
    item = FileChangeItem(
        paths=("/ws/a.py",),
        operations={"/ws/a.py": "modify"},
        diff_str=PATCH,
        additions=1,
        deletions=1,
        patch_source="client_fs",
        title="edit a.py",
        tool_kind="edit",
        tool_call_id="call-1",
    )
    row = item_row(item)
    assert row["paths"] == ["/ws/a.py"]
    assert row["operations"] == {"/ws/a.py": "modify"}
    assert (row["diff_str"], row["additions"], row["deletions"]) == (PATCH, 1, 1)
    assert (row["patch_source"], row["title"], row["tool_kind"]) == (
        "client_fs",
        "edit a.py",
        "edit",
    )
    assert row["tool_call_id"] == "call-1"
    assert row["text"] is None


def test_omitted_patch_row() -> None:
    row = item_row(FileChangeItem(paths=("/ws/big",), diff_omitted_reason="capped"))
    assert (row["diff_str"], row["diff_omitted_reason"]) == (None, "capped")


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (UserMessageItem(text="hi"), {"text": "hi"}),
        (AssistantMessageItem(text="hello"), {"text": "hello"}),
        (ReasoningItem(text="hmm"), {"text": "hmm"}),
        (
            CommandExecutionItem(command="ls", cwd="/ws", output="a\n", exit_code=0, title="ls"),
            {"command": "ls", "cwd": "/ws", "output": "a\n", "exit_code": 0, "title": "ls"},
        ),
        (FileReadItem(paths=("/ws/a",)), {"paths": ["/ws/a"]}),
        (SearchItem(query="TODO", paths=("/ws",)), {"text": "TODO", "paths": ["/ws"]}),
        (FetchItem(url="https://example.test"), {"text": "https://example.test"}),
        (
            ToolItem(input={"q": [1, 2]}, output={"ok": True}, text="done"),
            {"input": {"q": [1, 2]}, "output": '{"ok": true}', "text": "done"},
        ),
        (ToolItem(output="plain"), {"output": "plain"}),
        (
            ApprovalRequestItem(
                title="write a.py", outcome="selected", option_id="ok", option_kind="allow_once"
            ),
            {
                "title": "write a.py",
                "outcome": "selected",
                "option_id": "ok",
                "option_kind": "allow_once",
            },
        ),
        (NoticeItem(title="Heads up", text="quota"), {"title": "Heads up", "text": "quota"}),
        (ErrorItem(message="refused", code=-32603), {"text": "refused", "code": -32603}),
    ],
    ids=lambda v: getattr(v, "kind", ""),
)
def test_kind_facts(item: object, expected: dict[str, object]) -> None:
    row = item_row(item)  # type: ignore[arg-type]
    assert {key: row[key] for key in expected} == expected


def test_plan_entries() -> None:
    steps = (PlanStep(content="write", priority="high", status="completed"),)
    row = item_row(PlanItem(entries=steps))
    assert row["entries"] == [{"content": "write", "priority": "high", "status": "completed"}]


def test_rows_are_in_timeline_order_and_dump_as_an_array() -> None:
    rows = item_rows([AssistantMessageItem(ordinal=2), UserMessageItem(ordinal=1)])
    assert [row["ordinal"] for row in rows] == [1, 2]
    assert json.loads(dumps(rows)) == rows


def test_portable_writes_the_folder_as_its_mark() -> None:
    folder = "/tmp/acp-replay-x/workspace"
    value = {"paths": [f"{folder}/a.py", f"{folder}2/b.py"], "diff_str": f"--- {folder}/a.py"}
    assert portable(value, folder) == {
        "paths": ["<workspace>/a.py", f"{folder}2/b.py"],
        "diff_str": "--- <workspace>/a.py",
    }


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("/tmp/review/ws/a", "<workspace>/a"),
        ("/tmp/review/ws", "<workspace>"),
        ('cd "/tmp/review/ws" && ls', 'cd "<workspace>" && ls'),
        ("cwd=/tmp/review/ws: ok", "cwd=<workspace>: ok"),
        ("file:///tmp/review/ws/a.py", "file://<workspace>/a.py"),
        # The folder's name inside a longer path is another folder.
        ("/mnt/tmp/review/ws/a", "/mnt/tmp/review/ws/a"),
        ("/x/./tmp/review/ws", "/x/./tmp/review/ws"),
        ("my-/tmp/review/ws", "my-/tmp/review/ws"),
        ("/tmp/review/ws2/a", "/tmp/review/ws2/a"),
    ],
)
def test_portable_replaces_only_the_folder_itself(text: str, written: str) -> None:
    assert portable(text, "/tmp/review/ws") == written


def test_a_json_line_is_one_line_and_reads_back_the_same() -> None:
    value = {"text": "a\nb\u2028c\u2029d\u0085e\x9b[2J\u202eevil\ud800", "n": 1}
    line = dumps_line(value)
    assert len(line.splitlines()) == 1
    assert not any(char in line for char in "\n\u2028\u2029\u0085\x9b\u202e\ud800")
    assert json.loads(line) == value
