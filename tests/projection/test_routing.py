"""The router decides once whose each event of a connection's traffic is.

A live connection routes to one reader per session; a capture read for one session routes to
that reader alone. Both must give a session the same timeline: a property over interleavings
of two sessions' traffic, and the decisions themselves case by case.
"""

from __future__ import annotations

from typing import Any

import pluggy
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_adapters import Hooks, ProviderRegistry, project_capture
from acp_adapters.capture.format import request_key
from acp_adapters.plugin.manager import get_plugin_manager
from acp_adapters.projection.projector import Projector
from acp_adapters.projection.routing import Router
from acp_adapters.projection.traffic import Traffic


def to_agent(message: dict[str, Any]) -> dict[str, Any]:
    return {"dir": "client->agent", "t": 1.0, "msg": {"jsonrpc": "2.0", **message}}


def to_client(message: dict[str, Any]) -> dict[str, Any]:
    return {"dir": "agent->client", "t": 1.0, "msg": {"jsonrpc": "2.0", **message}}


def said(session: str, text: str) -> dict[str, Any]:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    return to_client(
        {"method": "session/update", "params": {"sessionId": session, "update": update}}
    )


OPENING = [
    to_agent({"id": 0, "method": "initialize", "params": {"protocolVersion": 1}}),
    to_client({"id": 0, "result": {"protocolVersion": 1, "agentCapabilities": {}}}),
    to_agent({"id": 1, "method": "session/new", "params": {"cwd": "/a", "mcpServers": []}}),
    to_client({"id": 1, "result": {"sessionId": "a"}}),
    to_agent({"id": 2, "method": "session/new", "params": {"cwd": "/b", "mcpServers": []}}),
    to_client({"id": 2, "result": {"sessionId": "b"}}),
]


def turn_of(session: str, prompt_id: int, texts: list[str]) -> list[dict[str, Any]]:
    prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}
    return [
        to_agent({"id": prompt_id, "method": "session/prompt", "params": prompt}),
        *(said(session, text) for text in texts),
        to_client({"id": prompt_id, "result": {"stopReason": "end_turn"}}),
    ]


def reader(pm: pluggy.PluginManager, session_id: str | None = None) -> Traffic:
    registry = ProviderRegistry.collect(pm)
    return Traffic(Projector(Hooks(pm), registry.get("acp")), registry, session_id=session_id)


def texts(traffic: Traffic) -> list[tuple[str, str]]:
    return [
        (item.kind, str(getattr(item, "text", "")))
        for item in traffic.projector.timeline()
        if item.kind in ("user_message", "assistant_message")
    ]


def interleave(first: list[Any], second: list[Any], picks: list[bool]) -> list[Any]:
    """The two lists' lines merged in order, ``picks`` choosing which goes next."""
    merged, left, right = [], list(first), list(second)
    for pick in picks:
        if pick and left:
            merged.append(left.pop(0))
        elif right:
            merged.append(right.pop(0))
    return [*merged, *left, *right]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.text("xyz", min_size=1, max_size=3), max_size=4),
    st.lists(st.text("xyz", min_size=1, max_size=3), max_size=4),
    st.lists(st.booleans(), max_size=16),
)
def test_one_router_for_two_sessions_gives_each_the_timeline_of_its_capture_read_alone(
    first: list[str], second: list[str], picks: list[bool]
) -> None:
    pm = get_plugin_manager(load_entrypoints=False, environ={})
    capture = [*OPENING, *interleave(turn_of("a", 10, first), turn_of("b", 20, second), picks)]
    a, b = reader(pm), reader(pm)
    # As the live sessions say which request opens them.
    a.opening, b.opening = request_key(1), request_key(2)
    router = Router([a, b])
    for line in capture:
        router.entry(line)
    assert (a.session_id, b.session_id) == ("a", "b")
    for session, live in (("a", a), ("b", b)):
        alone = project_capture(capture, pm=pm, session_id=session)
        expected = [
            (item.kind, str(getattr(item, "text", "")))
            for item in alone
            if item.kind in ("user_message", "assistant_message")
        ]
        assert texts(live) == expected


def test_an_update_goes_to_the_session_it_names_and_the_delivery_says_so(
    pm: pluggy.PluginManager,
) -> None:
    a, b = reader(pm, "a"), reader(pm, "b")
    router = Router([a, b])
    (delivery,) = router.entry(said("b", "hi"))
    assert delivery.route.reader is b
    assert delivery.method == "session/update"
    assert delivery.changes  # what the projection of it changed, for the side effects
    assert not a.projector.state.messages


