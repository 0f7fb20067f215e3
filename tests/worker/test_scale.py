"""Proof at scale: three worker processes on one store, 60 threads, 300 prompts queued by
other processes; one worker SIGKILLed and one SIGTERMed mid-run. Every prompt ran exactly
once or ended failed with its reason; no thread was driven by two agents at once; a
follower in another process saw every committed item, in order."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_adapters.store import QueuedPrompt, open_store
from queue_helpers import overlaps, started
from store.postgres_server import postgres_server  # noqa: F401  (fixture)

from .fleet import Fleet, wait_until

THREADS = 60
PROMPTS = 300


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    server = request.getfixturevalue("postgres_server")
    return str(server.create_database())  # empty: no other test's threads


def _prompts(store_url: str, ids: list[str]) -> list[QueuedPrompt | None]:
    async def read() -> list[QueuedPrompt | None]:
        async with await open_store(store_url) as store:
            return [await store.queued_prompt(prompt_id) for prompt_id in ids]

    return anyio.run(read)


def _items(store_url: str, name: str) -> list[dict[str, Any]]:
    async def read() -> list[dict[str, Any]]:
        async with await open_store(store_url) as store:
            thread = await store.thread_named(name)
            assert thread is not None
            return await store.items(thread.id)

    return anyio.run(read)


def test_three_workers_run_every_prompt_once_through_a_kill_and_a_stop(
    store_url: str, tmp_path: Path
) -> None:
    fleet = Fleet(store_url, tmp_path / "threads", tmp_path / "agents.jsonl", lease=2.0)
    fleet.make_threads(THREADS)
    texts = [(number % THREADS, f"sleep 0.05 p{number}") for number in range(PROMPTS)]
    try:
        for _ in range(3):
            fleet.start_worker()
        # The first prompts, then a follower of thread 0 in a process of its own, then the rest.
        ids = fleet.send(texts[:THREADS], senders=3)
        follower = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "acp_adapters",
                "sessions",
                "follow",
                "t0",
                "--store",
                store_url,
                "--format",
                "jsonl",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        ids += fleet.send(texts[THREADS:], senders=3)
        assert len(ids) == PROMPTS == len(set(ids))

        def ended() -> int:
            return sum(1 for p in _prompts(store_url, ids) if p is not None and p.ended)

        wait_until(lambda: ended() >= PROMPTS // 3, 180, "a third of the prompts ended")
        killed, stopped, _kept = fleet.workers
        killed.send_signal(signal.SIGKILL)
        wait_until(lambda: ended() >= PROMPTS // 2, 180, "half of the prompts ended")
        stopped.send_signal(signal.SIGTERM)
        _, stop_err = stopped.communicate(timeout=60)
        assert stopped.returncode == 0, stop_err
        wait_until(lambda: ended() == PROMPTS, 240, "every prompt ended")
    finally:
        fleet.stop()
    prompts = _prompts(store_url, ids)
    entries = fleet.runs()
    runs = started(entries)
    by_text = {p.prompt[0]["text"]: p for p in prompts if p is not None}
    assert len(by_text) == PROMPTS
    for text, prompt in by_text.items():
        if prompt.state == "completed":
            assert runs[text] == 1, text  # ran, once
        else:
            assert prompt.state in ("failed", "cancelled"), prompt
            assert prompt.error, prompt  # with its reason
            assert runs[text] <= 1, text  # never twice
    completed = sum(1 for p in by_text.values() if p.state == "completed")
    print(  # what the kill and the stop cut (pytest -s shows it)
        f"{completed} completed; "
        + ", ".join(f"{p.state}: {p.error}" for p in by_text.values() if p.state != "completed")
    )
    assert completed >= PROMPTS - 3 * fleet.concurrency  # only what the kill and the stop cut
    assert overlaps(entries) == []
    # Each thread's prompts ran in the order they were queued.
    by_thread: dict[str, list[QueuedPrompt]] = {}
    for prompt in by_text.values():
        by_thread.setdefault(prompt.thread_id, []).append(prompt)
    assert len(by_thread) == THREADS
    for mine in by_thread.values():
        turns = [p.turn for p in sorted(mine, key=lambda p: p.position) if p.turn is not None]
        assert turns == sorted(turns)
    # The follower saw every item version in order: its last version of each item is the
    # store's, and items appeared in their timeline order.
    follower.send_signal(signal.SIGINT)
    out, _ = follower.communicate(timeout=30)
    seen: dict[str, dict[str, Any]] = {}
    first_seen: list[int] = []
    for line in out.splitlines():
        row = json.loads(line)
        row.pop("type")
        if row["id"] not in seen:
            first_seen.append(row["ordinal"])
        seen[row["id"]] = row
    stored = _items(store_url, "t0")
    assert [seen[item["id"]] for item in stored] == stored
    assert first_seen == sorted(first_seen)
