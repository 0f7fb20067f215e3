"""Helpers for testing plugins: a fresh plugin manager, tool calls, sessions, scripted traffic.

For provider-plugin authors as much as for this project's own tests::

    from acp_adapters.testing import plugin_manager, session, tool_call, v1_traffic

    pm = plugin_manager(MyPlugin())                  # built-ins + yours, nothing installed
    state = session(version=1)
    call = tool_call(kind="edit", content=[{"type": "diff", "path": "/a", "newText": "x"}])
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import pluggy

from .diff.limits import DiffLimits
from .plugin.manager import get_plugin_manager
from .plugin.providers import Provider
from .runtime import Reducer, SessionState, ToolCall


def plugin_manager(*plugins: object, load_entrypoints: bool = False) -> pluggy.PluginManager:
    """A new plugin manager: the built-in plugins, then ``plugins`` (named ``test-0``, ...)."""
    pm = get_plugin_manager(load_entrypoints=load_entrypoints, environ={})
    for number, plugin in enumerate(plugins):
        pm.register(plugin, name=f"test-{number}")
    return pm


def provider(provider_id: str = "test", **fields: Any) -> Provider:
    """A provider with this id."""
    return Provider(id=provider_id, name=fields.pop("name", provider_id), **fields)


def session(version: int = 1, *, max_edits: int | None = None) -> SessionState:
    """An empty session state of one protocol version."""
    limits = DiffLimits() if max_edits is None else DiffLimits(max_edits=max_edits)
    return SessionState(session_id="test-session", version=version, diff_limits=limits)


def tool_call(
    *,
    tool_call_id: str = "call-1",
    state: SessionState | None = None,
    **wire_fields: Any,
) -> ToolCall:
    """A tool call as a v1 ``tool_call`` update with these wire fields makes it.

    ``state`` (default: a new v1 session) is updated, so ``state.view()`` then
    shows the tool call to a hook.
    """
    state = state if state is not None else session()
    update = {
        "sessionUpdate": "tool_call",
        "toolCallId": tool_call_id,
        "title": "tool",
        **wire_fields,
    }
    if state.version == 2:
        update["sessionUpdate"] = "tool_call_update"
    Reducer(state).apply_notification({"sessionId": state.session_id or "s", "update": update})
    return state.tool_calls[tool_call_id]


def v1_traffic(
    agent_name: str, turns: Iterable[tuple[str, list[dict[str, Any]]]]
) -> Iterator[dict[str, Any]]:
    """Capture entries of a v1 session with an agent of that name: each turn a prompt, the
    agent's messages (``{"method": ..., "params": ...}`` or answers), and an ``end_turn``.

    Agent requests carry their ``id``; a client answer is written
    ``{"answer": id, "result": ...}``.
    """
    t = 0.0

    def entry(direction: str, message: dict[str, Any]) -> dict[str, Any]:
        nonlocal t
        t += 0.01
        return {"dir": direction, "t": round(t, 3), "msg": {"jsonrpc": "2.0", **message}}

    yield entry(
        "client->agent", {"id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    )
    yield entry(
        "agent->client",
        {
            "id": 1,
            "result": {"protocolVersion": 1, "agentInfo": {"name": agent_name, "version": "1"}},
        },
    )
    yield entry("client->agent", {"id": 2, "method": "session/new", "params": {"cwd": "/ws"}})
    yield entry("agent->client", {"id": 2, "result": {"sessionId": "s1"}})
    request_id = 10
    for prompt, messages in turns:
        request_id += 1
        yield entry(
            "client->agent",
            {
                "id": request_id,
                "method": "session/prompt",
                "params": {"sessionId": "s1", "prompt": [{"type": "text", "text": prompt}]},
            },
        )
        for message in messages:
            if "answer" in message:
                yield entry("client->agent", {"id": message["answer"], "result": message["result"]})
            elif message.get("method") == "session/update":
                yield entry(
                    "agent->client",
                    {
                        "method": "session/update",
                        "params": {"sessionId": "s1", "update": message["params"]},
                    },
                )
            else:
                yield entry("agent->client", message)
        yield entry("agent->client", {"id": request_id, "result": {"stopReason": "end_turn"}})
