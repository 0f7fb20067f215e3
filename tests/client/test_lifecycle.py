"""The session lifecycle and several sessions on one agent: load, resume, list, close,
delete, fork, the prompt queue, each gated on what the agent offers."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import acp_adapters
from acp_adapters import (
    CapabilityError,
    LaunchSpec,
    PromptCancelled,
    Provider,
    Session,
    hookimpl,
)

pytestmark = pytest.mark.anyio

AGENT = Path(__file__).parent.parent / "agents" / "sessions_agent.py"


def agent(*flags: str) -> list[str]:
    return [sys.executable, str(AGENT), *flags]


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "agent-log.jsonl"


def received(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def methods(log: Path) -> list[str]:
    return [entry["method"] for entry in received(log)]


def texts(session: Session, kind: str = "assistant_message") -> list[str]:
    return [getattr(item, "text", "") for item in session.timeline.items if item.kind == kind]


async def wait_until(condition: Any) -> None:
    with anyio.fail_after(10):
        while not condition():
            await anyio.sleep(0.01)


def connect(log: Path, workspace: Path, *flags: str, **kwargs: Any) -> Any:
    return acp_adapters.connect(
        command=agent(*flags), cwd=workspace, env={"SESSIONS_AGENT_LOG": str(log)}, **kwargs
    )


# --- several sessions on one connection ---------------------------------------------------------


async def test_two_sessions_on_one_agent_each_have_their_own_timeline(
    workspace: Path, log: Path
) -> None:
    async with connect(log, workspace) as first:
        second = await first.agent.new_session()
        assert (first.session_id, second.session_id) == ("s-1", "s-2")
        assert second.agent is first.agent
        assert second.process is first.process
        async with anyio.create_task_group() as both:
            both.start_soon(first.prompt, "apples")
            both.start_soon(second.prompt, "pears")
        assert texts(first) == ["s-1: apples"]
        assert texts(second) == ["s-2: pears"]
        assert {item.session_id for item in second.timeline.items} == {"s-2"}
        assert texts(first, "user_message") == ["apples"]


async def test_a_session_in_another_folder_is_opened_there(
    workspace: Path, log: Path, tmp_path: Path
) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    async with connect(log, workspace) as first:
        second = await first.agent.new_session(cwd=str(other))
        assert second.workspace.cwd == other.resolve()
        assert first.workspace.cwd == workspace.resolve()
    news = [e["params"]["cwd"] for e in received(log) if e["method"] == "session/new"]
    assert news == [str(workspace.resolve()), str(other.resolve())]


async def test_a_session_opens_one_session_only(workspace: Path, log: Path) -> None:
    async with connect(log, workspace, "--offer", "load") as session:
        with pytest.raises(acp_adapters.AcpAdaptersError, match="opens another"):
            await session.new_session()
        with pytest.raises(acp_adapters.AcpAdaptersError, match="opens another"):
            await session.load_session("old-1")
        with pytest.raises(acp_adapters.AcpAdaptersError, match="open on this connection"):
            await session.agent.load_session("s-1")
    assert methods(log).count("session/new") == 1
    assert "session/load" not in methods(log)


# --- the prompt queue ---------------------------------------------------------------------------


async def test_prompts_sent_during_a_turn_wait_and_run_in_order(workspace: Path, log: Path) -> None:
    async with connect(log, workspace) as session:
        async with anyio.create_task_group() as prompts:
            for word in ("one", "two", "three"):
                prompts.start_soon(session.prompt, word)
                await anyio.sleep(0)
        assert texts(session, "user_message") == ["one", "two", "three"]
        turns = {item.text: item.turn for item in session.timeline.of_kind("assistant_message")}
        assert turns == {"s-1: one": 1, "s-1: two": 2, "s-1: three": 3}
    prompts_sent = [
        e["params"]["prompt"][0]["text"] for e in received(log) if e["method"] == "session/prompt"
    ]
    assert prompts_sent == ["one", "two", "three"]


async def test_cancel_ends_the_turn_and_drops_what_is_queued(workspace: Path, log: Path) -> None:
    async with connect(log, workspace) as session:
        outcomes: dict[str, Any] = {}

        async def run(word: str) -> None:
            try:
                outcomes[word] = (await session.prompt(word)).stop_reason
            except PromptCancelled as error:
                outcomes[word] = error

        async with anyio.create_task_group() as prompts:
            prompts.start_soon(run, "slow")
            await wait_until(lambda: "working" in texts(session))
            prompts.start_soon(run, "later")
            await wait_until(lambda: session.queued == 1)
            assert await session.cancel()
        assert outcomes["slow"] == "cancelled"
        assert isinstance(outcomes["later"], PromptCancelled)
        # The queue is free again.
        assert (await session.prompt("after")).stop_reason == "end_turn"
    sent = [
        e["params"]["prompt"][0]["text"] for e in received(log) if e["method"] == "session/prompt"
    ]
    assert sent == ["slow", "after"]


async def test_a_streamed_prompt_waits_its_turn_too(workspace: Path, log: Path) -> None:
    async with connect(log, workspace) as session:
        first = session.stream_prompt("one")
        second = session.stream_prompt("two")
        seen_second = [c.item async for c in second]
        seen_first = [c.item async for c in first]
    assert {i.turn for i in seen_first} == {1}
    assert {i.turn for i in seen_second} == {2}
    assert "s-1: two" in [getattr(i, "text", None) for i in seen_second]


# --- load and resume ----------------------------------------------------------------------------


async def test_load_marks_the_replayed_history_and_returns_once_it_is_over(
    workspace: Path, log: Path
) -> None:
    async with connect(log, workspace, "--offer", "load", new_session=False) as session:
        await session.load_session("old-1")
        history = session.timeline.items
        assert [(i.kind, i.replayed) for i in history] == [
            ("user_message", True),
            ("assistant_message", True),
            ("file_read", True),
        ]
        turn = await session.prompt("again")
        assert turn.index == 1
        assert all(not item.replayed for item in turn.items)
        assert texts(session) == ["hi there", "old-1: again"]


async def test_v2_load_is_a_resume_that_replays(workspace: Path, log: Path) -> None:
    async with connect(log, workspace, "--v2", new_session=False) as session:
        await session.load_session("old-1")
        assert [i.replayed for i in session.timeline.items] == [True, True, True]
    (resume,) = [e for e in received(log) if e["method"] == "session/resume"]
    assert resume["params"]["replayFrom"] == {"type": "start"}


@pytest.mark.parametrize(
    ("offer", "expected"),
    [("resume,load", "session/resume"), ("load", "session/load"), ("resume", "session/resume")],
)
async def test_connect_with_a_session_id_resumes_else_loads(
    workspace: Path, log: Path, offer: str, expected: str
) -> None:
    async with connect(log, workspace, "--offer", offer, session_id="old-1") as session:
        assert session.session_id == "old-1"
        assert (await session.prompt("hi")).stop_reason == "end_turn"
    opened = [m for m in methods(log) if m in ("session/new", "session/load", "session/resume")]
    assert opened == [expected]


async def test_an_agent_that_can_neither_resume_nor_load_is_told_nothing(
    workspace: Path, log: Path
) -> None:
    with pytest.raises(CapabilityError, match="neither"):
        async with connect(log, workspace, session_id="old-1"):
            pass
    assert methods(log) == ["initialize"]


async def test_load_and_resume_are_gated_on_the_agents_capabilities(
    workspace: Path, log: Path
) -> None:
    async with connect(log, workspace, new_session=False) as session:
        with pytest.raises(CapabilityError) as raised:
            await session.load_session("old-1")
        assert raised.value.method == "session/load"
        with pytest.raises(CapabilityError):
            await session.resume_session("old-1")
    assert methods(log) == ["initialize"]


# --- list, close, delete, fork ------------------------------------------------------------------


async def test_list_pages_through_the_agents_sessions(workspace: Path, log: Path) -> None:
    async with connect(log, workspace, "--offer", "list") as session:
        page = await session.list_sessions()
        assert [s["sessionId"] for s in page.sessions] == ["old-1", "old-2"]
        assert page.next_cursor == "2"
        rest = await session.list_sessions(page.next_cursor)
        assert [s["sessionId"] for s in rest.sessions] == ["old-3", "s-1"]
        assert rest.next_cursor is None
        everything = [s["sessionId"] async for s in session.agent.all_sessions()]
        assert everything == ["old-1", "old-2", "old-3", "s-1"]
    lists = [e["params"] for e in received(log) if e["method"] == "session/list"]
    assert lists[0] == {"cwd": str(workspace.resolve())}
    assert lists[1] == {"cwd": str(workspace.resolve()), "cursor": "2"}


async def test_list_is_not_sent_to_an_agent_that_does_not_offer_it(
    workspace: Path, log: Path
) -> None:
    async with connect(log, workspace) as session:
        with pytest.raises(CapabilityError):
            await session.list_sessions()
    assert "session/list" not in methods(log)


async def test_close_tells_the_agent_when_it_offers_it(workspace: Path, log: Path) -> None:
    async with connect(log, workspace, "--offer", "close") as session:
        other = await session.agent.new_session()
        assert await other.close() is True
        assert other.closed
        with pytest.raises(acp_adapters.AcpAdaptersError, match="closed"):
            await other.prompt("hello")
        # The agent and its other session go on.
        assert (await session.prompt("still here")).stop_reason == "end_turn"
    (close,) = [e for e in received(log) if e["method"] == "session/close"]
    assert close["params"] == {"sessionId": "s-2"}


async def test_nothing_is_served_for_a_closed_session(workspace: Path, log: Path) -> None:
    async with connect(log, workspace, "--offer", "close", policy="read-only") as session:
        other = await session.agent.new_session()
        await session.prompt("poke s-2")
        assert texts(session)[-1] == "read"
        await other.close()
        await session.prompt("poke s-2")
        assert texts(session)[-1] == "refused: the session is closed"
        assert "closed_session" in [p.kind for p in session.problems]


async def test_a_session_closed_then_loaded_again_goes_on_without_twice_its_history(
    workspace: Path, log: Path
) -> None:
    async with connect(log, workspace, "--offer", "close,load") as session:
        await session.prompt("apples")
        await session.close()
        again = await session.agent.load_session("s-1")
        assert again is session
        assert not again.closed
        assert texts(session, "user_message") == ["apples"]  # not replayed twice
        assert not any(item.replayed for item in session.timeline)
        turn = await session.prompt("pears")
        assert turn.index == 2
        assert texts(session) == ["s-1: apples", "s-1: pears"]
    assert methods(log).count("session/load") == 1


async def test_close_without_the_capability_only_closes_here(workspace: Path, log: Path) -> None:
    async with connect(log, workspace) as session:
        assert await session.close() is False
        assert session.closed
    assert "session/close" not in methods(log)


async def test_delete_is_gated_and_removes_the_session(workspace: Path, log: Path) -> None:
    async with connect(log, workspace, "--offer", "list,delete") as session:
        await session.agent.delete_session("old-2")
        listed = [s["sessionId"] async for s in session.agent.all_sessions()]
        assert listed == ["old-1", "old-3", "s-1"]
    async with connect(log, workspace) as session:
        with pytest.raises(CapabilityError):
            await session.agent.delete_session("old-1")


async def test_fork_is_unstable_and_opt_in(workspace: Path, log: Path) -> None:
    async with connect(log, workspace, "--offer", "fork") as session:
        with pytest.raises(CapabilityError, match="unstable"):
            await session.fork()
    assert "session/fork" not in methods(log)
    async with connect(log, workspace, "--offer", "fork", unstable=True) as session:
        await session.prompt("base")
        forked = await session.fork()
        assert forked.session_id == "fork-1"
        await forked.prompt("branch")
        assert texts(forked) == ["fork-1: branch"]
        assert texts(session) == ["s-1: base"]


async def test_a_recording_of_several_sessions_projects_each(
    workspace: Path, log: Path, tmp_path: Path
) -> None:
    record = tmp_path / "two.jsonl"
    async with connect(log, workspace, record=record) as first:
        second = await first.agent.new_session()
        await first.prompt("apples")
        await second.prompt("pears")
        live = {s.session_id: texts(s) for s in (first, second)}
    assert acp_adapters.capture_sessions(record) == ["s-1", "s-2"]
    for session_id, words in live.items():
        timeline = acp_adapters.project_capture(record, session_id=session_id)
        assert [getattr(i, "text", "") for i in timeline.of_kind("assistant_message")] == words
    default = acp_adapters.project_capture(record)
    assert [getattr(i, "text", "") for i in default.of_kind("assistant_message")] == live["s-1"]


# --- what the session reports, turn or not ------------------------------------------------------


async def test_changes_hears_a_mode_switch_outside_a_turn_and_ends_with_the_session(
    workspace: Path, log: Path
) -> None:
    async with connect(log, workspace, "--offer", "close") as session:
        changes = session.changes()
        await session.set_mode("code")
        first = await changes.__anext__()
        assert isinstance(first, acp_adapters.SessionChange)
        assert (first.kind, first.session["current_mode"]) == ("mode", "code")
        await session.prompt("hello")
        await session.close()
        rest = [change async for change in changes]
    session_kinds = {c.kind for c in rest if isinstance(c, acp_adapters.SessionChange)}
    assert session_kinds == {"turn"}  # the turn started and ended
    items = [c.item for c in rest if isinstance(c, acp_adapters.ItemChange)]
    assert "s-1: hello" in [getattr(item, "text", None) for item in items]


async def test_a_launch_that_does_not_inherit_gets_no_secret_of_this_process(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A registry agent's launch: a minimal base environment, its own variables, and what the
    application passes; nothing else of this process (an API key) reaches it."""
    monkeypatch.setenv("SECRET_TOKEN", "do-not-leak")

    class Stranger:
        @hookimpl
        def register_providers(self, register: Any) -> None:
            for inherit in (True, False):
                launch = LaunchSpec(
                    command=sys.executable,
                    args=(str(AGENT),),
                    env={"FROM_ENTRY": "entry"},
                    inherit_env=inherit,
                )
                register(Provider(id=f"stranger-{inherit}", name="Stranger", launch=launch))

    pm = acp_adapters.get_plugin_manager()
    pm.register(Stranger())
    seen: dict[bool, list[str]] = {}
    for inherit in (True, False):
        async with acp_adapters.connect(
            f"stranger-{inherit}", workspace, pm=pm, env={"GIVEN": "given"}
        ) as session:
            for name in ("SECRET_TOKEN", "FROM_ENTRY", "GIVEN", "PATH"):
                await session.prompt(f"env {name}")
            seen[inherit] = texts(session)
    assert seen[True][:3] == ["do-not-leak", "entry", "given"]
    assert seen[False][:3] == ["unset", "entry", "given"]
    assert seen[False][3] != "unset"  # the base keeps PATH
