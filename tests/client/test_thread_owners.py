"""One owner per thread: a second ``connect`` on a driven thread queues behind its owner (or
is refused), follows its turn in the store, and takes the thread over when the owner goes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest

import acp_adapters
from acp_adapters.client.guest import GuestSession, QueuedTurnFailed
from acp_adapters.store import OWNER_LOST, ThreadBusy, open_store
from queue_helpers import AGENT, COMMAND, runs
from store.postgres_server import postgres_server, postgres_url  # noqa: F401  (fixtures)

pytestmark = pytest.mark.anyio


@pytest.fixture
def name() -> str:
    return f"thread-{uuid.uuid4().hex[:12]}"


def said(items: Any) -> list[str]:
    return [i.text for i in items if i.kind == "assistant_message"]


async def wait_for(check: Any, seconds: float = 20.0) -> None:
    with anyio.fail_after(seconds):
        while not check():
            await anyio.sleep(0.02)


async def test_a_second_session_queues_behind_the_owner(
    target: Any, name: str, tmp_path: Path, log: Path
) -> None:
    async with acp_adapters.connect(
        command=COMMAND, cwd=tmp_path, store=target, thread=name, policy="read-only"
    ) as owner:
        assert owner.lease is not None
        assert owner.lease.owner.pid == os.getpid()
        with pytest.raises(ThreadBusy) as refused:
            async with acp_adapters.connect(
                command=COMMAND,
                cwd=tmp_path,
                store=target,
                thread=name,
                persistence=acp_adapters.Persistence(busy="fail"),
            ):
                pass
        assert refused.value.lease.owner == owner.lease.owner
        assert f"pid {os.getpid()}" in str(refused.value)
        await owner.prompt("first")
        async with acp_adapters.connect(
            command=COMMAND, cwd=tmp_path, store=target, thread=name
        ) as guest:
            assert isinstance(guest, GuestSession)
            assert guest.owner.owner == owner.lease.owner
            # The thread's history, read back; the guest's own turn, followed as it lands.
            await wait_for(lambda: said(guest.timeline) == ["done: first"])
            changes = [change.item async for change in guest.stream_prompt("second")]
            assert {item.turn for item in changes} == {2}
            assert "done: second" in said(changes)
            turn = await guest.prompt("third")
            assert (turn.index, turn.stop_reason) == (3, "end_turn")
            assert said(turn.items) == ["done: third"]
            with pytest.raises(acp_adapters.AcpAdaptersError, match="queues its prompts"):
                await guest.set_mode("plan")
            await wait_for(lambda: said(owner.timeline)[-1:] == ["done: third"])
            # One timeline, whoever reads it.
            assert guest.timeline.to_json() == owner.timeline.to_json()
    # One agent ran every turn.
    assert len({run["pid"] for run in runs(log)}) == 1
    assert [r["prompt"] for r in runs(log) if r["event"] == "start"] == [
        "first",
        "second",
        "third",
    ]


async def test_a_guest_takes_the_thread_over_when_the_owner_lets_it_go(
    target: Any, name: str, tmp_path: Path, log: Path
) -> None:
    async with anyio.create_task_group() as tasks:
        owner_done = anyio.Event()

        async def hold() -> None:
            # An owner that serves no queue (run_queued=False) and then lets the thread go.
            async with acp_adapters.connect(
                command=COMMAND,
                cwd=tmp_path,
                store=target,
                thread=name,
                persistence=acp_adapters.Persistence(run_queued=False),
            ) as owner:
                await owner.prompt("mine")
                await owner_done.wait()

        tasks.start_soon(hold)
        async with await open_store(target) as store:
            await wait_for(lambda: runs(log))
            thread = await store.thread_named(name)
            assert thread is not None
            async with acp_adapters.connect(
                command=COMMAND, cwd=tmp_path, store=store, thread=name
            ) as guest:
                assert isinstance(guest, GuestSession)
                async with anyio.create_task_group() as inner:
                    results: list[Any] = []

                    async def ask() -> None:
                        results.append(await guest.prompt("yours"))

                    inner.start_soon(ask)
                    await wait_for(lambda: bool(guest.queued_ids))
                    await anyio.sleep(0.3)
                    assert not results  # queued: the owner runs no queue
                    owner_done.set()  # it lets the thread go: the guest takes it over
                (turn,) = results
                assert said(turn.items) == ["done: yours"]
            assert await store.lease(thread.id) is None  # let go again
            (prompt,) = [await store.queued_prompt(i) for i in guest.queued_ids]
            assert prompt is not None
            assert (prompt.state, prompt.turn) == ("completed", 2)
    starts = [r for r in runs(log) if r["event"] == "start"]
    assert [r["prompt"] for r in starts] == ["mine", "yours"]
    assert starts[0]["pid"] != starts[1]["pid"]  # two agents, one after the other


KEEPER = """
import sys
import anyio
import acp_adapters

async def main() -> None:
    async with acp_adapters.connect(
        command=[sys.executable, sys.argv[1]], cwd=sys.argv[2], store=sys.argv[3],
        thread="k", lease_seconds=1.0,
    ) as session:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(session.prompt, "sleep 3600")
            await anyio.sleep(0.5)
            print("running", flush=True)
            await anyio.sleep(3600)

