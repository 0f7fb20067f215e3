"""The session lifecycle with real agents (``tox -e peers``): list, close, resume, load,
and two sessions on one agent process.

Each step runs where the agent's ``initialize`` answer offers it
(``session.agent.offers(method)``), and is skipped, saying so, where it does not. The
model (the fake server) answers each prompt with a text of its own, so a timeline
shows whose turn is whose; that the agent got its history back shows in what it sent
its model: the earlier prompt and answer, in the call of the later prompt.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_adapters import AcpAdaptersError, Session
from peers.fake_model_server import FakeModelServer, Text
from peers.peer_agents import PEERS, PeerAgent

pytestmark = [pytest.mark.peers, pytest.mark.anyio]

PROMPTS = (
    "the first prompt, of apples",
    "the second prompt, of pears",
    "the third prompt, of plums",
)
ANSWERS = ("apples answered", "pears answered", "plums answered")
TURN_SECONDS = 120


def model(agent: PeerAgent) -> Any:
    return agent.script(PROMPTS, [[Text(answer)] for answer in ANSWERS])


def require(session: Session, *methods: str) -> None:
    """Skip unless the agent's initialize answer offers each method."""
    for method in methods:
        if not session.agent.offers(method):
            pytest.skip(
                f"{session.provider.id} (v{session.version}) does not offer {method}: "
                f"its agentCapabilities are {session.agent.agent_capabilities}"
            )


def said(session: Session, kind: str) -> list[str]:
    return [item.text for item in session.timeline.of_kind(kind)]  # type: ignore[union-attr]


def check_own_turn(session: Session, prompt: str, answer: str) -> None:
    """The session's live items are its prompt and the model's answer to it, once each."""
    assert said(session, "user_message") == [prompt]
    (reply,) = said(session, "assistant_message")
    assert answer in reply
    assert not [item for item in session.timeline if item.replayed]


def call_of(server: FakeModelServer, agent: PeerAgent, prompt: str) -> list[str]:
    """The turn calls the agent made to its model for ``prompt``, as JSON text."""
    calls = [json.dumps(r.body) for r in server.model_requests if agent.is_turn_call(r.body)]
    return [call for call in calls if prompt in call]


def remembered(server: FakeModelServer, agent: PeerAgent, later: str, *earlier: str) -> bool:
    """Whether a call for the later prompt carried the earlier prompts and answers."""
    return any(all(text in call for text in earlier) for call in call_of(server, agent, later))


@pytest.mark.parametrize("agent", PEERS)
async def test_a_session_listed_closed_and_opened_again(
    connect: Any, agents_bin: Path, workspace: Path, home: Path, agent: PeerAgent
) -> None:
    with FakeModelServer(model(agent)) as server:
        async with agent.connect(connect, workspace, agents_bin, home, server) as first:
            require(first, "session/list", "session/close")
            if not (first.agent.offers("session/resume") or first.agent.offers("session/load")):
                pytest.skip(f"{agent.provider} offers neither session/resume nor session/load")
            session_id = first.session_id
            assert session_id is not None
            with anyio.fail_after(TURN_SECONDS):
                await first.prompt(PROMPTS[0])
            listed = [entry async for entry in first.agent.all_sessions()]
            (entry,) = [e for e in listed if e["sessionId"] == session_id]
            assert Path(entry["cwd"]) == workspace
            page = await first.list_sessions()
            assert session_id in [e["sessionId"] for e in page.sessions]
            assert await first.close() is True  # the agent was told: session/close
            assert first.closed
            with pytest.raises(AcpAdaptersError, match="closed"):
                await first.prompt(PROMPTS[1])
            resumed = first.agent.offers("session/resume")
        check_own_turn(first, PROMPTS[0], ANSWERS[0])

        # Another agent process, the same home: connect(session_id=) opens it again.
        async with agent.connect(
            connect, workspace, agents_bin, home, server, session_id=session_id
        ) as second:
            assert second.session_id == session_id
            with anyio.fail_after(TURN_SECONDS):
                turn = await second.prompt(PROMPTS[1])
            assert turn.stop_reason == "end_turn"
            assert turn.index == 1
        if resumed:  # resumed: no history replayed, only the new turn
            check_own_turn(second, PROMPTS[1], ANSWERS[1])
        else:  # loaded: the history, replayed, then the new turn
            live = [item for item in second.timeline if not item.replayed]
            assert [getattr(i, "text", None) for i in live][:1] == [PROMPTS[1]]
        # The agent had the session's history back: its model saw the first turn.
        assert remembered(server, agent, PROMPTS[1], PROMPTS[0], ANSWERS[0])


