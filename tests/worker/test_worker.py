"""Workers: threads with queued prompts and no owner are taken, driven as their threads
record them, and let go; what cannot be driven fails with its reason."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_adapters.client import enqueue
from acp_adapters.store import OWNER_LOST, Commit, Owner, Store, Turn, open_store
from acp_adapters.worker import run_worker
from queue_helpers import AGENT, COMMAND, overlaps, runs
from store.postgres_server import postgres_server, postgres_url  # noqa: F401  (fixtures)

pytestmark = pytest.mark.anyio


async def settled(store: Store, ids: list[str], seconds: float = 60) -> list[Any]:
    with anyio.fail_after(seconds):
        while True:
            prompts = [await store.queued_prompt(i) for i in ids]
            if all(p is not None and p.ended for p in prompts):
                return prompts
            await anyio.sleep(0.05)


async def test_a_worker_runs_each_thread_s_queue_in_order(
    target: str, tmp_path: Path, log: Path
) -> None:
    tag = uuid.uuid4().hex[:8]
    async with await open_store(target) as store:
        ids = []
        for number in range(3):
            folder = tmp_path / f"t{number}"
            folder.mkdir()
            for turn in range(3):
                queued = await enqueue(
                    store,
                    f"{tag}-{number}",
                    f"sleep 0.05 {number}.{turn}",
                    command=COMMAND,
                    cwd=folder,
                )
                ids.append(queued.id)
        stop = anyio.Event()
        async with anyio.create_task_group() as group:

            async def work() -> None:
                counts = await run_worker(store, concurrency=2, idle=0.2, stop=stop)
                assert counts.prompts == 9
                assert counts.threads >= 3

            group.start_soon(work)
            prompts = await settled(store, ids)
            stop.set()
        assert [p.state for p in prompts] == ["completed"] * 9
        for number in range(3):
            thread = await store.thread_named(f"{tag}-{number}")
            assert thread is not None
            assert await store.lease(thread.id) is None  # let go
    entries = runs(log)
    starts = [e["prompt"] for e in entries if e["event"] == "start"]
    assert sorted(starts) == sorted(f"sleep 0.05 {n}.{t}" for n in range(3) for t in range(3))
    for number in range(3):  # each thread's prompts in the order they were queued
        mine = [s for s in starts if s.endswith(tuple(f" {number}.{t}" for t in range(3)))]
        assert mine == [f"sleep 0.05 {number}.{t}" for t in range(3)]
    assert overlaps(entries) == []


async def test_a_thread_it_cannot_drive_fails_its_prompts_with_the_reason(
    tmp_path: Path, log: Path
) -> None:
    db = tmp_path / "store.db"
    root = tmp_path / "root"
    root.mkdir()
    gone = root / "gone"
    gone.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    async with await open_store(db) as store:
        missing = await enqueue(store, "missing", "hello", command=COMMAND, cwd=gone)
        gone.rmdir()
        outside = await enqueue(store, "outside", "hello", command=COMMAND, cwd=elsewhere)
        broken = await enqueue(store, "broken", "hello", command=["/no/such/agent"], cwd=root)
        stop = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: run_worker(store, root=root, idle=0, stop=stop))
            found = await settled(store, [missing.id, outside.id, broken.id])
            stop.set()
    assert [p.state for p in found] == ["failed"] * 3
    assert "does not exist on this worker's machine" in found[0].error
    assert "not under this worker's root" in found[1].error
    assert "/no/such/agent" in found[2].error
    assert runs(log) == []


async def test_a_worker_ends_a_lost_owner_s_turn_with_nothing_queued(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    async with await open_store(db) as store:
        thread = await store.create_thread(provider="generic", cwd=str(tmp_path))
        await store.acquire_lease(thread.id, Owner.here(), seconds=0.1)
        await store.commit(thread.id, Commit(turns=[Turn(thread.id, 1, "running")]))
        await anyio.sleep(0.2)
        stop = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: run_worker(store, idle=0, stop=stop))
            with anyio.fail_after(10):
                while (await store.turns(thread.id))[0].status == "running":
                    await anyio.sleep(0.05)
            stop.set()
        (turn,) = await store.turns(thread.id)
        assert (turn.status, turn.error) == ("failed", OWNER_LOST)
        assert await store.lease(thread.id) is None


def test_sigterm_lets_the_running_turn_finish_and_the_thread_go(tmp_path: Path, log: Path) -> None:
    db = tmp_path / "store.db"
    env = {**os.environ, "QUEUE_AGENT_LOG": str(log)}
    sent = subprocess.run(
        [
            sys.executable,
            "-m",
            "acp_adapters",
            "sessions",
            "send",
            "--store",
            str(db),
            "s",
            "--command",
            f"{sys.executable} {AGENT}",
            "--cwd",
            str(tmp_path),
            "sleep 1.5 long",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    prompt_id = sent.stdout.strip()
    with subprocess.Popen(
        [
            sys.executable,
            "-m",
            "acp_adapters",
            "worker",
            "--store",
            str(db),
            "--idle",
            "60",
            "--grace",
            "30",
        ],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    ) as worker:
        until = time.monotonic() + 30
        while not runs(log) and time.monotonic() < until:
            time.sleep(0.05)
        assert runs(log), "the worker ran nothing"
        worker.send_signal(signal.SIGTERM)
        _, err = worker.communicate(timeout=30)
    assert worker.returncode == 0, err
    assert "SIGTERM" in err
    assert "1 prompts run" in err

    async def check() -> None:
        async with await open_store(db) as store:
            prompt = await store.queued_prompt(prompt_id)
            assert prompt is not None
            assert prompt.state == "completed"
            thread = await store.thread_named("s")
            assert thread is not None
            assert await store.lease(thread.id) is None

    anyio.run(check)
    assert [e["event"] for e in runs(log)] == ["start", "end"]


async def test_past_the_grace_a_running_turn_is_cancelled_and_the_thread_let_go(
    tmp_path: Path, log: Path
) -> None:
    db = tmp_path / "store.db"
    async with await open_store(db) as store:
        queued = await enqueue(store, "long", "sleep 30 long", command=COMMAND, cwd=tmp_path)
        stop = anyio.Event()
        async with anyio.create_task_group() as group:

            async def work() -> None:
                await run_worker(store, grace=0.5, stop=stop)

            group.start_soon(work)
            with anyio.fail_after(20):
                while not runs(log):
                    await anyio.sleep(0.05)
            stop.set()
            with anyio.fail_after(20):  # the grace, then the turn is cancelled
                while True:
                    prompt = await store.queued_prompt(queued.id)
                    if prompt is not None and prompt.ended:
                        break
                    await anyio.sleep(0.05)
        assert prompt.state == "cancelled"
        assert prompt.error
        thread = await store.thread_named("long")
        assert thread is not None
        assert await store.lease(thread.id) is None


async def test_a_thread_is_driven_as_it_was_made(tmp_path: Path) -> None:
    # What `enqueue` (or the owner's connect) records is what the worker starts the agent
    # with: the command, the folders, the policy and its rules, the MCP servers.
    from acp_adapters import McpServer, Policy
    from acp_adapters.plugin.rules import PermissionRule
    from acp_adapters.worker import Worker

    policy = Policy(
        name="read-only",
        rules=(PermissionRule(decision="allow", kinds=("edit",), paths=("docs/**",)),),
    )
    servers = [
        McpServer(name="files", command="/bin/mcp-files", args=("--root", "/w"), env={"A": "1"}),
        McpServer(name="web", transport="http", url="https://mcp.example/", headers={"X": "y"}),
    ]
    more = tmp_path / "more"
    more.mkdir()
    async with await open_store(tmp_path / "store.db") as store:
        await enqueue(
            store,
            "made",
            "hello",
            command=COMMAND,
            cwd=tmp_path,
            additional_directories=[more],
            policy=policy,
            mcp_servers=servers,
            protocol=1,
        )
        thread = await store.thread_named("made")
        assert thread is not None
        arguments = Worker(store)._arguments(thread, Owner.here())
    assert arguments["command"] == COMMAND
    assert arguments["provider"] is None
    assert (arguments["cwd"], arguments["additional_directories"]) == (str(tmp_path), [str(more)])
    assert arguments["policy"] == policy
    assert list(arguments["mcp_servers"]) == servers
    assert arguments["protocol"] == 1
    assert (arguments["thread"], arguments["persistence"].busy) == (thread.id, "fail")
    assert not arguments["persistence"].run_queued
