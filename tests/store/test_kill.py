"""A writer killed with SIGKILL at random points loses at most the update in flight, and never
leaves a store that fails to open or to rebuild.

The writer (this file, run as a program) commits the traffic of three sessions, update by
update, with the items its projector changed (as a live session does), and says on its
standard output what it is about to commit (``b THREAD SEQ``) and what it committed
(``c THREAD SEQ``). The test kills it at a random moment, then opens the store and checks
every thread: its log is whole (``seq`` 1 to n), it rebuilds to its stored items, and ``n`` is
the last seq the writer said it committed, or the one it was committing. The next writer reads
each thread back from its log and goes on where it stands, as a restarted session does.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

KILLS = 40
THREADS = 3
#: How many kills a set of threads takes before the writer goes on with new ones (so that no
#: log grows long enough to make reading it back slow).
KILLS_PER_SET = 8
#: The longest a kill waits after the writer is ready (seconds); some kills come before it is.
MOST_DELAY = 0.3

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")


def long_traffic(index: int, turns: int = 3000) -> list[dict[str, Any]]:
    """A long session's traffic, the same every time for one ``index``."""
    rng = random.Random(index)
    session = f"s-{index}"
    clock = iter(range(1, 10**9))
    lines: list[dict[str, Any]] = []

    def add(direction: str, message: dict[str, Any]) -> None:
        lines.append(
            {"dir": direction, "t": float(next(clock)), "msg": {"jsonrpc": "2.0", **message}}
        )

    def update(body: dict[str, Any]) -> None:
        add(
            "agent->client",
            {"method": "session/update", "params": {"sessionId": session, "update": body}},
        )

    add("client->agent", {"id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
    add("agent->client", {"id": 0, "result": {"protocolVersion": 1, "agentCapabilities": {}}})
    add(
        "client->agent",
        {"id": 1, "method": "session/new", "params": {"cwd": "/work", "mcpServers": []}},
    )
    add("agent->client", {"id": 1, "result": {"sessionId": session}})
    for turn in range(2, turns + 2):
        words = "".join(rng.choice("abcé✓ ") for _ in range(8))
        add(
            "client->agent",
            {
                "id": turn,
                "method": "session/prompt",
                "params": {"sessionId": session, "prompt": [{"type": "text", "text": words}]},
            },
        )
        for _ in range(rng.randint(1, 3)):
            update(
                {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": words}}
            )
        if rng.random() < 0.5:
            call = f"call-{turn}"
            update(
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": call,
                    "title": words,
                    "kind": "read",
                    "status": "pending",
                }
            )
            update({"sessionUpdate": "tool_call_update", "toolCallId": call, "status": "completed"})
        add("agent->client", {"id": turn, "result": {"stopReason": "end_turn"}})
    return lines


# --- the writer ---------------------------------------------------------------------------------


def say(line: str) -> None:
    os.write(1, (line + "\n").encode())  # unbuffered: what is said is in the pipe at once


async def writer(path: str, prefix: str) -> None:
    sys.path.insert(0, str(Path(__file__).parent.parent))
    from acp_adapters import get_plugin_manager
    from acp_adapters.store import open_store
    from history.test_rebuild import Committer

    pm = get_plugin_manager(load_entrypoints=False, environ={})
    rng = random.Random()
    store = await open_store(path)
    threads = sorted(
        (thread for thread in await store.threads() if (thread.name or "").startswith(prefix)),
        key=lambda thread: thread.name or "",
    )
    states = []
    for index, thread in enumerate(threads):
        lines = long_traffic(index)
        committer = Committer(pm)
        stored = await store.events(thread.id)
        committer.read_back(event.entry for event in stored)
        states.append((thread.id, lines, committer, len(stored)))
    say("ready")
    while True:
        for number, (thread_id, lines, committer, at) in enumerate(states):
            update = lines[at : at + rng.randint(1, 3)]
            if not update:
                continue
            commit = committer.update(update)
            say(f"b {number} {at + len(update)}")
            seq = await store.commit(thread_id, commit)
            say(f"c {number} {seq}")
            states[number] = (thread_id, lines, committer, seq)


# --- the test -----------------------------------------------------------------------------------


def integrity(path: Path) -> str:
    connection = sqlite3.connect(path)
    try:
        return str(connection.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        connection.close()


async def check(
    path: Path, said: list[str], before: dict[int, int], pm: Any, prefix: str = ""
) -> tuple[dict[int, int], int]:
    """Every thread whole and rebuilding, and how many seqs each holds; how many updates in
    flight were lost (0 or 1). ``before``: how many each held before the writer started."""
    from acp_adapters.history.rebuild import check_thread
    from acp_adapters.store import open_store

    committed: dict[int, int] = {}
    begun: dict[int, int] = {}
    for line in said:
        word, number, seq = line.split()
        (committed if word == "c" else begun)[int(number)] = int(seq)
    lost = 0
    counts: dict[int, int] = {}
    async with await open_store(path) as store:
        threads = sorted(
            (t for t in await store.threads() if (t.name or "").startswith(prefix)),
            key=lambda thread: thread.name or "",
        )
        for number, thread in enumerate(threads):
            events = await store.events(thread.id)
            seqs = [event.seq for event in events]
            assert seqs == list(range(1, len(seqs) + 1)), f"a gap in {thread.name}"
            assert await check_thread(store, thread.id, pm=pm), f"{thread.name} does not rebuild"
            counts[number] = len(seqs)
            done = committed.get(number, before[number])
            flying = begun.get(number, done)
            if flying > done:  # killed while committing this one: kept whole, or lost whole
                assert len(seqs) in (done, flying), (thread.name, len(seqs), done, flying)
                lost += len(seqs) != flying
            else:
                assert len(seqs) == done, (thread.name, len(seqs), done)
    return counts, lost


def run_and_kill(
    process: subprocess.Popen[bytes], rng: random.Random, kill: int, figures: dict[str, int]
) -> list[str]:
    """Let the writer run a random while, kill it; what it said."""
    assert process.stdout is not None
    assert process.stderr is not None
    said: list[str] = []
    ready = threading.Event()

    def read(stream: Any = process.stdout) -> None:
        for raw in stream:
            line = raw.decode().strip()
            if line == "ready":
                ready.set()
            elif line:
                said.append(line)
        ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    if kill % 5 == 4:  # now and then while it opens the store and reads it back
        time.sleep(rng.uniform(0, 0.6))
        figures["before_ready"] += not ready.is_set()
    else:
        ready.wait(60)
        time.sleep(rng.uniform(0, MOST_DELAY))
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    reader.join(10)
    stderr = process.stderr.read().decode()
    assert process.returncode == -signal.SIGKILL, stderr
    return said


@pytest.mark.timeout(600)
def test_a_writer_killed_at_random_points_loses_at_most_the_update_in_flight(
    tmp_path: Path,
) -> None:
    from acp_adapters import get_plugin_manager
    from acp_adapters.store import open_store

    pm = get_plugin_manager(load_entrypoints=False, environ={})
    path = tmp_path / "store.db"

    async def make(prefix: str) -> None:
        async with await open_store(path) as store:
            for index in range(THREADS):
                await store.create_thread(provider="generic", cwd="/work", name=f"{prefix}{index}")

    rng = random.Random(13)
    figures = {"kills": 0, "lost": 0, "before_ready": 0, "grew": 0}
    lost_per_kill: list[int] = []
    kept: dict[str, dict[int, int]] = {}
    for kill in range(KILLS):
        prefix = f"set{kill // KILLS_PER_SET}-"
        if kill % KILLS_PER_SET == 0:
            anyio.run(make, prefix)
            before = dict.fromkeys(range(THREADS), 0)
        started = time.monotonic()
        with subprocess.Popen(
            [sys.executable, __file__, str(path), prefix],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        ) as process:
            said = run_and_kill(process, rng, kill, figures)
        killed = time.monotonic()
        counts, lost = anyio.run(check, path, said, before, pm, prefix)
        checked = time.monotonic() - killed
        print(f"kill {kill}: ran {killed - started:.2f}s, checked {checked:.2f}s, {counts}")
        for number, count in counts.items():
            assert count >= before[number]  # nothing committed before is ever lost
        figures["grew"] += counts != before
        before = counts
        figures["kills"] += 1
        figures["lost"] += lost
        lost_per_kill.append(lost)
        kept[prefix] = counts
    # At the end, every thread of every set opens and rebuilds still.
    for prefix, counts in kept.items():
        assert anyio.run(check, path, [], counts, pm, prefix)[0] == counts
    print(f"kill test: {figures}, lost per kill: {lost_per_kill}, events kept: {kept}")
    assert figures["kills"] == KILLS
    assert figures["grew"] >= KILLS // 2  # the kills came while it was writing


if __name__ == "__main__":
    anyio.run(writer, sys.argv[1], sys.argv[2])
