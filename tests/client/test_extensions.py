"""Extensions both ways: the application calls the agent's methods and sends ``_meta``; the
agent's extension requests go to the plugins (built-in: method not found)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

import acp_adapters
from acp_adapters import hookimpl
from acp_adapters.plugin.extensions import ExtensionAnswer
from acp_adapters.plugin.manager import get_plugin_manager
from acp_adapters.transport import RpcError

pytestmark = pytest.mark.anyio

AGENT = [sys.executable, str(Path(__file__).parent.parent / "agents" / "extension_agent.py")]


async def _said(session: acp_adapters.Session, prompt: str, **kwargs: Any) -> Any:
    turn = await session.prompt(prompt, **kwargs)
    return json.loads(turn.items[-1].text)  # type: ignore[union-attr]


async def test_the_application_calls_the_agents_extension_methods(workspace: Path) -> None:
    async with acp_adapters.connect(command=AGENT, cwd=workspace) as session:
        assert await session.call_extension("_acme/echo", {"a": [1, 2]}) == {"echo": {"a": [1, 2]}}
        with pytest.raises(RpcError) as raised:
            await session.call_extension("_acme/unknown")
        assert raised.value.code == -32601
        assert await session.notify_extension("_acme/note", {"x": 1})
        assert await _said(session, "count") == [["acme/note", {"x": 1}]]
        with pytest.raises(ValueError, match="starts with '_'"):
            await session.call_extension("session/new")


async def test_meta_goes_with_the_applications_requests(workspace: Path) -> None:
    async with acp_adapters.connect(command=AGENT, cwd=workspace) as session:
        assert await _said(session, "meta", meta={"trace": "t-1"}) == {"trace": "t-1"}
        assert await _said(session, "meta") is None


async def test_an_extension_request_nobody_answers_is_method_not_found(workspace: Path) -> None:
    async with acp_adapters.connect(command=AGENT, cwd=workspace) as session:
        said = await _said(session, "ask")
    assert said["code"] == -32601


class Ping:
    """A plugin that answers the agent's ``_acme/ping``."""

    @hookimpl
    def answer_extension_request(self, method: str, params: Any) -> ExtensionAnswer | None:
        if method != "_acme/ping":
            return None
        return ExtensionAnswer(result={"pong": params})


async def test_a_plugin_answers_the_agents_extension_request(workspace: Path) -> None:
    pm = get_plugin_manager(load_entrypoints=False, environ={})
    pm.register(Ping(), name="ping")
    async with acp_adapters.connect(command=AGENT, cwd=workspace, pm=pm) as session:
        said = await _said(session, "ask")
    assert said == {"result": {"pong": {"n": 1}}}
