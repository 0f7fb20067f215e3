"""Measure the wire projection on T3 Code's known scenario.

A thread of 10 historical turns, each with a prompt, 5 command tools of 1,000 bytes of
output, one MCP tool whose retained result is 900,000 bytes, a 4,096-character assistant
reply streamed in 256-character chunks (16 changes of the message item) and a unified diff
over 8 files; then one measured turn of 20 command tools and a 1,100,000-byte MCP result.

Prints, and with ``--json OUT`` writes, ``stored_bytes`` (the full items' JSON, as a store
keeps them), ``snapshot_bytes`` and ``snapshot_gzip_bytes`` (:func:`wire_snapshot` of the 10
historical turns), ``turn_bytes``, ``turn_gzip_bytes`` and ``turn_messages`` (the measured
turn's deltas as they stream, from :class:`WireFollower`: each delta one message, gzip'd as
one stream). Targets: gzip'd snapshot <= 3,700 bytes, gzip'd turn <= 1,100 bytes.

Run from the repository root::

    python tests/benchmarks/bench_wire.py [--json OUT]

Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path
from typing import Any, Final

from acp_adapters.timeline.items import (
    AssistantMessageItem,
    CommandExecutionItem,
    FileChangeItem,
    ToolItem,
    UserMessageItem,
)
from acp_adapters.wire import WireFollower, wire_snapshot

SNAPSHOT_TARGET: Final = 3_700
TURN_TARGET: Final = 1_100
SESSION: Final = "sess-7f3a9c"
START: Final = 1_764_600_000.0
FILES: Final = [f"src/app/module_{n}.py" for n in range(8)]
REPLY: Final = ("The change is in place and the tests pass. " * 100)[:4096]


class Clock:
    """Wall-clock timestamps, 1 ms apart per event."""

    def __init__(self) -> None:
        self.now = START

    def tick(self, seconds: float = 0.001) -> float:
        self.now = round(self.now + seconds, 3)
        return self.now


class Thread:
    """Builds items in order as a live session would, with the bookkeeping fields set."""

    def __init__(self) -> None:
        self.ordinal = 0
        self.clock = Clock()
        self.items: dict[str, Any] = {}
        self.stream: list[Any] = []  # every state of every item, in the order they happened

    def new_id(self, prefix: str) -> str:
        self.ordinal += 1
        return f"{prefix}-{self.ordinal:04d}"

    def emit(self, item: Any) -> Any:
        self.items[item.id] = item
        self.stream.append(item)
        return item

    def base(self, turn: int, prefix: str) -> dict[str, Any]:
        item_id = self.new_id(prefix)
        at = self.clock.tick()
        return {
            "id": item_id,
            "session_id": SESSION,
            "turn": turn,
            "ordinal": self.ordinal,
            "created_at": at,
            "updated_at": at,
        }

    def prompt(self, turn: int) -> None:
        base = self.base(turn, "user")
        self.emit(UserMessageItem(**base, text=f"Turn {turn}: fix the failing tests."))

    def command(self, turn: int, n: int) -> None:
        base = self.base(turn, "cmd")
        call = f"call_{turn:02d}_{n:02d}"
        running = CommandExecutionItem(
            **base,
            status="running",
            tool_call_id=call,
            title="Run tests",
            tool_kind="execute",
            command=f"pytest -q tests/test_module_{n}.py",
            cwd="/workspace",
        )
        self.emit(running)
        output = (f"tests/test_module_{n}.py ........ [100%]\n" * 40)[:1000]
        self.emit(
            running.model_copy(
                update={
                    "status": "completed",
                    "output": output,
                    "exit_code": 0,
                    "updated_at": self.clock.tick(0.2),
                }
            )
        )

    def mcp(self, turn: int, size: int) -> None:
        base = self.base(turn, "mcp")
        running = ToolItem(
            **base,
            status="running",
            tool_call_id=f"call_{turn:02d}_mcp",
            title="docs.search",
            tool_kind="fetch",
            input={"server": "docs", "tool": "search", "arguments": {"query": "retry policy"}},
        )
        self.emit(running)
        row = '{"title": "Retry policy", "body": "Retries back off exponentially."}\n'
        result = {"content": [{"type": "text", "text": (row * (size // len(row) + 1))[:size]}]}
        self.emit(
            running.model_copy(
                update={"status": "completed", "output": result, "updated_at": self.clock.tick(1)}
            )
        )

    def reply(self, turn: int) -> None:
        base = self.base(turn, "msg")
        message = AssistantMessageItem(**base, status="running", text=REPLY[:256])
        self.emit(message)
        for end in range(512, len(REPLY) + 1, 256):
            update: dict[str, Any] = {"text": REPLY[:end], "updated_at": self.clock.tick(0.05)}
            if end == len(REPLY):
                update["status"] = "completed"
            message = message.model_copy(update=update)
            self.emit(message)

    def edit(self, turn: int) -> None:
        base = self.base(turn, "edit")
        hunks = [
            f"--- {path}\n+++ {path}\n@@ -10,3 +10,3 @@\n"
            f" def retry():\n-    return {turn - 1}\n+    return {turn}\n     pass\n"
            for path in FILES
        ]
        self.emit(
            FileChangeItem(
                **base,
                tool_call_id=f"call_{turn:02d}_edit",
                title="Edit files",
                tool_kind="edit",
                paths=tuple(FILES),
                operations=dict.fromkeys(FILES, "modify"),
                diff_str="".join(hunks),
                additions=len(FILES),
                deletions=len(FILES),
                patch_source="client_fs",
            )
        )


def historical_turn(thread: Thread, turn: int) -> None:
    thread.prompt(turn)
    for n in range(5):
        thread.command(turn, n)
    thread.mcp(turn, 900_000)
    thread.edit(turn)
    thread.reply(turn)


def measure() -> dict[str, int]:
    thread = Thread()
    for turn in range(1, 11):
        historical_turn(thread, turn)
    history = list(thread.items.values())
    snapshot = json.dumps(wire_snapshot(history), separators=(",", ":")).encode()

    follower = WireFollower(history)
    mark = len(thread.stream)
    thread.prompt(11)
    for n in range(20):
        thread.command(11, n)
    thread.mcp(11, 1_100_000)
    messages = [follower.update(item) for item in thread.stream[mark:]]
    lines = [json.dumps(m, separators=(",", ":")).encode() for m in messages if m is not None]
    turn = b"\n".join(lines)

    stored = json.dumps(
        [item.model_dump(mode="json") for item in thread.items.values()], separators=(",", ":")
    ).encode()
    return {
        "stored_bytes": len(stored),
        "snapshot_bytes": len(snapshot),
        "snapshot_gzip_bytes": len(gzip.compress(snapshot, mtime=0)),
        "turn_bytes": sum(len(line) for line in lines),
        "turn_gzip_bytes": len(gzip.compress(turn, mtime=0)),
        "turn_messages": len(lines),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", type=Path, help="write the figures here as JSON")
    args = parser.parse_args(argv)
    figures = measure()
    for key, value in figures.items():
        print(f"{key:20} {value:>12,}")
    ok = (
        figures["snapshot_gzip_bytes"] <= SNAPSHOT_TARGET
        and figures["turn_gzip_bytes"] <= TURN_TARGET
    )
    print(
        f"targets: snapshot gzip <= {SNAPSHOT_TARGET:,}, turn gzip <= {TURN_TARGET:,}: "
        + ("met" if ok else "MISSED")
    )
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
