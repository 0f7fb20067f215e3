"""What a session keeps of file contents is bounded, and what it lets go never makes a wrong patch.

An agent can make the client read a large file again and again (``fs/read_text_file``,
or edit tool calls naming it, each read around the edit): the session keeps each
distinct content once, within a budget, and past it keeps only digests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

import acp_adapters
from acp_adapters import connect
from acp_adapters.runtime import FileEvent, Reducer, SessionState
from acp_adapters.runtime.file_store import FileStore, content_digest

from .scripts import Script, pipelining_agent

MIB = 1024 * 1024


def test_twenty_reads_of_one_large_file_keep_it_once() -> None:
    store = FileStore(budget=64 * MIB)
    for seq in range(20):
        # A new string each time, as each read from the disk gives one.
        text = "x" * (30 * MIB - 1) + str(seq % 1)
        store.add(FileEvent(op="read", path="/ws/big", content=text, seq=seq))
    assert store.kept_size == 30 * MIB
    contents = {id(e.content) for e in store.events}
    assert len(contents) == 1
    assert all(e.kept for e in store.events)


def test_past_the_budget_the_oldest_contents_go_and_the_latest_of_each_path_stays() -> None:
    store = FileStore(budget=12)
    store.add(FileEvent(op="read", path="/a", content="aaaaaa", seq=1))
    store.add(FileEvent(op="disk_before", path="/b", content="bbbbbb", seq=2, tool_call_id="t"))
    store.add(FileEvent(op="read", path="/c", content="cccccc", seq=3))
    assert store.kept_size == 12
    a, b, c = store.events
    # /a and /c are the latest reads of their paths (what their next writes are judged
    # against): kept; the disk read, which no later write needs, went.
    assert (a.content, c.content) == ("aaaaaa", "cccccc")
    assert (b.kept, b.content, b.digest) == (False, None, content_digest("bbbbbb"))


def test_the_budget_holds_even_when_every_content_is_a_latest_read() -> None:
    store = FileStore(budget=100)
    for n in range(1000):
        store.add(FileEvent(op="read", path=f"/f{n}", content="y" * 40, seq=n))
    assert store.kept_size <= 100
    assert [e.kept for e in store.events[-2:]] == [True, True]
    assert not store.events[0].kept


def test_a_content_larger_than_the_budget_is_only_a_digest() -> None:
    store = FileStore(budget=4)
    event = store.add(FileEvent(op="read", path="/a", content="too long", seq=1))
    assert (event.kept, event.content, event.digest) == (False, None, content_digest("too long"))
    assert store.before("/a", 2) == event


def test_a_write_whose_earlier_content_was_let_go_gets_no_true_patch_not_a_wrong_one() -> None:
    from acp_adapters.projection.files import file_contents_from_fs
    from acp_adapters.runtime import ToolCall

    state = SessionState(content_budget=8)
    reducer = Reducer(state)
    reducer.apply_notification(
        {
            "sessionId": "s",
            "update": {
                "sessionUpdate": "tool_call",
                "toolCallId": "t1",
                "title": "edit",
                "kind": "edit",
                "status": "in_progress",
                "locations": [{"path": "/ws/a"}],
            },
        }
    )
    reducer.apply_file_read("/ws/a", "0123456789")  # over the budget: only its digest
    reducer.apply_file_write("/ws/a", "new")
    call: ToolCall = state.tool_calls["t1"]
    assert file_contents_from_fs(call, state.view()) == []


def test_many_unfinished_tool_calls_do_not_make_each_write_slower(monkeypatch: Any) -> None:
    """Which tool call a write belongs to is found from an index, not by looking at every
    unfinished tool call (20,000 of them made each write cost 93 ms)."""
    from acp_adapters.runtime import reducer as reducer_module

    state = SessionState()
    reducer = Reducer(state)
    for n in range(20_000):
        reducer.apply_notification(
            {
                "sessionId": "s",
                "update": {
                    "sessionUpdate": "tool_call",
                    "toolCallId": f"t{n}",
                    "title": "edit",
                    "kind": "edit",
                    "status": "pending",
                    "locations": [{"path": f"/ws/f{n}"}],
                },
            }
        )
    looked_at: list[object] = []
    real = reducer_module.tool_call_paths

    def counting(call: Any) -> list[str]:
        looked_at.append(call)
        return real(call)

    monkeypatch.setattr(reducer_module, "tool_call_paths", counting)
    for n in range(0, 20_000, 100):
        reducer.apply_file_write(f"/ws/f{n}", "x")
        assert reducer.writer_of(f"/ws/f{n}") == f"t{n}"
    assert len(looked_at) <= 200  # at most the writer's own, not 20,000 per write
    assert state.view().writes_of("t100")[0].content == "x"


def test_a_live_agent_reading_one_file_over_and_over_costs_one_copy(tmp_path: Path) -> None:
    """20 reads of a file and 30 edits naming another: each content is kept once."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "big.txt").write_text("b" * (4 * MIB), encoding="utf-8")
    (workspace / "seven.txt").write_text("s" * MIB, encoding="utf-8")
    steps: list[dict[str, Any]] = [
        {"request": "fs/read_text_file", "params": {"path": str(workspace / "big.txt")}}
        for _ in range(20)
    ]
    steps += [
        {
            "update": {
                "sessionUpdate": "tool_call",
                "toolCallId": f"e{n}",
                "title": "edit",
                "kind": "edit",
                "status": "in_progress",
                "content": [
                    {
                        "type": "diff",
                        "path": str(workspace / "seven.txt"),
                        "oldText": "s",
                        "newText": "t",
                    }
                ],
            }
        }
        for n in range(30)
    ]
    script = Script(tmp_path / "agent", steps)

    async def main() -> Any:
        async with connect(command=script.command, cwd=workspace, policy="read-only") as session:
            with anyio.fail_after(60):
                await session.prompt("go")
            return session

    session = anyio.run(main)
    events = session.projector.state.view().files
    assert len([e for e in events if e.op == "read"]) == 20
    assert len([e for e in events if e.op == "disk_before"]) == 30
    assert len({id(e.content) for e in events if e.content is not None}) == 2
    assert session.projector.state.file_store.kept_size == 5 * MIB


