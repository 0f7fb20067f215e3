"""The timeline rebuilt from a thread's event log equals its stored items: for generated
session traffic (a property) and for the recorded sessions of ``tests/data/captures``, each
committed event by event with the items the live projector changed, as a session does."""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pluggy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_adapters import Hooks, get_plugin_manager
from acp_adapters.capture.format import capture_values
from acp_adapters.history.rebuild import check_thread, rebuild_items
from acp_adapters.plugin.providers import ProviderRegistry
from acp_adapters.projection.projector import Projector
from acp_adapters.projection.traffic import Traffic, _entries
from acp_adapters.store import Commit, Store, open_store
from acp_adapters.timeline.items import TimelineItem

CAPTURES = Path(__file__).parent.parent / "data" / "captures"


class Committer:
    """What a live session writes: each event through the traffic reader, then one commit of
    the events and of the items the projector stored since the last commit."""

    def __init__(self, pm: pluggy.PluginManager) -> None:
        registry = ProviderRegistry.collect(pm)
        self.projector = Projector(Hooks(pm), registry.for_agent(None))
        self.traffic = Traffic(self.projector, registry)
        self._changed: dict[str, TimelineItem] = {}
        self.projector.on_item.subscribe(self._heard)
        self._session: str | None = None

    def _heard(self, item: TimelineItem) -> None:
        self._changed[item.id] = item

    def update(self, entries: Iterable[dict[str, Any]]) -> Commit:
        """One update: the entries taken in, and the commit that keeps them."""
        events = list(entries)
        for entry in events:
            self.traffic.entry(entry)
        self.projector.flush()  # streamed text, as a live session flushes it
        items = [item.model_dump(mode="json") for item in self._changed.values()]
        self._changed.clear()
        thread: dict[str, Any] = {}
        session = self.projector.state.session_id
        if session != self._session:
            thread["agent_session_id"] = self._session = session
        return Commit(events=events, items=items, thread=thread)

    def read_back(self, entries: Iterable[dict[str, Any]]) -> None:
        """Take in what a thread has stored already (a writer started again)."""
        for entry in entries:
            self.traffic.entry(entry)
        self.projector.flush()
        self._changed.clear()
        self._session = self.projector.state.session_id


# --- generated session traffic ----------------------------------------------------------------

#: Text the store must keep exactly: other than ASCII, a lone surrogate, a NUL, line breaks.
texts = st.text(
    alphabet=st.sampled_from(["a", "b", " ", "é", "✓", "𝄞", "\ud800", "\x00", "\n", "\u2028"]),
    max_size=6,
)


def _update(session: str, update: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session, "update": update},
    }


