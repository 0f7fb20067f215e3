"""The real agents as test parameters: how each one runs, and how its model is scripted.

One :class:`PeerAgent` per agent and protocol version asked for (claude-agent-acp in v1
and v2; codex-acp and Grok Build answer v1 whatever is asked). :meth:`PeerAgent.connect`
opens a session through the suite's ``connect`` fixture (the client's messages checked
against the schema, the session's recording projected to its timeline), the agent
pointed at the fake model server.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from acp_adapters import Session, get_plugin_manager
from peers import launch
from peers.fake_model_server import FakeModelServer, Step

Body = dict[str, Any]


@dataclass(frozen=True)
class PeerAgent:
    """One real agent, spoken to in one protocol version."""

    provider: str
    #: The version asked for (None: the provider's default).
    protocol: int | None
    #: The model API it calls: ``"anthropic"`` (Messages) or ``"responses"`` (OpenAI).
    api: str

    @property
    def side_call(self) -> Callable[[Body], bool] | None:
        """How its calls that are not the turn's are told apart (None: those without tools)."""
        return launch.grok_side_call if self.provider == "grok" else None

    def is_turn_call(self, body: Body) -> bool:
        if self.side_call is not None:
            return not self.side_call(body)
        return bool(body.get("tools"))

    def script(
        self, prompts: Sequence[str], turns: Sequence[Sequence[Step]]
    ) -> Callable[[Body], Step]:
        return launch.script(prompts, turns, self.api, self.side_call)

    @asynccontextmanager
    async def connect(
        self,
        connect: Any,
        workspace: Path,
        agents_bin: Path,
        home: Path,
        server: FakeModelServer,
        **kwargs: Any,
    ) -> AsyncIterator[Session]:
        """A session of this agent in ``workspace`` (``kwargs`` go to ``connect``: the
        policy, ``mcp_servers``, ``session_id``, ...). Claude runs in its ``default`` mode:
        it asks before each edit or MCP tool call (its own default, ``auto``, asks a
        classifier model the fake server does not play)."""
        command, env = getattr(launch, self.provider)(agents_bin, home, server)
        kwargs.setdefault("pm", get_plugin_manager())
        kwargs.setdefault("policy", "full-access")
        async with connect(
            self.provider, workspace, command=command, env=env, protocol=self.protocol, **kwargs
        ) as session:
            if self.provider == "claude" and kwargs.get("new_session", True):
                await session.set_mode("default")
            yield session


CLAUDE_V1 = PeerAgent("claude", 1, "anthropic")
CLAUDE_V2 = PeerAgent("claude", 2, "anthropic")
CODEX = PeerAgent("codex", None, "responses")
GROK = PeerAgent("grok", None, "responses")

#: Every agent, as a pytest parameter named after it.
PEERS = [
    pytest.param(CLAUDE_V1, id="claude-v1"),
    pytest.param(CLAUDE_V2, id="claude-v2"),
    pytest.param(CODEX, id="codex"),
    pytest.param(GROK, id="grok"),
]