PIPELINED_READS = """
def ON_PROMPT(send, read):
    for n in range(20):  # every read asked before any answer is read
        send({"id": n, "method": "fs/read_text_file", "params": {"sessionId": "s", "path": PATH}})
    out.flush()
    waiting = set(range(20))
    while waiting:
        waiting.discard(read().get("id"))
"""


def test_pipelined_reads_of_a_large_file_hold_one_answer_at_a_time(tmp_path: Path) -> None:
    """20 reads of an 8 MiB file asked at once: the answers are not all in memory together."""
    import tracemalloc

    big = tmp_path / "big.txt"
    big.write_text("b" * (8 * MIB), encoding="utf-8")
    command = pipelining_agent(tmp_path, f"PATH = {str(big)!r}\n" + PIPELINED_READS)

    async def main() -> str | None:
        async with connect(command=command, cwd=tmp_path, policy="read-only") as session:
            with anyio.fail_after(60):
                return (await session.prompt("go")).stop_reason

    tracemalloc.start()
    try:
        assert anyio.run(main) == "end_turn"
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Each answer in flight costs its text and its encoded line (about 16 MiB here); twenty
    # at once were 320 MiB and more.
    assert peak < 80 * MIB, peak / MIB


@pytest.mark.parametrize(
    ("text", "start", "count"),
    [
        ("a\nb\nc\n", 0, 1),
        ("a\nb\nc\n", 1, 5),
        ("a\nb\nc", 2, 1),
        ("a\nb\nc", 3, 1),
        ("a\r\nb\u2028c\n", 0, 1),
        ("", 0, 2),
        ("a\nb\n", 0, 0),
        ("a\nb\n", 1, None),
    ],
)
def test_a_range_of_lines_is_the_lines_split_at_newlines(
    text: str, start: int, count: int | None
) -> None:
    from acp_adapters.client.workspace import text_lines

    parts = text.split("\n")
    lines = [piece + "\n" for piece in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
    end = None if count is None else start + count
    assert text_lines(text, start, count) == "".join(lines[start:end])


def test_one_line_of_a_large_file_costs_one_line() -> None:
    """A ``line``/``limit`` read of a 30 MiB file of short lines built a list of every line
    (1.4 GB); the lines asked for are all it copies now."""
    import tracemalloc

    from acp_adapters.client.workspace import text_lines

    text = "a\n" * (15 * MIB)
    tracemalloc.start()
    try:
        assert text_lines(text, 1000, 2) == "a\na\n"
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < MIB


def test_the_bounds_are_set_through_connect(tmp_path: Path) -> None:
    """An application sets the session's bounds where it opens it."""
    script = Script(tmp_path / "agent", [])

    async def main() -> Any:
        async with connect(
            command=script.command,
            cwd=tmp_path,
            policy="read-only",
            limits=acp_adapters.Limits(
                max_elements=1000, max_pending_requests=7, content_budget=123
            ),
        ) as session:
            return session

    session = anyio.run(main)
    assert session.connection.max_elements == 1000
    assert session.connection.max_pending_requests == 7
    assert session.projector.state.file_store.budget == 123