anyio.run(main)
"""


def keeper_of(tmp_path: Path, db: Path) -> subprocess.Popen[str]:
    """A process that owns the thread ``k`` (a lease of 1 s), its turn running."""
    script = tmp_path / "keeper.py"
    script.write_text(KEEPER)
    keeper = subprocess.Popen(
        [sys.executable, str(script), str(AGENT), str(tmp_path), str(db)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert keeper.stdout is not None
    assert keeper.stdout.readline().strip() == "running"
    return keeper


async def test_a_lost_owner_s_turn_fails_and_the_queue_goes_on(tmp_path: Path, log: Path) -> None:
    db = tmp_path / "store.db"
    with keeper_of(tmp_path, db) as keeper:
        try:
            async with acp_adapters.connect(
                command=COMMAND, cwd=tmp_path, store=db, thread="k"
            ) as guest:
                assert isinstance(guest, GuestSession)
                assert guest.owner.owner.pid == keeper.pid
                async with anyio.create_task_group() as tasks:
                    results: list[Any] = []

                    async def ask() -> None:
                        results.append(await guest.prompt("after"))

                    tasks.start_soon(ask)
                    await wait_for(lambda: bool(guest.queued_ids))
                    keeper.send_signal(signal.SIGKILL)  # the owner dies mid-turn
                    keeper.wait()
                (turn,) = results
                assert said(turn.items) == ["done: after"]
                errors = [i for i in guest.timeline if i.kind == "error"]
                assert len(errors) == 1
                assert errors[0].turn == 1
                assert OWNER_LOST in str(errors[0].data)  # type: ignore[attr-defined]
        finally:
            if keeper.poll() is None:
                keeper.kill()
                keeper.wait()
    async with await open_store(db) as store:
        thread = await store.thread_named("k")
        assert thread is not None
        turns = await store.turns(thread.id)
        assert [(t.index, t.status) for t in turns] == [(1, "failed"), (2, "completed")]
        assert OWNER_LOST in (turns[0].error or "")


async def test_a_failed_turn_fails_the_guest_s_prompt(tmp_path: Path, log: Path) -> None:
    db = tmp_path / "store.db"
    async with acp_adapters.connect(
        command=COMMAND, cwd=tmp_path, store=db, thread="c", reconnect=False
    ) as owner:
        async with acp_adapters.connect(
            command=COMMAND, cwd=tmp_path, store=db, thread="c"
        ) as guest:
            with pytest.raises(QueuedTurnFailed) as failed:
                await guest.prompt("crash")
            assert failed.value.prompt.state == "failed"
            assert "exit" in (failed.value.prompt.error or "")
        assert owner.lease is not None


async def test_the_owner_s_own_waiting_prompt_is_held_not_queued(
    target: Any, name: str, tmp_path: Path, log: Path
) -> None:
    # A prompt the owner's process sends while its turn runs waits in the store as the
    # owner's (held), so that no one else claims it: it runs once, in the owner's turn.
    async with (
        await open_store(target) as store,
        acp_adapters.connect(command=COMMAND, cwd=tmp_path, store=store, thread=name) as owner,
        anyio.create_task_group() as tasks,
    ):
        tasks.start_soon(owner.prompt, "sleep 1 first")
        await wait_for(lambda: runs(log))
        tasks.start_soon(owner.prompt, "second")
        assert owner.thread is not None
        with anyio.fail_after(10):
            while not (waiting := await store.queued_prompts(owner.thread.id)):
                await anyio.sleep(0.02)
        assert [p.state for p in waiting] == ["held"]
        assert waiting[0].owner == owner.lease.owner.id  # type: ignore[union-attr]
    starts = [r["prompt"] for r in runs(log) if r["event"] == "start"]
    assert starts == ["sleep 1 first", "second"]


async def test_a_follower_until_idle_ends_a_lost_owner_s_turn(tmp_path: Path, log: Path) -> None:
    from acp_adapters.history.following import follow_items

    db = tmp_path / "store.db"
    with keeper_of(tmp_path, db) as keeper:
        keeper.send_signal(signal.SIGKILL)  # nothing queued: only a follower sees it
        keeper.wait()
    async with await open_store(db) as store:
        thread = await store.thread_named("k")
        assert thread is not None
        with anyio.fail_after(30):
            items = [item async for item in follow_items(store, thread.id, until_idle=True)]
        errors = [item for item in items if item["kind"] == "error"]
        assert errors
        assert OWNER_LOST in str(errors[-1]["data"])
        (turn,) = await store.turns(thread.id)
        assert (turn.status, turn.error) == ("failed", OWNER_LOST)
        assert await store.items(thread.id) == list({i["id"]: i for i in items}.values())


async def test_an_owner_cancelled_mid_queued_turn_still_shuts_down(
    tmp_path: Path, log: Path
) -> None:
    # The owner runs a prompt another process queued; the application cancels the session
    # meanwhile: the turn is cut short, the agent stopped, the thread let go.
    db = tmp_path / "store.db"
    async with await open_store(db) as store:
        with anyio.move_on_after(30) as scope:
            async with acp_adapters.connect(
                command=COMMAND, cwd=tmp_path, store=store, thread="c"
            ) as owner:
                assert owner.thread is not None
                queued = await store.enqueue(
                    owner.thread.id, [{"type": "text", "text": "sleep 60 x"}]
                )
                await wait_for(lambda: runs(log))
                scope.cancel()
                await anyio.sleep(30)
        assert scope.cancelled_caught
        (started,) = [r for r in runs(log) if r["event"] == "start"]
        with pytest.raises(ProcessLookupError):
            os.kill(started["pid"], 0)  # the agent is gone
        prompt = await store.queued_prompt(queued.id)
        assert prompt is not None
        assert prompt.state == "cancelled"
        assert await store.lease(owner.thread.id) is None
