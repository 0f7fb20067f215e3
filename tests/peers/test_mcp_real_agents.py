"""A real agent takes the client's MCP servers (``tox -e peers``): it lists a loopback
server's tool to its model, and runs it when the model calls it.

The probe (``mcp_probe_server.py``) has one tool, ``probe_echo``. Each agent gets it
through ``connect(mcp_servers=...)``, over stdio (the agent starts it) and over
streamable HTTP on 127.0.0.1 (when the agent's ``mcpCapabilities`` take HTTP). The
fake model server records what the agent offered its model, and plays a model that
calls the tool as that agent spells it:

* claude-agent-acp defers MCP tools: their names are listed in a system reminder, and
  ``ToolSearch`` loads one into the request's ``tools`` (``mcp__probe__probe_echo``);
* codex-acp offers a namespace ``mcp__probe`` of functions (``probe_echo``), called
  with the namespace in the ``function_call``;
* Grok Build has ``search_tool`` and ``use_tool``: its MCP tools are found by a search
  (``probe__probe_echo``). It connects its MCP servers while the turn starts, so the
  model searches again until the probe is there.

The tool's answer must come back to the model and into the timeline: a completed tool
item of the model's call, holding the echoed text.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_adapters import McpServer, ToolItem
from peers.fake_model_server import FakeModelServer, Step, Text, ToolCall, ToolCalls
from peers.launch import grok_side_call
from peers.mcp_probe_server import DESCRIPTION, ECHO_PREFIX, TOOL, McpProbeHttpServer, methods_of
from peers.peer_agents import PEERS, PeerAgent

pytestmark = [pytest.mark.peers, pytest.mark.anyio]

PROBE = Path(__file__).with_name("mcp_probe_server.py")
PROMPT = "ask the probe to echo something"
SAID = "ping 42"
ECHOED = ECHO_PREFIX + SAID
FINAL = "the probe answered"
CALL_ID = "call_probe_echo"
TURN_SECONDS = 120
#: How often the model may search for the probe while Grok still connects it.
GROK_SEARCHES = 100

#: The probe's tool as each agent names it to its model.
TOOL_NAME = {
    "claude": f"mcp__probe__{TOOL}",
    "codex": f"mcp__probe__{TOOL}",
    "grok": f"probe__{TOOL}",
}


# --- what the agent offered its model --------------------------------------------------------


def offered_tools(agent: PeerAgent, body: dict[str, Any]) -> dict[str, str]:
    """The tools one model request offers, by the name the model calls them, with their
    descriptions: the request's ``tools`` (codex's namespaces flattened to
    ``namespace__name``), and for Grok what its ``search_tool`` found."""
    found: dict[str, str] = {}
    for tool in body.get("tools") or []:
        if tool.get("type") == "namespace":
            for inner in tool.get("tools") or []:
                found[f"{tool['name']}__{inner['name']}"] = inner.get("description", "")
        elif "name" in tool:
            found[tool["name"]] = tool.get("description", "")
    if agent.provider == "grok":
        for output in _outputs(body).values():
            try:
                results = json.loads(output).get("results") or []
            except (ValueError, AttributeError):
                continue
            for result in results:
                for tool in result.get("tools") or []:
                    found[tool["tool_name"]] = tool.get("description", "")
    return found


def deferred_tools(body: dict[str, Any]) -> list[str]:
    """The tools claude-agent-acp lists by name only, in a system reminder: those that
    ``ToolSearch`` loads."""
    heading = "The following deferred tools are now available via ToolSearch"
    for message in body.get("messages") or []:
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"text": content}]
        for block in blocks:
            text = block.get("text") if isinstance(block, dict) else None
            if isinstance(text, str) and heading in text:
                listing = text.split(heading, 1)[1].split("\n\n", 1)[0]
                return listing.splitlines()[1:]  # after the line that ends the heading
    return []


def _outputs(body: dict[str, Any]) -> dict[str, str]:
    """Responses API: each tool result of the input, by its call id."""
    return {
        entry["call_id"]: str(entry.get("output"))
        for entry in body.get("input") or []
        if isinstance(entry, dict) and entry.get("type") == "function_call_output"
    }


def _calls(body: dict[str, Any]) -> dict[str, str]:
    """Responses API: the function each call id of the input called."""
    return {
        entry["call_id"]: entry.get("name", "")
        for entry in body.get("input") or []
        if isinstance(entry, dict) and entry.get("type") == "function_call"
    }


# --- the model's side -----------------------------------------------------------------------


def claude_plan() -> list[Step]:
    return [
        ToolCalls([ToolCall("ToolSearch", {"query": f"select:{TOOL_NAME['claude']}"})]),
        ToolCalls([ToolCall(TOOL_NAME["claude"], {"text": SAID}, id=CALL_ID)]),
        Text(FINAL),
    ]


def codex_plan() -> list[Step]:
    return [
        ToolCalls([ToolCall(TOOL, {"text": SAID}, id=CALL_ID, namespace="mcp__probe")]),
        Text(FINAL),
    ]


def grok_model(body: dict[str, Any]) -> Step:
    """Search for the probe until Grok has it, call it through ``use_tool``, then answer."""
    if grok_side_call(body):
        return Text("side answer")
    outputs, calls = _outputs(body), _calls(body)
    if CALL_ID in outputs:
        return Text(FINAL)
    searches = [call for call, name in calls.items() if name == "search_tool"]
    if any(TOOL_NAME["grok"] in outputs.get(call, "") for call in searches):
        tool_input = {"tool_name": TOOL_NAME["grok"], "tool_input": {"text": SAID}}
        return ToolCalls([ToolCall("use_tool", tool_input, id=CALL_ID)])
    if len(searches) >= GROK_SEARCHES:
        return Text(f"the probe never showed in {GROK_SEARCHES} searches")
    return ToolCalls([ToolCall("search_tool", {"query": "probe echo"})])


def model_of(agent: PeerAgent) -> Any:
    if agent.provider == "grok":
        return grok_model
    return agent.script([PROMPT], [claude_plan() if agent.provider == "claude" else codex_plan()])


def takes_http(agent_capabilities: dict[str, Any], version: int) -> bool:
    if version == 2:
        return "http" in ((agent_capabilities.get("session") or {}).get("mcp") or {})
    return (agent_capabilities.get("mcpCapabilities") or {}).get("http") is True


# --- the test ---------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("agent", PEERS)
async def test_a_real_agent_lists_and_calls_a_loopback_mcp_tool(
    connect: Any,
    agents_bin: Path,
    workspace: Path,
    home: Path,
    tmp_path: Path,
    agent: PeerAgent,
    transport: str,
) -> None:
    log = tmp_path / "probe.jsonl"
    with FakeModelServer(model_of(agent)) as server, McpProbeHttpServer() as http:
        if transport == "stdio":
            probe = McpServer(
                name="probe", command=sys.executable, args=(str(PROBE), "--log", str(log))
            )
        else:
            probe = McpServer(name="probe", transport="http", url=http.url)
        if transport == "stdio":
            # The MCP servers of connect(): session/new carries them.
            async with agent.connect(
                connect, workspace, agents_bin, home, server, mcp_servers=[probe]
            ) as session:
                with anyio.fail_after(TURN_SECONDS):
                    turn = await session.prompt(PROMPT)
        else:
            # Whether the agent takes HTTP servers is read before the session opens.
            async with agent.connect(
                connect, workspace, agents_bin, home, server, new_session=False
            ) as session:
                caps = session.agent.agent_capabilities
                if not takes_http(caps, session.version):
                    pytest.skip(f"{agent.provider} does not offer HTTP MCP servers: {caps}")
                await session.new_session(mcp_servers=[probe])
                if agent.provider == "claude":
                    await session.set_mode("default")
                with anyio.fail_after(TURN_SECONDS):
                    turn = await session.prompt(PROMPT)
        probe_saw = methods_of(log) if transport == "stdio" else http.methods
        turn_calls = [r.body for r in server.model_requests if agent.is_turn_call(r.body)]

    # The agent asked the probe for its tools, and called the one the model called.
    assert {"initialize", "tools/list", "tools/call"} <= set(probe_saw), probe_saw
    # It offered the tool to its model, by its own name for it, with the probe's description.
    name = TOOL_NAME[agent.provider]
    offered = [offered_tools(agent, body) for body in turn_calls]
    assert any(tools.get(name) == DESCRIPTION for tools in offered), [list(t) for t in offered]
    if agent.provider == "claude":
        assert name in deferred_tools(turn_calls[0])  # listed from the first call
    # The tool's answer came back to the model.
    assert any(ECHOED in json.dumps(body) for body in turn_calls)
    # The timeline: the tool call, completed, holding the echoed text; then the last answer.
    assert turn.stop_reason == "end_turn"
    (item,) = [i for i in turn.items if i.tool_call_id == CALL_ID and isinstance(i, ToolItem)]
    assert item.status == "completed", item
    if agent.provider == "grok":
        # Grok reports the MCP result in rawOutput only.
        assert item.output["output"] == {"OkayOutput": ECHOED}, item
    else:
        assert item.text == ECHOED, item
    assert turn.items[-1].kind == "assistant_message"
    assert turn.items[-1].text.endswith(FINAL)  # type: ignore[union-attr]
