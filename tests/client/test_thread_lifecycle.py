"""A named thread's life in the store: it stays in its folder unless moved, goes on with a
new agent session when the agent lost its own, is named as a person can type it, and is not
kept when its first session ends before any turn."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

import acp_adapters
from acp_adapters.client import AgentNotFoundError, enqueue
from acp_adapters.history.rebuild import rebuild_items
from acp_adapters.store import InvalidThreadName, ThreadMoved, open_store
from acp_adapters.transport import ConnectionClosed, RpcError

pytestmark = pytest.mark.anyio

AGENT = Path(__file__).parent.parent / "agents" / "sessions_agent.py"
_TIMES = ("created_at", "updated_at")


def agent(*flags: str) -> list[str]:
    return [sys.executable, str(AGENT), *flags]


def sent(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def untimed(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in item.items() if k not in _TIMES} for item in items]


async def prompted(
    db: Path, cwd: Path, env: dict[str, str], *prompts: str, flags: tuple[str, ...] = (), **kw: Any
) -> acp_adapters.Timeline:
    async with acp_adapters.connect(
        command=agent(*flags), cwd=cwd, env=env, store=db, thread="work", **kw
    ) as session:
        for prompt in prompts:
            await session.prompt(prompt)
        return session.timeline


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "agent-log.jsonl"


@pytest.fixture
def remembering(tmp_path: Path, log: Path) -> dict[str, str]:
    """The agent keeps its sessions from one process to the next."""
    return {"SESSIONS_AGENT_LOG": str(log), "SESSIONS_AGENT_STATE": str(tmp_path / "state.json")}


@pytest.fixture
def forgetting(log: Path) -> dict[str, str]:
    """The agent keeps none: each new process has lost the sessions of the one before."""
    return {"SESSIONS_AGENT_LOG": str(log)}


# --- a thread stays in its folder --------------------------------------------------------


async def test_a_thread_gone_on_with_in_another_folder_is_refused_before_its_agent_starts(
    tmp_path: Path, remembering: dict[str, str], log: Path
) -> None:
    db, here, there = tmp_path / "store.db", tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    await prompted(db, here, remembering, "one", flags=("--offer", "resume"))
    started = len(sent(log))
    with pytest.raises(ThreadMoved) as refused:
        await prompted(db, there, remembering, "two", flags=("--offer", "resume"))
    assert (refused.value.folder, refused.value.cwd) == (str(here), str(there))
    assert str(here) in str(refused.value)
    assert str(there) in str(refused.value)
    assert "Persistence(move=True)" in str(refused.value)
    assert len(sent(log)) == started  # no agent was started, nothing was sent
    async with await open_store(db) as store:
        (thread,) = await store.threads()
        assert thread.cwd == str(here)
        assert len(await store.turns(thread.id)) == 1


async def test_a_thread_moved_when_asked_is_kept_for_its_new_folder(
    tmp_path: Path, remembering: dict[str, str], log: Path
) -> None:
    db, here, there = tmp_path / "store.db", tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    await prompted(db, here, remembering, "one", flags=("--offer", "resume"))
    timeline = await prompted(
        db,
        there,
        remembering,
        "two",
        flags=("--offer", "resume"),
        persistence=acp_adapters.Persistence(move=True),
    )
    (resumed,) = [m for m in sent(log) if m["method"] == "session/resume"]
    assert resumed["params"]["cwd"] == str(there)
    notes = [i for i in timeline if i.kind == "notice"]
    assert [n.title for n in notes] == ["the session moved"]
    assert str(here) in (notes[0].text or "")
    async with await open_store(db) as store:
        (thread,) = await store.threads()
        assert thread.cwd == str(there)  # what `sessions list` shows
        # The note is in the log as what the traffic showed: the log rebuilds it.
        stored = await store.items(thread.id)
        assert untimed(rebuild_items(await store.events(thread.id))) == untimed(stored)
        assert [i["kind"] for i in stored].count("notice") == 1
    # And it goes on there now, without --move.
    await prompted(db, there, remembering, "three", flags=("--offer", "resume"))


async def test_a_link_to_the_threads_folder_is_its_folder(
    tmp_path: Path, remembering: dict[str, str]
) -> None:
    db, here = tmp_path / "store.db", tmp_path / "here"
    here.mkdir()
    (tmp_path / "link").symlink_to(here)
    await prompted(db, here, remembering, "one", flags=("--offer", "resume"))
    timeline = await prompted(
        db, tmp_path / "link", remembering, "two", flags=("--offer", "resume")
    )
    assert not [i for i in timeline if i.kind == "notice"]


# --- an agent that lost the session ------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "opened"),
    [(("--offer", "resume"), "session/resume"), (("--offer", "load"), "session/load")],
)
async def test_an_agent_that_lost_the_session_gets_a_new_one_and_the_thread_goes_on(
    workspace: Path,
    tmp_path: Path,
    forgetting: dict[str, str],
    log: Path,
    flags: tuple[str, ...],
    opened: str,
) -> None:
    db = tmp_path / "store.db"
    first = await prompted(db, workspace, forgetting, "one", flags=flags)
    second = await prompted(db, workspace, forgetting, "two", flags=flags)
    methods = [m["method"] for m in sent(log)]
    # The second process was asked for s-1, said it has none (-32002), and made a new one.
    assert methods.count(opened) == 1
    assert methods.count("session/new") == 2
    rows = [i.model_dump(mode="json") for i in second]
    assert [i.id for i in second][: len(first)] == [i.id for i in first]  # kept as it was
    assert [r["kind"] for r in rows] == [
        "user_message",
        "assistant_message",
        "notice",
        "user_message",
        "assistant_message",
    ]
    note = rows[2]
    assert note["title"] == "the agent no longer had the session"
    assert "no session s-1" in note["text"]
    assert [r["text"] for r in rows if r["kind"] == "user_message"] == ["one", "two"]
    async with await open_store(db) as store:
        (thread,) = await store.threads()
        assert [(t.index, t.status) for t in await store.turns(thread.id)] == [
            (1, "completed"),
            (2, "completed"),
        ]
        stored = await store.items(thread.id)
        assert untimed(stored) == untimed(rows)
        assert untimed(rebuild_items(await store.events(thread.id))) == untimed(stored)


async def test_a_session_the_application_names_is_not_replaced(
    workspace: Path, forgetting: dict[str, str]
) -> None:
    # `--resume ID` asks for that session: an agent without it is an error, not a new one.
    with pytest.raises(RpcError) as refused:
        async with acp_adapters.connect(
            command=agent("--offer", "resume"),
            cwd=workspace,
            env=forgetting,
            session_id="gone-1",
        ):
            pass
    assert refused.value.code == -32002


# --- names ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["", "   ", "work\x1b[2J", "a\u202eb", "line\nbreak"])
async def test_a_name_no_one_could_type_or_see_is_refused_before_anything_starts(
    workspace: Path, tmp_path: Path, forgetting: dict[str, str], log: Path, name: str
) -> None:
    db = tmp_path / "store.db"
    with pytest.raises(InvalidThreadName):
        async with acp_adapters.connect(
            command=agent(), cwd=workspace, env=forgetting, store=db, thread=name
        ):
            pass
    assert not db.exists()
    assert sent(log) == []


# --- a thread with no turn is not kept -----------------------------------------------------


async def _threads(db: Path) -> list[Any]:
    async with await open_store(db) as store:
        return await store.threads()


async def test_a_first_run_whose_agent_does_not_start_leaves_no_thread(
    workspace: Path, tmp_path: Path
) -> None:
    db = tmp_path / "store.db"
    with pytest.raises(AgentNotFoundError):
        async with acp_adapters.connect(
            command=["/no/such/agent"], cwd=workspace, store=db, thread="work"
        ):
            pass
    dying = [sys.executable, "-c", "import sys; sys.exit(3)"]  # before initialize
    with pytest.raises(ConnectionClosed):
        async with acp_adapters.connect(command=dying, cwd=workspace, store=db, thread="work"):
            pass
    assert await _threads(db) == []


async def test_a_first_session_that_ends_before_a_turn_leaves_no_thread(
    workspace: Path, tmp_path: Path, forgetting: dict[str, str]
) -> None:
    db = tmp_path / "store.db"

    class Refused(Exception):
        """A setting the application could not make (`run --model` the agent lacks)."""

    with pytest.raises(Refused):
        async with acp_adapters.connect(
            command=agent(), cwd=workspace, env=forgetting, store=db, thread="work"
        ):
            raise Refused
    assert await _threads(db) == []
    # Its name is free: the next run makes it, and with a turn it is kept.
    await prompted(db, workspace, forgetting, "one")
    assert [t.name for t in await _threads(db)] == ["work"]


async def test_a_thread_with_turns_is_kept_when_a_later_run_fails(
    workspace: Path, tmp_path: Path, forgetting: dict[str, str]
) -> None:
    db = tmp_path / "store.db"
    await prompted(db, workspace, forgetting, "one")
    with pytest.raises(AgentNotFoundError):
        async with acp_adapters.connect(
            command=["/no/such/agent"], cwd=workspace, store=db, thread="work"
        ):
            pass
    assert [t.name for t in await _threads(db)] == ["work"]


async def test_a_thread_a_prompt_was_queued_for_is_kept(
    workspace: Path, tmp_path: Path, forgetting: dict[str, str]
) -> None:
    # `sessions send` makes the thread with its prompt: it waits for whoever drives it.
    db = tmp_path / "store.db"
    await enqueue(db, "work", "later", command=agent(), cwd=workspace)
    with pytest.raises(AgentNotFoundError):
        async with acp_adapters.connect(
            command=["/no/such/agent"], cwd=workspace, store=db, thread="work"
        ):
            pass
    (thread,) = await _threads(db)
    async with await open_store(db) as store:
        assert [p.prompt for p in await store.queued_prompts(thread.id)] == [
            [{"type": "text", "text": "later"}]
        ]


async def test_after_a_crash_an_agent_that_lost_the_session_gets_a_new_one(
    workspace: Path, tmp_path: Path, forgetting: dict[str, str]
) -> None:
    db = tmp_path / "store.db"
    async with acp_adapters.connect(
        command=agent("--offer", "resume"), cwd=workspace, env=forgetting, store=db, thread="work"
    ) as session:
        await session.prompt("one")
        with pytest.raises(ConnectionClosed):
            await session.prompt("crash")  # the agent dies mid-turn, its sessions with it
        turn = await session.prompt("two")  # started again: it has no s-1 any more
        assert [i.text for i in turn.items if i.kind == "assistant_message"] == ["s-1: two"]
        notes = [i for i in session.timeline if i.kind == "notice"]
        assert [n.title for n in notes] == ["the agent no longer had the session"]
