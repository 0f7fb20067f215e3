"""The memory of a replay: ``project_capture`` of a large capture, against its timeline.

This script writes a capture of one session whose one turn makes ``--tools`` tool calls (each
an ``edit`` started with its file, then completed with a ``diff`` of a few lines and a text
output, about 1.6 KB of capture a call, so 100,000 calls make a capture of about 160 MB),
then projects it offline with :func:`acp_adapters.project_capture` in a fresh child process
and reports:

* ``capture_mb``: the capture's size;
* ``timeline_mb``: the size of the projected timeline as JSON (each item's
  ``model_dump_json``), what an application keeps of it;
* ``peak_mb``: the child's peak RSS (``ru_maxrss``) above what it held once
  ``acp_adapters`` was imported and had projected a capture of one call (its plugins
  loaded), before the capture was read;
* ``ratio``: ``peak_mb / timeline_mb``: the target is at most 3 (issue: replay memory follows
  the timeline, not the capture's size).

Each size runs ``--runs`` times, each in its own child; the medians are reported. Run from
the repository root::

    python tests/benchmarks/bench_replay.py [--tools 100000] [--runs 3] [--json OUT]

Exits 1 when a projection is wrong (not one tool item a call, completed, with its diff).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

SESSION = "bench-replay"


def _line(direction: str, at: float, message: dict[str, Any]) -> str:
    return json.dumps({"dir": direction, "t": round(at, 4), "msg": message}) + "\n"


def _update(update: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": SESSION, "update": update},
    }


def write_capture(path: Path, tools: int) -> None:
    """One session, one turn of ``tools`` edit tool calls (see the module's docstring)."""
    at = 0.0
    with path.open("w", encoding="utf-8") as out:
        opening = [
            ("client->agent", {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                               "params": {"protocolVersion": 1, "clientCapabilities": {}}}),
            ("agent->client", {"jsonrpc": "2.0", "id": 1,
                               "result": {"protocolVersion": 1, "agentCapabilities": {}}}),
            ("client->agent", {"jsonrpc": "2.0", "id": 2, "method": "session/new",
                               "params": {"cwd": "<workspace>", "mcpServers": []}}),
            ("agent->client", {"jsonrpc": "2.0", "id": 2, "result": {"sessionId": SESSION}}),
            ("client->agent", {"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
                               "params": {"sessionId": SESSION,
                                          "prompt": [{"type": "text", "text": "go"}]}}),
        ]  # fmt: skip
        for direction, message in opening:
            out.write(_line(direction, at, message))
            at += 0.001
        for n in range(tools):
            call = f"call-{n}"
            path_n = f"<workspace>/src/module_{n % 500}.py"
            old = "".join(f"line {k} of the file before call {n}\n" for k in range(6))
            new = old.replace(f"line 3 of the file before call {n}", f"line 3 changed by {n}")
            started = {
                "sessionUpdate": "tool_call",
                "toolCallId": call,
                "title": f"Edit module_{n % 500}.py",
                "kind": "edit",
                "status": "in_progress",
                "locations": [{"path": path_n}],
                "rawInput": {"path": path_n, "instruction": "change line 3"},
            }
            completed = {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call,
                "status": "completed",
                "content": [
                    {"type": "diff", "path": path_n, "oldText": old, "newText": new},
                    {"type": "content", "content": {"type": "text", "text": f"edited {n}"}},
                ],
            }
            for update in (started, completed):
                out.write(_line("agent->client", at, _update(update)))
                at += 0.0001
        out.write(_line("agent->client", at, {"jsonrpc": "2.0", "id": 3,
                                              "result": {"stopReason": "end_turn"}}))  # fmt: skip


def child(path: str, tools: int) -> None:
    """In the child: project the capture, check it, print what it measured as JSON."""
    import acp_adapters

    # Warmed up first: the plugins loaded, the models built (what any projection costs once).
    warm = Path(path).with_suffix(".warm.jsonl")
    write_capture(warm, 1)
    acp_adapters.project_capture(warm)
    warm.unlink()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    timeline = acp_adapters.project_capture(path)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    items = list(timeline.items)
    tool_items = [item for item in items if item.kind == "file_change"]
    timeline_bytes = sum(len(item.model_dump_json()) for item in items)
    wrong = None
    if len(tool_items) != tools:
        wrong = f"{len(tool_items)} file changes for {tools} calls"
    elif any(getattr(item, "status", None) != "completed" for item in tool_items):
        wrong = "a file change not completed"
    print(
        json.dumps(
            {
                "peak_mb": (peak - before) / 1024,
                "timeline_mb": timeline_bytes / (1024 * 1024),
                "items": len(items),
                "wrong": wrong,
            }
        )
    )


def measure(path: Path, tools: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(path), "--tools", str(tools)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", type=int, default=100_000, help="tool calls in the turn")
    parser.add_argument("--runs", type=int, default=3, help="children a size (the median)")
    parser.add_argument("--json", metavar="OUT", help="write the results as JSON to OUT")
    parser.add_argument("--child", metavar="CAPTURE", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.tools)
        return 0
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        for tools in sorted({max(args.tools // 10, 1), args.tools}):
            capture = Path(folder) / f"replay-{tools}.jsonl"
            write_capture(capture, tools)
            runs = [measure(capture, tools) for _ in range(args.runs)]
            wrong = next((run["wrong"] for run in runs if run["wrong"]), None)
            if wrong:
                print(f"{tools} tool calls: wrong projection: {wrong}", file=sys.stderr)
                return 1
            peak = statistics.median(run["peak_mb"] for run in runs)
            timeline = statistics.median(run["timeline_mb"] for run in runs)
            result = {
                "tools": tools,
                "capture_mb": round(os.path.getsize(capture) / (1024 * 1024), 3),
                "timeline_mb": round(timeline, 3),
                "peak_mb": round(peak, 3),
                "ratio": round(peak / timeline, 2),
            }
            results.append(result)
            capture.unlink()
    print(
        "| tool calls | capture MB | timeline JSON MB | peak RSS over start MB | peak / timeline |"
    )
    print("| ---: | ---: | ---: | ---: | ---: |")
    for r in results:
        print(
            f"| {r['tools']:,} | {r['capture_mb']:.1f} | {r['timeline_mb']:.1f} "
            f"| {r['peak_mb']:.1f} | {r['ratio']}x |"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
