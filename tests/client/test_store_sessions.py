"""Sessions kept in a store: recorded as they go, and a thread that goes on after its
process ended (resumed, else loaded, without its history twice)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import acp_adapters
from acp_adapters.client.persistence import _plain_text
from acp_adapters.history.rebuild import rebuild_items
from acp_adapters.store import Commit, Store, StoreError
from acp_adapters.store.open import open_store
from store.postgres_server import postgres_server, postgres_url  # noqa: F401  (fixtures)

pytestmark = pytest.mark.anyio

AGENT = Path(__file__).parent.parent / "agents" / "sessions_agent.py"
_TIMES = ("created_at", "updated_at")


def agent(*flags: str) -> list[str]:
    return [sys.executable, str(AGENT), *flags]


def texts(items: list[dict[str, Any]], kind: str) -> list[str]:
    return [i["text"] for i in items if i["kind"] == kind]


def sent(log: Path) -> list[str]:
    return [json.loads(line)["method"] for line in log.read_text().splitlines()]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        "SESSIONS_AGENT_LOG": str(tmp_path / "log.jsonl"),
        "SESSIONS_AGENT_STATE": str(tmp_path / "agent-state.json"),
    }


async def run(
    store: Any, workspace: Path, env: dict[str, str], flags: tuple[str, ...], *prompts: str
) -> acp_adapters.Timeline:
    async with acp_adapters.connect(
        command=agent(*flags), cwd=workspace, env=env, store=store, thread="work"
    ) as session:
        for prompt in prompts:
            await session.prompt(prompt)
        return session.timeline


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """A store to keep sessions in: a SQLite file, or a database of a PostgreSQL server the
    tests start (skipped, with the reason, where none can be had)."""
    if request.param == "sqlite":
        return tmp_path / "store.db"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.mark.parametrize(
    ("flags", "opened"),
    [(("--offer", "resume,load"), "session/resume"), (("--offer", "load"), "session/load")],
)
async def test_a_named_thread_survives_its_process(
    workspace: Path, env: dict[str, str], flags: tuple[str, ...], opened: str, target: Any
) -> None:
    db = target
    async with await open_store(db) as fresh:  # a database the tests share: start clean
        for old in await fresh.threads():
            await fresh.delete_thread(old.id)
    first = await run(db, workspace, env, flags, "one")
    second = await run(db, workspace, env, flags, "two")
    assert sent(Path(env["SESSIONS_AGENT_LOG"])).count(opened) == 1
    # The thread goes on: its first turn once (a load's replay is not added again), then
    # the second, the ids and ordinals of the first kept.
    rows = [i.model_dump(mode="json") for i in second]
    assert texts(rows, "user_message") == ["one", "two"]
    assert texts(rows, "assistant_message") == ["s-1: one", "s-1: two"]
    assert [i.id for i in second][: len(first)] == [i.id for i in first]
    assert not any(i.replayed for i in second)
    async with await open_store(db) as store:
        (thread,) = await store.threads()
        assert (thread.name, thread.agent_session_id) == ("work", "s-1")
        stored = await store.items(thread.id)
        assert [{k: v for k, v in i.items() if k not in _TIMES} for i in stored] == [
            {k: v for k, v in r.items() if k not in _TIMES} for r in rows
        ]
        # The log rebuilds the thread's timeline, times and all.
        assert rebuild_items(await store.events(thread.id)) == stored
        turns = await store.turns(thread.id)
        assert [(t.index, t.status) for t in turns] == [(1, "completed"), (2, "completed")]


async def test_a_turn_its_process_left_running_is_failed_when_the_thread_goes_on(
    workspace: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    db = tmp_path / "store.db"
    flags = ("--offer", "resume")
    with anyio.move_on_after(30):
        async with (
            acp_adapters.connect(
                command=agent(*flags), cwd=workspace, env=env, store=db, thread="work"
            ) as session,
            anyio.create_task_group() as tasks,
        ):
            tasks.start_soon(session.prompt, "slow")
            with anyio.fail_after(10):
                while "working" not in [getattr(i, "text", "") for i in session.timeline]:
                    await anyio.sleep(0.01)
            tasks.cancel_scope.cancel()  # the application stops mid-turn
    timeline = await run(db, workspace, env, flags, "again")
    errors = [i for i in timeline if i.kind == "error"]
    assert len(errors) == 1
    assert "mid-turn" in str(errors[0].data)  # type: ignore[union-attr]
    assert [i.turn for i in timeline if i.kind == "user_message"] == [1, 2]
    async with await open_store(db) as store:
        (thread,) = await store.threads()
        assert [(t.index, t.status) for t in await store.turns(thread.id)] == [
            (1, "failed"),
            (2, "completed"),
        ]


class FailingStore(Store):
    """A store whose first commits fail (a disk full, a database gone), then recover."""

    def __init__(self, inner: Store, failures: int) -> None:
        self.inner, self.failures = inner, failures
        self.location = inner.location

    async def commit(self, thread_id: str, commit: Commit) -> int:
        if self.failures:
            self.failures -= 1
            raise StoreError("the disk is full")
        return await self.inner.commit(thread_id, commit)

    async def create_thread(self, **kwargs: Any) -> Any:
        return await self.inner.create_thread(**kwargs)

    async def thread(self, thread_id: str) -> Any:
        return await self.inner.thread(thread_id)

    async def thread_named(self, name: str) -> Any:
        return await self.inner.thread_named(name)

    async def threads(self) -> Any:
        return await self.inner.threads()

    async def update_thread(self, thread_id: str, **fields: Any) -> Any:
        return await self.inner.update_thread(thread_id, **fields)

    async def delete_thread(self, thread_id: str) -> None:
        await self.inner.delete_thread(thread_id)

    async def events(self, thread_id: str, *, after: int = 0) -> Any:
        return await self.inner.events(thread_id, after=after)

    async def items(self, thread_id: str) -> Any:
        return await self.inner.items(thread_id)

    async def turns(self, thread_id: str) -> Any:
        return await self.inner.turns(thread_id)

    def follow(self, thread_id: str, *, after: int = 0) -> Any:
        return self.inner.follow(thread_id, after=after)

    @property
    def schema_version(self) -> int:
        return self.inner.schema_version

    async def close(self) -> None:
        await self.inner.close()


def _passed_on(name: str) -> Any:
    def call(self: FailingStore, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.inner, name)(*args, **kwargs)

    return call


# The queue and the leases: as the store it wraps has them.
for _name in sorted(Store.__abstractmethods__ - set(vars(FailingStore))):
    setattr(FailingStore, _name, _passed_on(_name))
FailingStore.__abstractmethods__ = frozenset()


async def test_a_store_that_fails_does_not_stop_the_session_and_catches_up(
    workspace: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    errors: list[StoreError] = []
    async with await open_store(tmp_path / "store.db") as inner:
        store = FailingStore(inner, failures=3)
        async with acp_adapters.connect(
            command=agent(),
            cwd=workspace,
            env=env,
            store=store,
            persistence=acp_adapters.Persistence(on_store_error=errors.append),
        ) as session:
            turn = await session.prompt("hello")
            assert turn.stop_reason == "end_turn"  # the session went on
            live = [i.model_dump(mode="json") for i in session.timeline]
        assert [str(e) for e in errors] == ["the disk is full"] * 3
        (thread,) = await inner.threads()
        assert [i["id"] for i in await inner.items(thread.id)] == [i["id"] for i in live]
        assert rebuild_items(await inner.events(thread.id)) == await inner.items(thread.id)


def test_a_title_every_backend_can_hold() -> None:
    """An agent's title with a NUL or a lone surrogate (which PostgreSQL's text refuses) is
    kept with U+FFFD in their place, and cut at 1,000 characters."""
    assert _plain_text("fix\x00the \ud800parser") == "fix\ufffdthe \ufffdparser"
    assert _plain_text("x" * 5000) == "x" * 1000
    assert _plain_text(None) is None


KEEPER = """
import sys
import anyio
import acp_adapters