@pytest.mark.parametrize("agent", PEERS)
async def test_a_loaded_session_replays_its_history(
    connect: Any, agents_bin: Path, workspace: Path, home: Path, agent: PeerAgent
) -> None:
    with FakeModelServer(model(agent)) as server:
        async with agent.connect(connect, workspace, agents_bin, home, server) as first:
            # v1: session/load; v2 has none, and loads with a resume replaying from the start.
            require(first, "session/resume" if first.version == 2 else "session/load")
            session_id = first.session_id
            with anyio.fail_after(TURN_SECONDS):
                await first.prompt(PROMPTS[0])
                await first.prompt(PROMPTS[1])

        async with agent.connect(
            connect, workspace, agents_bin, home, server, new_session=False
        ) as second:
            assert session_id is not None
            with anyio.fail_after(TURN_SECONDS):
                await second.load_session(session_id)
            # load_session returned once the replay was over: the history is there.
            replayed = list(second.timeline)
            with anyio.fail_after(TURN_SECONDS):
                turn = await second.prompt(PROMPTS[2])
        assert replayed, "the agent replayed nothing"
        assert all(item.replayed and item.turn == 0 for item in replayed)
        assert said(second, "user_message") == list(PROMPTS)
        answers = said(second, "assistant_message")
        assert len(answers) == 3
        for answer, expected in zip(answers, ANSWERS, strict=True):
            assert expected in answer
        # The new turn is live, turn 1, and not a replay; the replay is not repeated in it.
        assert turn.index == 1
        assert [i for i in second.timeline if not i.replayed] == list(turn.items)
        assert getattr(turn.items[0], "text", None) == PROMPTS[2]
        assert remembered(server, agent, PROMPTS[2], PROMPTS[0], ANSWERS[1])


@pytest.mark.parametrize("agent", PEERS)
async def test_two_sessions_on_one_agent_process(
    connect: Any, agents_bin: Path, workspace: Path, home: Path, agent: PeerAgent
) -> None:
    with FakeModelServer(model(agent)) as server:
        async with agent.connect(connect, workspace, agents_bin, home, server) as first:
            second = await first.agent.new_session()
            if agent.provider == "claude":
                await second.set_mode("default")
            assert second.agent is first.agent
            assert second.session_id not in (None, first.session_id)
            with anyio.fail_after(TURN_SECONDS):
                async with anyio.create_task_group() as both:
                    both.start_soon(first.prompt, PROMPTS[0])
                    both.start_soon(second.prompt, PROMPTS[1])
            if first.agent.offers("session/list"):
                listed = {entry["sessionId"] async for entry in first.agent.all_sessions()}
                assert {first.session_id, second.session_id} <= listed
        check_own_turn(first, PROMPTS[0], ANSWERS[0])
        check_own_turn(second, PROMPTS[1], ANSWERS[1])
        assert {item.session_id for item in first.timeline} == {first.session_id}
        assert {item.session_id for item in second.timeline} == {second.session_id}
        # Each of the agent's sessions kept its own context.
        assert call_of(server, agent, PROMPTS[0])
        assert call_of(server, agent, PROMPTS[1])
        assert not remembered(server, agent, PROMPTS[0], PROMPTS[1])
        assert not remembered(server, agent, PROMPTS[1], PROMPTS[0])


@pytest.mark.parametrize("agent", PEERS)
async def test_a_session_closed_then_loaded_on_one_connection(
    connect: Any, agents_bin: Path, workspace: Path, home: Path, agent: PeerAgent
) -> None:
    with FakeModelServer(model(agent)) as server:
        async with agent.connect(connect, workspace, agents_bin, home, server) as first:
            require(first, "session/close")
            require(first, "session/resume" if first.version == 2 else "session/load")
            session_id = first.session_id
            assert session_id is not None
            with anyio.fail_after(TURN_SECONDS):
                await first.prompt(PROMPTS[0])
            assert await first.close() is True
            with anyio.fail_after(TURN_SECONDS):
                loaded = await first.agent.load_session(session_id)
            # The session closed here is opened again: the same one, its timeline going on,
            # what the agent replays of it not added twice.
            assert loaded is first
            assert not loaded.closed
            problems = [p for p in first.agent.problems if p.kind == "closed_session"]
            assert not problems, problems
            assert said(loaded, "user_message") == [PROMPTS[0]]
            assert not any(item.replayed for item in loaded.timeline)
            with anyio.fail_after(TURN_SECONDS):
                turn = await loaded.prompt(PROMPTS[1])
            assert turn.index == 2
            assert said(loaded, "user_message") == [PROMPTS[0], PROMPTS[1]]