def test_an_update_that_names_no_session_or_an_unknown_one_reaches_none(
    pm: pluggy.PluginManager,
) -> None:
    a = reader(pm, "a")
    router = Router([a])
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
    (unnamed,) = router.entry(to_client({"method": "session/update", "params": {"update": update}}))
    (other,) = router.entry(said("zzz", "x"))
    assert (unnamed.route.reader, unnamed.route.unrouted) == (None, "unnamed")
    assert (other.route.reader, other.route.unrouted, other.named) == (None, "other", "zzz")
    assert not a.projector.state.messages


def test_a_closed_sessions_messages_reach_no_one_until_it_opens_again(
    pm: pluggy.PluginManager,
) -> None:
    a = reader(pm, "a")
    router = Router([a])
    router.entry({"dir": "closed", "t": 1.0, "sessionId": "a"})
    (delivery,) = router.entry(said("a", "late"))
    assert delivery.route.unrouted == "closed"
    load = {"sessionId": "a", "cwd": "/a", "mcpServers": []}
    router.entry(to_agent({"id": 5, "method": "session/load", "params": load}))
    router.entry(to_client({"id": 5, "result": {}}))
    (again,) = router.entry(said("a", "back"))
    assert again.route.reader is a


def test_a_request_of_the_agent_is_answered_in_the_session_it_was_routed_to(
    pm: pluggy.PluginManager,
) -> None:
    a, b = reader(pm, "a"), reader(pm, "b")
    router = Router([a, b])
    params = {"sessionId": "b", "path": "/b/notes.txt"}
    router.entry(to_client({"id": "r1", "method": "fs/read_text_file", "params": params}))
    assert router.request_route("r1").reader is b
    # Its answer goes to the same session, which now knows the file.
    router.entry(to_agent({"id": "r1", "result": {"content": "hello\n"}}))
    assert router.request_route("r1").reader is None  # answered: forgotten
    known = b.projector.state.view().file_before("/b/notes.txt", 10**9)
    assert known is not None
    assert known.content == "hello\n"
    assert a.projector.state.view().file_before("/b/notes.txt", 10**9) is None


def test_a_new_sessions_answer_opens_the_reader_that_sent_it(pm: pluggy.PluginManager) -> None:
    first, second = reader(pm), reader(pm)
    router = Router([first, second])
    second.opening = request_key(7)  # the second live session sent request 7
    router.entry(to_agent({"id": 7, "method": "session/new", "params": {"cwd": "/w"}}))
    router.entry(to_client({"id": 7, "result": {"sessionId": "s7"}}))
    assert (first.session_id, second.session_id) == (None, "s7")


_METHODS = [
    "initialize",
    "session/new",
    "session/load",
    "session/resume",
    "session/fork",
    "session/prompt",
    "session/close",
    "session/update",
    "session/request_permission",
    "fs/read_text_file",
    "terminal/create",
    "_ext",
]
_IDS = st.one_of(st.none(), st.integers(0, 5), st.sampled_from(["x", "r1"]), st.floats())
_SESSIONS = st.sampled_from(["a", "b", "zzz", None, 5, ["a"]])


@st.composite
def _lines(draw: st.DrawFn) -> dict[str, Any]:
    """Any line a hostile agent or capture could hold, shaped like traffic or not."""
    kind = draw(st.sampled_from(["client->agent", "agent->client", "disk", "closed", "decided"]))
    if kind in ("disk", "closed", "decided"):
        return {"dir": kind, "t": 1.0, "sessionId": draw(_SESSIONS), "path": "/a/x"}
    message: dict[str, Any] = {"jsonrpc": "2.0"}
    if draw(st.booleans()):
        message["id"] = draw(_IDS)
    if draw(st.booleans()):
        message["method"] = draw(st.sampled_from(_METHODS))
        message["params"] = draw(
            st.one_of(
                st.none(),
                st.fixed_dictionaries({"sessionId": _SESSIONS, "cwd": st.just("/a")}),
            )
        )
    else:
        message[draw(st.sampled_from(["result", "error"]))] = draw(
            st.one_of(st.none(), st.fixed_dictionaries({"sessionId": _SESSIONS}))
        )
    return {"dir": kind, "t": 1.0, "msg": message}


@settings(max_examples=200, deadline=None)
@given(st.lists(_lines(), max_size=60))
def test_no_traffic_makes_the_router_raise_or_route_to_two_sessions(
    lines: list[dict[str, Any]],
) -> None:
    pm = get_plugin_manager(load_entrypoints=False, environ={})
    a, b = reader(pm, "a"), reader(pm)
    router = Router([a, b])
    for line in lines:
        for delivery in router.entry(line):
            # One decision: a reader, or none and why.
            assert (delivery.route.reader is None) == (delivery.route.unrouted is not None)
            assert delivery.route.reader in (a, b, None)
    assert len(router.client_requests) <= len(lines)
    assert len(router.agent_requests) <= len(lines)
