"""A real npm agent launched through the registry plugin, offline (``tox -e peers``).

A registry file of one entry, ``claude-acp``, runs the claude-agent-acp package the
peers env installed, at exactly its version, with ``npx``. ``ACP_ADAPTERS_REGISTRY``
names the file, and ``connect(provider="registry:claude-acp")`` starts the agent with
the command the provider resolved, ``npx -y <package>@<version>``, over a minimal base
environment plus what the test passes (the fake model server, a dummy key, a fresh
home); one text turn against the fake model server ends ``end_turn`` with its text.

npx finds the package without the network: the workspace's parent folder holds a
``node_modules`` linked to the peers env's install, so npm's local prefix (the nearest
folder above the agent's folder with a ``node_modules``) has the package at that exact
version, and npm runs its bin from there. npm is told to stay offline, with an empty
cache of its own: a package it would have to download fails the launch (``ENOTCACHED``)
instead, and nothing is installed into npx's cache.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_adapters import ProviderRegistry, get_plugin_manager
from acp_adapters.registry import load_registry, resolve_launch
from peers import launch
from peers.fake_model_server import FakeModelServer, Text
from peers.launch import script

pytestmark = [pytest.mark.peers, pytest.mark.anyio]

PACKAGE = "@agentclientprotocol/claude-agent-acp"
AGENT_ID = "claude-acp"
PROVIDER = f"registry:{AGENT_ID}"
PROMPT = "say hello from the registry"
ANSWER = "hello from the registry agent"
#: A variable of this process that the agent must not get: a registry agent is started
#: over a minimal base environment.
SECRET = "ACP_PEERS_REGISTRY_SECRET"
TURN_SECONDS = 120


def pinned_version() -> str:
    """The version of claude-agent-acp the peers env installs (its ``package.json``)."""
    manifest = Path(__file__).parent / "agents" / "package.json"
    version = str(json.loads(manifest.read_text(encoding="utf-8"))["dependencies"][PACKAGE])
    assert version[:1].isdigit(), f"{PACKAGE} is pinned to an exact version, not {version!r}"
    return version


def write_registry(folder: Path, version: str) -> Path:
    path = folder / "registry.json"
    entry = {
        "id": AGENT_ID,
        "name": "Claude Agent",
        "version": version,
        "description": "claude-agent-acp at the version tox -e peers installs",
        "distribution": {"npx": {"package": f"{PACKAGE}@{version}"}},
    }
    document = {"version": "1.0.0", "agents": [entry], "extensions": []}
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return path


@pytest.fixture
def workspace(tmp_path: Path, agents_bin: Path) -> Path:
    """The agent's folder, beneath a folder whose ``node_modules`` is the peers install."""
    (tmp_path / "node_modules").symlink_to(agents_bin.parent, target_is_directory=True)
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


async def test_an_npx_registry_agent_runs_offline(
    connect: Any,
    agents_bin: Path,
    workspace: Path,
    home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    version = pinned_version()
    registry_file = write_registry(tmp_path, version)
    monkeypatch.setenv("ACP_ADAPTERS_REGISTRY", str(registry_file))
    monkeypatch.setenv(SECRET, "hunter2")
    for key in list(os.environ):  # npm's settings are the test's own (npm ignores their case)
        if key.lower().startswith("npm_config_"):
            monkeypatch.delenv(key)
    npm_cache = tmp_path / "npm-cache"
    npm_cache.mkdir()

    pm = get_plugin_manager()
    expected = ("npx", "-y", f"{PACKAGE}@{version}")
    # The exact command line: resolved from the registry file, and the provider's launch.
    agent = load_registry(str(registry_file)).get(AGENT_ID)
    assert agent is not None
    assert resolve_launch(agent, base_env={}).argv == expected
    spec = ProviderRegistry.collect(pm).get(PROVIDER).launch
    assert spec is not None
    assert (spec.command, *spec.args) == expected
    assert spec.inherit_env is False

    model = script([PROMPT], [[Text(ANSWER)]], "anthropic")
    with FakeModelServer(model) as server:
        _, claude_env = launch.claude(agents_bin, home, server)  # its command is npx's now
        env = {
            **claude_env,
            "npm_config_cache": str(npm_cache),
            "npm_config_offline": "true",
            "npm_config_update_notifier": "false",
            "npm_config_fund": "false",
            "npm_config_audit": "false",
        }
        async with connect(PROVIDER, workspace, env=env, pm=pm) as session:
            # The provider given is fixed: claude's own plugin does not claim the agent.
            assert session.provider.id == PROVIDER
            assert session.agent.command == expected
            assert session.agent_info["name"] == PACKAGE
            assert session.agent_info["version"] == version
            assert SECRET not in session.agent.agent_env
            assert session.agent.agent_env["ANTHROPIC_BASE_URL"] == server.url
            with anyio.fail_after(TURN_SECONDS):
                turn = await session.prompt(PROMPT)
        assert server.model_requests, "the agent never called the model"
    assert turn.stop_reason == "end_turn"
    said = [item.text for item in turn.items if item.kind == "assistant_message"]  # type: ignore[union-attr]
    assert said == [ANSWER]
    # Besides the prompt and the answer, at most the agent's notices (in its default mode,
    # ``auto``, it warns that its classifier's billing does not go through 127.0.0.1).
    assert {item.kind for item in turn.items} <= {"user_message", "assistant_message", "notice"}
    # Offline: npx ran the installed package, and installed nothing into its cache.
    assert not (npm_cache / "_npx").exists()
