"""The client offers the agent exactly what it honours, per version, and each one works."""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import acp_adapters
from acp_adapters.client.capabilities import HONOURED_BY, client_capabilities, offered_names
from acp_adapters.client.session import ItemChange, SessionChange
from acp_adapters.errors import PromptCapabilityError
from acp_adapters.protocol import agent_methods

SPEC = Path(__file__).parent.parent.parent / "spec" / "acp"
CONFIG_AGENT = [sys.executable, str(Path(__file__).parent.parent / "agents" / "config_agent.py")]


@cache
def _schema(version: int) -> jsonschema.protocols.Validator:
    schema = json.loads((SPEC / f"v{version}" / "schema.json").read_text())
    return jsonschema.Draft202012Validator(
        {"$defs": schema["$defs"], "$ref": "#/$defs/ClientCapabilities"}
    )


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("elicit", [True, False])
@pytest.mark.parametrize("login", [True, False])
def test_what_is_offered_is_valid_and_each_offer_has_its_handler(
    version: int, elicit: bool, login: bool
) -> None:
    offered = client_capabilities(version, elicit=elicit, login=login)
    _schema(version).validate(offered)
    names = offered_names(offered)
    assert ("elicitation.form" in names) is elicit
    assert ("elicitation.url" in names) is elicit
    # A terminal login is run by the application's callback (test_auth.py runs one).
    assert (names.count("auth.terminal") == 1) is login
    handled = agent_methods(version)  # what the client answers for this version
    for name in names:
        assert name in HONOURED_BY, name
        for method in HONOURED_BY[name]:
            assert method in handled, (name, method)
    if version == 1:
        assert {"fs.readTextFile", "fs.writeTextFile", "terminal"} <= set(names)
        assert "session.configOptions.boolean" in names
    else:
        assert not {"fs.readTextFile", "terminal"} & set(names)  # v2 has neither
    assert [name for name in names if name.startswith("auth")] == (
        ["auth.terminal"] if login else []
    )


@pytest.mark.anyio
async def test_the_agent_is_told_what_the_session_honours(workspace: Path) -> None:
    async def elicit(params: dict[str, Any]) -> dict[str, Any] | None:
        return None

    for callback, offered in ((None, False), (elicit, True)):
        async with acp_adapters.connect(
            command=CONFIG_AGENT, cwd=workspace, protocol=1, elicit=callback
        ) as session:
            turn = await session.prompt("capabilities")
        told = json.loads(turn.items[-1].text)  # type: ignore[union-attr]
        assert told["fs"] == {"readTextFile": True, "writeTextFile": True}
        assert told["terminal"] is True
        assert "boolean" in told["session"]["configOptions"]
        assert ("elicitation" in told) is offered


@pytest.mark.anyio
async def test_a_boolean_option_is_read_and_set(workspace: Path) -> None:
    async with acp_adapters.connect(command=CONFIG_AGENT, cwd=workspace) as session:
        (fast,) = session.timeline.state.config_options
        assert (fast.id, fast.type, fast.current_value) == ("fast", "boolean", False)
        await session.set_config_option("fast", True)
        (fast,) = session.timeline.state.config_options
        assert fast.current_value is True


@pytest.mark.anyio
async def test_prompt_content_the_agent_does_not_take_is_refused_before_it_is_sent(
    workspace: Path,
) -> None:
    image = {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}
    link = {"type": "resource_link", "name": "notes", "uri": "file:///notes.txt"}
    async with acp_adapters.connect(command=CONFIG_AGENT, cwd=workspace) as session:
        # The agent offers no promptCapabilities: text and resource links only.
        with pytest.raises(PromptCapabilityError, match="block 1 is image content"):
            await session.prompt([{"type": "text", "text": "look"}, image])
        assert session.timeline.state.turn == 0  # nothing went out
        turn = await session.prompt([{"type": "text", "text": "see "}, link])
        assert turn.stop_reason == "end_turn"


def test_what_a_v2_agent_takes_in_a_prompt_is_read_from_its_session_capabilities() -> None:
    from acp_adapters.client.capabilities import check_prompt, prompt_capabilities

    caps = {"session": {"prompt": {"image": {}, "embeddedContext": {}}}}
    assert prompt_capabilities(2, caps) == {"image", "embeddedContext"}
    check_prompt([{"type": "image"}, {"type": "resource"}], 2, caps)
    with pytest.raises(PromptCapabilityError, match="audio"):
        check_prompt([{"type": "audio"}], 2, caps)
    assert prompt_capabilities(1, {"promptCapabilities": {"audio": True}}) == {"audio"}


@pytest.mark.anyio
async def test_what_the_agent_reports_of_the_session_is_visible(workspace: Path) -> None:
    """Usage, session info and commands: in the timeline's session JSON and as stream events."""
    async with acp_adapters.connect(command=CONFIG_AGENT, cwd=workspace) as session:
        events = [
            change
            async for change in session.stream_prompt("report", session_events=True)
            if isinstance(change, SessionChange)
        ]
        reported = session.timeline.session_json()
    kinds = [event.kind for event in events]
    assert {"usage", "info", "commands"} <= set(kinds)
    assert reported["title"] == "Fixing the parser"
    assert reported["usage"] == {
        "used": 1200,
        "size": 200000,
        "cost_amount": 0.02,
        "cost_currency": "USD",
    }
    assert [c["name"] for c in reported["commands"]] == ["test"]
    assert reported["config_options"][0]["id"] == "fast"
    usage_event = next(e for e in events if e.kind == "usage")
    assert usage_event.session["usage"]["used"] == 1200  # the state as it was then
    json.dumps(reported)  # JSON-ready


@pytest.mark.anyio
async def test_without_session_events_the_stream_holds_items_only(workspace: Path) -> None:
    async with acp_adapters.connect(command=CONFIG_AGENT, cwd=workspace) as session:
        changes = [change async for change in session.stream_prompt("report")]
    assert changes
    assert all(isinstance(change, ItemChange) for change in changes)