async def main() -> None:
    command = [sys.executable, sys.argv[1], "--offer", "resume"]
    async with acp_adapters.connect(
        command=command, cwd=sys.argv[2], store=sys.argv[3], thread="work", lease_seconds=0.5
    ) as session:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(session.prompt, "slow")
            while "working" not in [getattr(i, "text", "") for i in session.timeline]:
                await anyio.sleep(0.01)
            tasks.start_soon(session.prompt, "later")
            while not await session.thread_queue():
                await anyio.sleep(0.01)
            print("queued", flush=True)
            await anyio.sleep(3600)

anyio.run(main)
"""


async def test_a_queued_prompt_survives_the_process_and_runs_when_the_thread_goes_on(
    workspace: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    """The process is killed (SIGKILL) while a prompt waits for the running turn: the
    thread goes on in a new process, the turn it left running fails, the prompt runs."""
    import os
    import signal
    import subprocess

    db = tmp_path / "store.db"
    script = tmp_path / "keeper.py"
    script.write_text(KEEPER)
    with subprocess.Popen(
        [sys.executable, str(script), str(AGENT), str(workspace), str(db)],
        stdout=subprocess.PIPE,
        env={**os.environ, **env},
        text=True,
    ) as keeper:
        try:
            assert keeper.stdout is not None
            assert keeper.stdout.readline().strip() == "queued"
        finally:
            keeper.send_signal(signal.SIGKILL)
            keeper.wait()
    await anyio.sleep(0.6)  # its lease expires: the thread is anyone's
    async with acp_adapters.connect(
        command=agent("--offer", "resume"), cwd=workspace, env=env, store=db, thread="work"
    ) as session:
        (restored,) = session.restored_turns
        said = [c.item for c in [change async for change in restored]]
        assert "s-1: later" in [getattr(i, "text", None) for i in said]
        assert await session.thread_queue() == []
        rows = [i.model_dump(mode="json") for i in session.timeline]
    assert texts(rows, "user_message") == ["slow", "later"]
    assert [i["kind"] for i in rows].count("error") == 1  # the turn the kill left running


async def test_a_store_that_cannot_be_opened_is_reported_and_the_session_runs(
    workspace: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    errors: list[StoreError] = []
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    async with acp_adapters.connect(
        command=agent(),
        cwd=workspace,
        env=env,
        store=blocked / "store.db",
        persistence=acp_adapters.Persistence(on_store_error=errors.append),
    ) as session:
        assert (await session.prompt("hello")).stop_reason == "end_turn"
        assert session.thread is None
    (error,) = errors
    assert str(blocked) in str(error)
    with pytest.raises(StoreError):
        async with acp_adapters.connect(
            command=agent(), cwd=workspace, env=env, store=blocked / "store.db"
        ):
            pass


async def test_an_agent_that_crashes_mid_turn_leaves_the_turn_failed_with_why(
    workspace: Path, tmp_path: Path
) -> None:
    fake = Path(__file__).parent.parent / "agents" / "fake_agent.py"
    db = tmp_path / "store.db"
    with pytest.raises(acp_adapters.transport.ConnectionClosed):
        async with acp_adapters.connect(
            command=[sys.executable, str(fake), "crash"], cwd=workspace, store=db, thread="t"
        ) as session:
            await session.prompt("go")
    async with await open_store(db) as store:
        (thread,) = await store.threads()
        (turn,) = await store.turns(thread.id)
        assert turn.status == "failed"
        assert turn.stop_reason == "agent_exited"
        assert turn.error is not None
        assert "the agent exited" in turn.error
        assert rebuild_items(await store.events(thread.id)) == await store.items(thread.id)


async def test_the_database_going_away_mid_session_delays_the_commits_not_the_session(
    workspace: Path,
    env: dict[str, str],
    postgres_server: Any,  # noqa: F811  (the fixture imported above)
) -> None:
    """PostgreSQL stops between two turns: the second turn runs, the failures reach the
    application, and once the server is back everything is committed."""
    url = postgres_server.create_database()
    errors: list[StoreError] = []
    async with acp_adapters.connect(
        command=agent(),
        cwd=workspace,
        env=env,
        store=url,
        thread="t",
        persistence=acp_adapters.Persistence(on_store_error=errors.append),
    ) as session:
        await session.prompt("one")
        await session.thread_queue()  # a round trip: what came before is in the store
        postgres_server.stop()
        try:
            assert (await session.prompt("two")).stop_reason == "end_turn"
            with anyio.fail_after(30):
                while not errors:
                    await anyio.sleep(0.05)
        finally:
            postgres_server.start()
        live = [i.model_dump(mode="json") for i in session.timeline]
    assert all(url.split("@")[-1].split("/")[0] in str(e) for e in errors)
    async with await open_store(url) as store:
        (thread,) = await store.threads()
        assert [i["id"] for i in await store.items(thread.id)] == [i["id"] for i in live]
        assert [t.status for t in await store.turns(thread.id)] == ["completed", "completed"]
        assert rebuild_items(await store.events(thread.id)) == await store.items(thread.id)


async def test_after_the_agent_crashed_the_next_prompt_starts_it_again_and_goes_on(
    workspace: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    db = tmp_path / "store.db"
    async with acp_adapters.connect(
        command=agent("--offer", "resume"), cwd=workspace, env=env, store=db, thread="t"
    ) as session:
        await session.prompt("one")
        first = session.process.process.pid
        with pytest.raises(acp_adapters.transport.ConnectionClosed):
            await session.prompt("crash")
        turn = await session.prompt("two")  # the agent is started again, the session resumed
        assert turn.stop_reason == "end_turn"
        assert session.process.process.pid != first
        rows = [i.model_dump(mode="json") for i in session.timeline]
    assert texts(rows, "user_message") == ["one", "crash", "two"]
    assert texts(rows, "assistant_message")[-1] == "s-1: two"
    assert [r["turn"] for r in rows if r["kind"] == "user_message"] == [1, 2, 3]
    methods = sent(Path(env["SESSIONS_AGENT_LOG"]))
    assert methods.count("initialize") == 2
    assert methods.count("session/resume") == 1
    async with await open_store(db) as store:
        (thread,) = await store.threads()
        assert [t.status for t in await store.turns(thread.id)] == [
            "completed",
            "failed",
            "completed",
        ]
        assert rebuild_items(await store.events(thread.id)) == await store.items(thread.id)


async def test_a_full_store_delays_the_commits_and_they_resume_when_there_is_room(
    workspace: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    """SQLite's own "database or disk is full" (its page count capped where it is): the
    session goes on, the failures reach the application, and once there is room again
    everything is committed."""
    errors: list[StoreError] = []
    async with await open_store(tmp_path / "store.db") as store:

        def cap(connection: Any, pages: int | None) -> None:
            if pages is None:
                pages = connection.execute("PRAGMA page_count").fetchone()[0]
            connection.execute(f"PRAGMA max_page_count = {pages}")

        async with acp_adapters.connect(
            command=agent(),
            cwd=workspace,
            env=env,
            store=store,
            persistence=acp_adapters.Persistence(on_store_error=errors.append),
        ) as session:
            await session.prompt("one")
            await session.thread_queue()  # what came before is in the store
            await store._run(cap, None)  # type: ignore[attr-defined]
            big = "x" * 200_000
            assert (await session.prompt(big)).stop_reason == "end_turn"
            with anyio.fail_after(30):
                while not errors:
                    await anyio.sleep(0.05)
            await store._run(cap, 1_000_000)  # type: ignore[attr-defined]
            live = [i.model_dump(mode="json") for i in session.timeline]
        assert "full" in str(errors[0])
        (thread,) = await store.threads()
        assert [i["id"] for i in await store.items(thread.id)] == [i["id"] for i in live]
        assert texts(await store.items(thread.id), "user_message") == ["one", big]
