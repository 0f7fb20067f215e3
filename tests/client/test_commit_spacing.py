"""A session's commits are spaced: an agent that streams fast costs the store a few commits a
second, every update still stored in order; a turn's start and end are not delayed."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import acp_adapters
from acp_adapters.client.persistence import _size_of
from acp_adapters.store import Commit, encoded_event, open_store

pytestmark = pytest.mark.anyio

SESSION = "spaced-session"
UPDATES = 120
RATE = 200.0  # updates a second: the turn streams for 0.6 s


def paced_capture(path: Path) -> Path:
    def line(direction: str, t: float, message: dict[str, Any]) -> str:
        return json.dumps({"dir": direction, "t": t, "msg": {"jsonrpc": "2.0", **message}})

    def chunk(n: int) -> dict[str, Any]:
        update = {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": f"{n} "},
        }
        return {"method": "session/update", "params": {"sessionId": SESSION, "update": update}}

    lines = [
        line("client->agent", 0.0, {"id": 0, "method": "initialize", "params": {}}),
        line("agent->client", 0.0, {"id": 0, "result": {"protocolVersion": 1}}),
        line("client->agent", 0.0, {"id": 1, "method": "session/new", "params": {}}),
        line("agent->client", 0.0, {"id": 1, "result": {"sessionId": SESSION}}),
        line("client->agent", 1.0, {"id": 2, "method": "session/prompt", "params": {}}),
        *(line("agent->client", 1.0 + n / RATE, chunk(n)) for n in range(UPDATES)),
        line(
            "agent->client", 1.0 + UPDATES / RATE, {"id": 2, "result": {"stopReason": "end_turn"}}
        ),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("interval", [0.2, 0.0])
async def test_a_fast_agent_makes_few_commits_and_every_update_is_stored(
    tmp_path: Path, interval: float
) -> None:
    capture = paced_capture(tmp_path / "paced.jsonl")
    store = await open_store(tmp_path / "store.db")
    starts: list[float] = []
    commit = store.commit

    async def counted(thread_id: str, batch: Commit) -> int:
        starts.append(time.monotonic())
        return await commit(thread_id, batch)

    store.commit = counted  # type: ignore[method-assign]
    command = [sys.executable, "-m", "acp_adapters.replay", "--match", "methods", "--speed", "1",
               str(capture)]  # fmt: skip
    async with acp_adapters.connect(
        command=command,
        cwd=tmp_path,
        store=store,
        persistence=acp_adapters.Persistence(commit_interval=interval),
    ) as session:
        began = time.monotonic()
        turn = await session.prompt("go")
        streamed = time.monotonic() - began
        thread = session.thread
    assert turn.stop_reason == "end_turn"
    events = await store.events(thread.id)
    messages = [e.entry["msg"] for e in events if "msg" in e.entry]  # checkpoints aside
    updates = [m["params"]["update"] for m in messages if "params" in m
               and m.get("method") == "session/update"]  # fmt: skip
    assert [u["content"]["text"] for u in updates] == [f"{n} " for n in range(UPDATES)]
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    (message,) = [i for i in await store.items(thread.id) if i["kind"] == "assistant_message"]
    assert message["text"] == "".join(f"{n} " for n in range(UPDATES))
    await store.close()
    if interval:
        # The interval between commits, but for a turn's start and end, and the last one.
        assert len(starts) <= streamed / interval + 4
    else:
        assert len(starts) > streamed / 0.2 + 4  # the case is there: unspaced, many more


async def test_commit_interval_is_checked(tmp_path: Path) -> None:
    for bad in (-1.0, float("nan"), 7200.0):
        with pytest.raises(ValueError, match="commit_interval"):
            async with acp_adapters.connect(
                command=["true"],
                cwd=tmp_path,
                persistence=acp_adapters.Persistence(commit_interval=bad),
            ):
                pass


def test_a_commit_s_size_is_its_events_and_the_text_of_its_items() -> None:
    event = encoded_event({"dir": "agent->client", "t": 1.0, "msg": {"n": 1}})
    item = {"id": "m", "kind": "assistant_message", "ordinal": 3, "text": "x" * 1000}
    assert _size_of(Commit(events=[event, event], items=[item])) == 2 * len(event) + 1 + 17 + 1000


async def test_a_backlog_goes_in_commits_of_a_bounded_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from acp_adapters.client import persistence

    monkeypatch.setattr(persistence, "MAX_COMMIT_EVENTS", 10)
    capture = paced_capture(tmp_path / "paced.jsonl")
    store = await open_store(tmp_path / "store.db")
    sizes: list[tuple[int, int]] = []
    commit = store.commit

    async def counted(thread_id: str, batch: Commit) -> int:
        sizes.append((len(batch.events), len(batch.items)))
        return await commit(thread_id, batch)

    store.commit = counted  # type: ignore[method-assign]
    command = [sys.executable, "-m", "acp_adapters.replay", "--match", "methods", "--speed", "1",
               str(capture)]  # fmt: skip
    async with acp_adapters.connect(
        command=command,
        cwd=tmp_path,
        store=store,
        persistence=acp_adapters.Persistence(commit_interval=0.3),
    ) as session:
        await session.prompt("go")
        thread = session.thread
    events = await store.events(thread.id)
    assert max(count for count, _ in sizes) == 10  # the case is there: a backlog was split
    texts = [e.entry["msg"]["params"]["update"]["content"]["text"] for e in events
             if e.entry.get("msg", {}).get("method") == "session/update"]  # fmt: skip
    assert texts == [f"{n} " for n in range(UPDATES)]
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    (message,) = [i for i in await store.items(thread.id) if i["kind"] == "assistant_message"]
    assert message["text"] == "".join(f"{n} " for n in range(UPDATES))
    await store.close()
