"""The wire projection: each rule on real items, and deltas that rebuild the snapshot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_adapters.timeline.items import (
    AssistantMessageItem,
    CommandExecutionItem,
    ErrorItem,
    FileChangeItem,
    PlanItem,
    PlanStep,
    ToolItem,
    UserMessageItem,
)
from acp_adapters.wire import (
    ERROR_LIMIT,
    RAW_LIMIT,
    WireFollower,
    apply_deltas,
    truncate_utf8,
    wire_deltas,
    wire_item,
    wire_json_schema,
    wire_snapshot,
)

SCHEMA = json.loads(
    (Path(__file__).parents[2] / "docs" / "wire.schema.json").read_text(encoding="utf-8")
)
PATCH = "--- a.py\n+++ a.py\n@@ -1 +1 @@\n-old\n+new\n"


def _edit(**update: Any) -> FileChangeItem:
    fields: dict[str, Any] = {
        "id": "e1",
        "paths": ("a.py", "b.py"),
        "operations": {"a.py": "modify", "b.py": "add"},
        "diff_str": PATCH,
        "additions": 3,
        "deletions": 1,
        "patch_source": "client_fs",
    }
    fields.update(update)
    return FileChangeItem(**fields)


def test_file_change_drops_the_patch_and_keeps_paths_operations_and_counts() -> None:
    wired = wire_item(_edit())
    assert "diff_str" not in wired
    assert wired["paths"] == ["a.py", "b.py"]
    assert wired["operations"] == {"a.py": "modify", "b.py": "add"}
    assert (wired["additions"], wired["deletions"]) == (3, 1)
    assert "error_truncated" not in wired
    jsonschema.validate(wired, SCHEMA)


def test_stored_file_change_drops_old_and_new_text() -> None:
    stored = _edit().model_dump(mode="json") | {"old_text": "old\n", "new_text": "new\n"}
    wired = wire_item(stored)
    assert not {"diff_str", "old_text", "new_text"} & wired.keys()
    assert "old_text" in stored  # the stored JSON untouched


def test_failed_edit_keeps_its_error_text_cut_at_32_kib_on_a_character() -> None:
    text = "é" * ERROR_LIMIT  # 2 bytes each: 64 KiB
    wired = wire_item(_edit(status="failed", patch_note=text))
    assert wired["error_truncated"] is True
    kept = wired["patch_note"].encode("utf-8")
    assert len(kept) == ERROR_LIMIT
    assert set(wired["patch_note"]) == {"é"}
    odd = wire_item(_edit(status="failed", patch_note="a" + text))
    assert len(odd["patch_note"].encode("utf-8")) == ERROR_LIMIT - 1  # never half an é
    short = wire_item(_edit(status="failed", patch_note="old string not found"))
    assert short["patch_note"] == "old string not found"
    assert "error_truncated" not in short
    jsonschema.validate(wired, SCHEMA)


def test_truncate_utf8() -> None:
    assert truncate_utf8("abc", 3) == ("abc", False)
    assert truncate_utf8("a€b", 3) == ("a", True)
    assert truncate_utf8("€€", 6) == ("€€", False)


def test_command_output_is_dropped_with_a_marker() -> None:
    item = CommandExecutionItem(id="c1", command="ls", output="a\nb\n", exit_code=0)
    wired = wire_item(item)
    assert "output" not in wired
    assert wired["output_omitted"] is True
    assert wired["command"] == "ls"
    assert wired["exit_code"] == 0
    running = wire_item(CommandExecutionItem(id="c1", command="ls", status="running"))
    assert "output_omitted" not in running
    assert "output" not in running
    jsonschema.validate(wired, SCHEMA)


def test_tool_input_and_output_over_16_kib_become_a_one_line_summary() -> None:
    big = {"query": "x\n" * RAW_LIMIT}
    item = ToolItem(id="t1", input=big, output={"content": [{"type": "text", "text": "ok"}]})
    wired = wire_item(item)
    assert wired["truncated"] is True
    assert isinstance(wired["input"], str)
    assert "\n" not in wired["input"]
    assert "bytes" in wired["input"]
    assert len(wired["input"]) < 300
    assert wired["output"] == {"content": [{"type": "text", "text": "ok"}]}
    out = wire_item(ToolItem(id="t2", input={"q": 1}, output="y" * (RAW_LIMIT + 1)))
    assert out["input"] == {"q": 1}
    assert out["truncated"] is True
    assert isinstance(out["output"], str)
    assert len(out["output"]) < 300
    exact = wire_item(ToolItem(id="t3", input="z" * (RAW_LIMIT - 2)))  # JSON: 16 KiB exactly
    assert exact["input"] == "z" * (RAW_LIMIT - 2)
    assert "truncated" not in exact
    jsonschema.validate(wired, SCHEMA)


def test_raw_fields_of_other_items_are_summarised_too() -> None:
    wired = wire_item(ErrorItem(id="x", message="boom", data={"trace": "t" * RAW_LIMIT}))
    assert wired["message"] == "boom"
    assert wired["truncated"] is True
    assert isinstance(wired["data"], str)


def test_everything_else_is_unchanged_and_wiring_twice_changes_nothing() -> None:
    items = [
        UserMessageItem(id="u", text="hi" * 20_000),
        AssistantMessageItem(id="a", text="ok", status="running"),
        PlanItem(id="p", entries=(PlanStep(content="x", priority="high", status="pending"),)),
        ErrorItem(id="e", message="m" * 40_000, code=-32603),
    ]
    for item in items:
        full = item.model_dump(mode="json")
        assert wire_item(item) == {k: v for k, v in full.items() if v is not None}
        assert None in full.values()  # the case is there: items have null fields
        jsonschema.validate(wire_item(item), SCHEMA)
    for item in [
        _edit(status="failed", patch_note="é" * ERROR_LIMIT),
        ToolItem(input="q" * 20_000),
    ]:
        assert wire_item(wire_item(item)) == wire_item(item)


def test_null_fields_are_left_out_and_a_field_turned_null_is_unset() -> None:
    running = CommandExecutionItem(id="c", command="ls", status="running")
    wired = wire_item(running)
    assert "exit_code" not in wired
    assert "tool_call_id" not in wired
    assert wired["command"] == "ls"
    assert wired["replayed"] is False  # false is not null
    done = running.model_copy(update={"exit_code": 0, "status": "completed"})
    again = running.model_copy(update={"command": None})
    follower = WireFollower([running])
    assert follower.update(done) == {"id": "c", "set": {"status": "completed", "exit_code": 0}}
    assert follower.update(again) == {
        "id": "c",
        "set": {"status": "running"},
        "unset": ["command", "exit_code"],
    }
    client = apply_deltas(wire_snapshot([running]), wire_deltas([running], [again]))
    assert client == wire_snapshot([again])


def test_snapshot_and_session() -> None:
    items = [UserMessageItem(id="u", text="hi"), _edit()]
    snap = wire_snapshot(items, session={"session_id": "s", "title": "T"})
    assert snap["session"] == {"session_id": "s", "title": "T"}
    assert [i["id"] for i in snap["items"]] == ["u", "e1"]
    assert "diff_str" not in snap["items"][1]
    assert wire_snapshot([]) == {"items": []}


def test_deltas_are_only_what_changed() -> None:
    before = [
        UserMessageItem(id="u", text="hi"),
        AssistantMessageItem(id="a", text="Hel", status="running"),
    ]
    after = [
        before[0],
        AssistantMessageItem(id="a", text="Hello", status="completed"),
        CommandExecutionItem(id="c", command="ls", output="x" * 5000),
    ]
    deltas = wire_deltas(before, after)
    assert deltas[0] == {"id": "a", "set": {"status": "completed"}, "append": {"text": "lo"}}
    assert deltas[1]["add"]["id"] == "c"
    assert "output" not in deltas[1]["add"]
    assert len(deltas) == 2
    assert apply_deltas(wire_snapshot(before), deltas) == wire_snapshot(after)
    assert wire_deltas(after, after) == []


def test_follower_streams_deltas_that_rebuild_the_snapshot() -> None:
    follower = WireFollower([UserMessageItem(id="u", text="go")])
    client = follower.snapshot()
    running = CommandExecutionItem(id="c", command="make", status="running")
    stream = [
        running,
        running.model_copy(update={"output": "building\n"}),
        running.model_copy(update={"output": "built\n", "status": "completed", "exit_code": 0}),
    ]
    deltas = [follower.update(item) for item in stream]
    assert deltas[0] == {"add": wire_item(running)}
    assert deltas[1] == {"id": "c", "set": {"output_omitted": True}}
    assert deltas[2] == {"id": "c", "set": {"status": "completed", "exit_code": 0}}
    assert follower.update(stream[2]) is None
    assert follower.remove("nope") is None
    gone = follower.remove("u")
    client = apply_deltas(client, [d for d in [*deltas, gone] if d is not None])
    assert client == follower.snapshot()
    assert client == wire_snapshot([stream[2]])


# Items as a store keeps them: dicts with unique ids, random fields and values.
_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)
_fields = st.dictionaries(st.sampled_from(["a", "b", "text", "status", "output", "input"]), _values)
_kinds = st.sampled_from(["user_message", "command_execution", "file_change", "tool", "notice"])


@st.composite
def _threads(draw: st.DrawFn) -> list[dict[str, Any]]:
    ids = draw(st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=6))
    return [{"id": i, "kind": draw(_kinds), **draw(_fields)} for i in ids]


@settings(max_examples=300, deadline=None)
@given(_threads(), _threads())
def test_deltas_applied_to_the_snapshot_of_before_give_the_snapshot_of_after(
    before: list[dict[str, Any]], after: list[dict[str, Any]]
) -> None:
    deltas = wire_deltas(before, after)
    assert apply_deltas(wire_snapshot(before), deltas) == wire_snapshot(after)
    assert json.loads(json.dumps(deltas)) == deltas  # JSON as sent


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=40), min_size=1, max_size=8))
def test_streamed_message_deltas_rebuild_the_message(chunks: list[str]) -> None:
    follower = WireFollower()
    client = follower.snapshot()
    text = ""
    for chunk in chunks:
        text += chunk
        delta = follower.update(AssistantMessageItem(id="m", text=text))
        client = apply_deltas(client, [delta] if delta else [])
    assert client == wire_snapshot([AssistantMessageItem(id="m", text=text)])


def test_the_schema_is_valid_and_refuses_a_patch() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    bad = wire_item(_edit()) | {"diff_str": PATCH}
    assert not jsonschema.Draft202012Validator(SCHEMA).is_valid(bad)
    bad_cmd = wire_item(CommandExecutionItem(id="c", output="x")) | {"output": "x"}
    assert not jsonschema.Draft202012Validator(SCHEMA).is_valid(bad_cmd)


def test_the_docs_schema_is_wire_json_schema() -> None:
    assert wire_json_schema() == SCHEMA


def test_snapshots_and_deltas_follow_the_schema() -> None:
    root = {**SCHEMA, "$ref": "#/$defs/WireSnapshot"}
    items = [_edit(), CommandExecutionItem(id="c", command="ls", output="x")]
    jsonschema.validate(wire_snapshot(items, session={"title": "t"}), root)
    delta_schema = {**SCHEMA, "$ref": "#/$defs/WireDelta"}
    after = [*items, ToolItem(id="t", input="q" * 20_000)]
    for delta in wire_deltas([items[0]], after):
        jsonschema.validate(delta, delta_schema)