@st.composite
def session_traffic(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A session's traffic: initialize, session/new, then turns of chunks, thoughts, tool
    calls and their updates, plans, permission requests, file writes; each turn ended, or
    cancelled, or failed; perhaps the agent's exit."""
    session = "s-1"
    version = draw(st.sampled_from([1, 2]))
    clock = iter(range(1, 10_000))
    lines: list[dict[str, Any]] = []

    def out(message: dict[str, Any]) -> None:
        lines.append(
            {"dir": "client->agent", "t": float(next(clock)), "msg": {"jsonrpc": "2.0", **message}}
        )

    def back(message: dict[str, Any]) -> None:
        lines.append(
            {"dir": "agent->client", "t": float(next(clock)), "msg": {"jsonrpc": "2.0", **message}}
        )

    out({"id": 0, "method": "initialize", "params": {"protocolVersion": version}})
    back({"id": 0, "result": {"protocolVersion": version, "agentCapabilities": {}}})
    out({"id": 1, "method": "session/new", "params": {"cwd": "/work", "mcpServers": []}})
    back({"id": 1, "result": {"sessionId": session}})
    request_id = 100
    for turn in range(draw(st.integers(1, 3))):
        request_id += 1
        prompt_id = request_id
        out(
            {
                "id": prompt_id,
                "method": "session/prompt",
                "params": {"sessionId": session, "prompt": [{"type": "text", "text": draw(texts)}]},
            }
        )
        calls: list[str] = []
        for _ in range(draw(st.integers(0, 6))):
            step = draw(
                st.sampled_from(["chunk", "thought", "call", "call_update", "plan", "ask", "write"])
            )
            if step in ("chunk", "thought"):
                kind = "agent_message_chunk" if step == "chunk" else "agent_thought_chunk"
                back(
                    _update(
                        session,
                        {"sessionUpdate": kind, "content": {"type": "text", "text": draw(texts)}},
                    )
                )
            elif step == "call" or (step == "call_update" and not calls):
                call = f"call-{turn}-{len(calls)}"
                calls.append(call)
                back(
                    _update(
                        session,
                        {
                            "sessionUpdate": "tool_call",
                            "toolCallId": call,
                            "title": draw(texts),
                            "kind": draw(
                                st.sampled_from(["read", "edit", "execute", "search", "other"])
                            ),
                            "status": "pending",
                        },
                    )
                )
            elif step == "call_update":
                back(
                    _update(
                        session,
                        {
                            "sessionUpdate": "tool_call_update",
                            "toolCallId": draw(st.sampled_from(calls)),
                            "status": draw(st.sampled_from(["in_progress", "completed", "failed"])),
                            "content": [
                                {
                                    "type": "content",
                                    "content": {"type": "text", "text": draw(texts)},
                                }
                            ],
                        },
                    )
                )
            elif step == "plan":
                back(
                    _update(
                        session,
                        {
                            "sessionUpdate": "plan",
                            "entries": [
                                {"content": draw(texts), "priority": "medium", "status": "pending"}
                            ],
                        },
                    )
                )
            elif step == "ask":
                request_id += 1
                call = f"ask-{request_id}"
                back(
                    {
                        "id": request_id,
                        "method": "session/request_permission",
                        "params": {
                            "sessionId": session,
                            "toolCall": {"toolCallId": call, "title": draw(texts)},
                            "options": [{"optionId": "yes", "name": "Yes", "kind": "allow_once"}],
                        },
                    }
                )
                answer = draw(st.sampled_from(["selected", "cancelled"]))
                outcome = (
                    {"outcome": "selected", "optionId": "yes"}
                    if answer == "selected"
                    else {"outcome": "cancelled"}
                )
                out({"id": request_id, "result": {"outcome": outcome}})
            else:
                request_id += 1
                back(
                    {
                        "id": request_id,
                        "method": "fs/write_text_file",
                        "params": {
                            "sessionId": session,
                            "path": "/work/notes.txt",
                            "content": draw(texts),
                        },
                    }
                )
                out({"id": request_id, "result": None})
        ending = draw(st.sampled_from(["end_turn", "cancelled", "error"]))
        if ending == "error":
            back({"id": prompt_id, "error": {"code": -32603, "message": draw(texts)}})
        else:
            back({"id": prompt_id, "result": {"stopReason": ending}})
    if draw(st.booleans()):
        lines.append({"dir": "exit", "t": float(next(clock)), "code": 1, "stderr": draw(texts)})
    return lines


def updates_of(lines: list[dict[str, Any]], sizes: Iterator[int]) -> Iterator[list[dict[str, Any]]]:
    """The lines cut into updates of the given sizes (one event or a few, as they come)."""
    at = 0
    while at < len(lines):
        size = max(1, next(sizes, 1))
        yield lines[at : at + size]
        at += size


async def commit_all(
    store: Store, lines: list[dict[str, Any]], sizes: list[int], pm: pluggy.PluginManager
) -> str:
    thread = await store.create_thread(provider="generic", cwd="/work")
    committer = Committer(pm)
    for update in updates_of(lines, iter(sizes)):
        await store.commit(thread.id, committer.update(update))
    return thread.id


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=session_traffic(), sizes=st.lists(st.integers(1, 4), max_size=40))
def test_the_items_rebuilt_from_the_log_are_the_items_committed(
    lines: list[dict[str, Any]], sizes: list[int]
) -> None:
    pm = get_plugin_manager(load_entrypoints=False, environ={})

    async def main() -> None:
        with tempfile.TemporaryDirectory() as folder:
            async with await open_store(Path(folder) / "store.db") as store:
                thread_id = await commit_all(store, lines, sizes, pm)
                stored = await store.items(thread_id)
                events = await store.events(thread_id)
                assert [event.entry for event in events] == lines
                assert rebuild_items(events, pm=pm) == stored
                assert stored  # the session made items: the property is not empty
                assert await check_thread(store, thread_id, pm=pm)

    anyio.run(main)


# --- recorded sessions ------------------------------------------------------------------------


def capture_entries(path: Path) -> list[dict[str, Any]]:
    """A capture's entries as the traffic reader takes them in."""
    return list(_entries(path, []))


@pytest.mark.anyio
@pytest.mark.parametrize("capture", sorted(CAPTURES.glob("*.jsonl")), ids=lambda path: path.stem)
async def test_a_recorded_session_committed_event_by_event_rebuilds_to_its_items(
    capture: Path, tmp_path: Path, pm: pluggy.PluginManager
) -> None:
    lines = capture_entries(capture)
    assert lines
    assert all(isinstance(number, int) for number, _ in capture_values(capture))
    async with await open_store(tmp_path / "store.db") as store:
        thread_id = await commit_all(store, lines, [], pm)
        stored = await store.items(thread_id)
        assert rebuild_items(await store.events(thread_id), pm=pm) == stored
        assert await check_thread(store, thread_id, pm=pm)


@pytest.mark.anyio
async def test_a_thread_whose_items_differ_from_its_log_fails_the_check(
    tmp_path: Path, pm: pluggy.PluginManager
) -> None:
    lines = capture_entries(sorted(CAPTURES.glob("*.jsonl"))[0])
    async with await open_store(tmp_path / "store.db") as store:
        thread_id = await commit_all(store, lines, [], pm)
        assert await check_thread(store, thread_id, pm=pm)
        (first, *_) = await store.items(thread_id)
        await store.commit(thread_id, Commit(items=[{**first, "status": "failed"}]))
        assert not await check_thread(store, thread_id, pm=pm)
        # A lost event: the log no longer rebuilds to the items either.
        other = await commit_all(store, lines[:-1], [], pm)
        await store.commit(other, Commit(items=await store.items(thread_id)))
        assert not await check_thread(store, other, pm=pm)
