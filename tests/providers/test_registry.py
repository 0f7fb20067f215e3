"""The registry plugin: one generic provider per agent of the ACP registry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import acp_adapters_claude
import acp_adapters_codex
import acp_adapters_grok
import acp_adapters_registry
from acp_adapters import Hooks, ProviderRegistry
from acp_adapters.projection.negotiation import provider_of
from acp_adapters.registry import DEFAULT_REGISTRY_URL
from acp_adapters.testing import plugin_manager
from acp_adapters_registry.registry import read_registry

SPEC = Path(__file__).parent.parent.parent / "spec" / "registry" / "agents"


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test reads the user's registry cache, nor names a registry by the environment."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("ACP_ADAPTERS_CACHE", str(cache))
    monkeypatch.delenv("ACP_ADAPTERS_REGISTRY", raising=False)
    return cache


def _collect(*plugins: object) -> ProviderRegistry:
    return ProviderRegistry.collect(plugin_manager(*plugins))


def _hooks(*plugins: object) -> Hooks:
    return Hooks(plugin_manager(*plugins))


def _linux(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("acp_adapters.registry.launch._platform.system", lambda: "Linux")
    monkeypatch.setattr("acp_adapters.registry.launch._platform.machine", lambda: "x86_64")


def test_one_provider_per_registry_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    _linux(monkeypatch)
    registry = _collect(acp_adapters_registry)
    ids = {p.id for p in registry if p.id.startswith("registry:")}
    assert ids == {f"registry:{path.stem}" for path in SPEC.glob("*.json")}
    gemini = registry.get("registry:gemini")
    assert gemini.launch is not None
    assert (gemini.launch.command, gemini.launch.args) == (
        "npx",
        ("-y", "@google/gemini-cli@0.37.1", "--acp"),
    )
    auggie = registry.get("registry:auggie")
    assert auggie.launch is not None
    assert auggie.launch.env == {"AUGMENT_DISABLE_AUTO_UPDATE": "1"}  # the entry's own only
    opencode = registry.get("registry:opencode")  # a binary agent, not installed
    assert opencode.launch is None
    assert opencode.description is not None
    assert "acp-adapters registry install opencode" in opencode.description
    assert registry.for_agent("Gemini CLI").id == "acp"  # claimed by identify_agent, not names


def test_an_installed_binary_agent_launches_its_cmd(tmp_path: Path) -> None:
    registry = acp_adapters_registry.plugin_registry()
    opencode = registry.get("opencode")
    (tmp_path / "opencode").write_text("#!/bin/sh\n")
    provider = acp_adapters_registry.provider_for(
        opencode, platform="linux-x86_64", install_dir=tmp_path
    )
    assert provider.launch is not None
    assert (provider.launch.command, provider.launch.args) == (str(tmp_path / "opencode"), ("acp",))
    resolved = acp_adapters_registry.launch_for(
        opencode, platform="linux-x86_64", base_env={}, install_dir=tmp_path
    )
    assert resolved.kind == "binary"
    assert resolved.argv == (str(tmp_path / "opencode"), "acp")


def test_an_agent_with_nothing_for_this_platform_has_no_launch() -> None:
    kimi = acp_adapters_registry.plugin_registry().get("kimi")  # no darwin-x86_64 binary
    provider = acp_adapters_registry.provider_for(kimi, platform="darwin-x86_64")
    assert provider.launch is None
    assert provider.description is not None
    assert "no distribution for this platform (darwin-x86_64)" in provider.description


def test_a_registry_file_with_bad_entries_keeps_the_good_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    good = json.loads((SPEC / "gemini.json").read_text())
    bad = [
        {
            "id": "Bad Id",
            "name": "x",
            "version": "1.0.0",
            "description": "d",
            "distribution": {"npx": {"package": "p"}},
        },
        {"id": "nodist", "name": "x", "version": "1.0.0", "description": "d"},
        {
            "id": "badkey",
            "name": "x",
            "version": "1.0.0",
            "description": "d",
            "distribution": {"docker": {}},
        },
        "not an object",
        good,
    ]
    path = tmp_path / "registry.json"
    path.write_text(json.dumps({"version": "1.0.0", "agents": [good, *bad], "extensions": []}))
    monkeypatch.setenv("ACP_ADAPTERS_REGISTRY", str(path))
    registry = _collect(acp_adapters_registry)
    assert [p.id for p in registry if p.id.startswith("registry:")] == ["registry:gemini"]
    err = capsys.readouterr().err
    assert err.count("skipped") == 5
    assert "skipped agent #1 'Bad Id'" in err
    assert "skipped agent #5 'gemini': the id 'gemini' appears twice" in err


def test_the_cached_official_registry_wins_over_the_bundled_one(tmp_path: Path) -> None:
    """A cached copy of the official registry (``registry update``) is read, offline."""
    from acp_adapters.registry.source import _Cache

    only = json.loads((SPEC / "gemini.json").read_text())
    body = json.dumps({"version": "1.0.0", "agents": [only], "extensions": []}).encode()
    _Cache(tmp_path / "cache" / "registry", DEFAULT_REGISTRY_URL).write(
        body, etag='"x"', last_modified=None
    )
    registry = _collect(acp_adapters_registry)
    assert [p.id for p in registry if p.id.startswith("registry:")] == ["registry:gemini"]


def test_a_registry_url_is_read_from_its_cache_only(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Plugin loading never fetches: a URL with no cached copy gives no providers."""
    monkeypatch.setenv("ACP_ADAPTERS_REGISTRY", "https://registry.invalid/registry.json")
    registry = _collect(acp_adapters_registry)
    assert [p.id for p in registry if p.id.startswith("registry:")] == []
    assert "no cached copy" in capsys.readouterr().err


@pytest.mark.parametrize("content", ["", "[]", '{"agents": 5}', "{not json"])
def test_an_unreadable_registry_gives_no_providers(tmp_path: Path, content: str) -> None:
    path = tmp_path / "registry.json"
    path.write_text(content)
    agents, skipped = read_registry(path)
    assert agents == []
    assert len(skipped) == 1


# -- knowing a registry agent when it connects -----------------------------------------------


def _initialize(name: str | None, title: str | None = None) -> dict[str, Any]:
    info: dict[str, Any] = {"version": "1.0"}
    if name is not None:
        info["name"] = name
    if title is not None:
        info["title"] = title
    return {"protocolVersion": 1, "agentInfo": info, "agentCapabilities": {}}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Kimi Code CLI", "registry:kimi"),  # kimi-cli 1.51.0 (a capture)
        ("gemini-cli", "registry:gemini"),
        ("Gemini CLI", "registry:gemini"),
        ("OpenCode", "registry:opencode"),
        ("@qwen-code/qwen-code", "registry:qwen-code"),
        ("codex-acp", "registry:codex-acp"),  # no codex plugin loaded here
        ("@agentclientprotocol/claude-agent-acp", "registry:claude-acp"),
        ("@zed-industries/claude-code-acp", "registry:claude-code-acp"),
        ("sdk-agent", "acp"),  # the official SDK's example: no registry agent
        ("fast-agent-acp", "acp"),  # not in this registry
        (None, "acp"),
    ],
)
def test_a_registry_agent_is_known_by_its_name(name: str | None, expected: str) -> None:
    registry = _collect(acp_adapters_registry)
    hooks = _hooks(acp_adapters_registry)
    result = _initialize(name)
    assert provider_of(result, registry, hooks).id == expected
    assert registry.for_agent(name, hooks.identify_agent(result)).id == expected


def test_the_title_is_tried_after_the_name() -> None:
    registry = _collect(acp_adapters_registry)
    hooks = _hooks(acp_adapters_registry)
    result = _initialize("some-internal-name", "Qwen Code")
    assert provider_of(result, registry, hooks).id == "registry:qwen-code"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("codex-acp", "codex"),
        ("@agentclientprotocol/claude-agent-acp", "claude"),
        ("@zed-industries/claude-code-acp", "claude"),
        ("Grok Build", "grok"),
        ("Kimi Code CLI", "registry:kimi"),  # no dedicated plugin: the registry's
    ],
)
def test_the_dedicated_providers_keep_their_agents(name: str, expected: str) -> None:
    # the registry plugin registered first and last: the dedicated providers win either way
    for plugins in (
        (acp_adapters_registry, acp_adapters_claude, acp_adapters_codex, acp_adapters_grok),
        (acp_adapters_claude, acp_adapters_codex, acp_adapters_grok, acp_adapters_registry),
    ):
        registry = _collect(*plugins)
        hooks = _hooks(*plugins)
        assert provider_of(_initialize(name), registry, hooks).id == expected


def test_grok_without_a_name_is_still_grok() -> None:
    """Grok Build sends no agentInfo, only x.ai ``_meta``: grok's identify_agent answers."""
    plugins = (acp_adapters_registry, acp_adapters_grok)
    result = {"protocolVersion": 1, "agentCapabilities": {}, "_meta": {"x.ai/version": "1"}}
    assert provider_of(result, _collect(*plugins), _hooks(*plugins)).id == "grok"


def test_a_hostile_initialize_answer_is_no_registry_agent() -> None:
    registry = _collect(acp_adapters_registry)
    hooks = _hooks(acp_adapters_registry)
    for result in (
        {"agentInfo": {"name": 5}},
        {"agentInfo": "gemini"},
        {"info": {"name": "x" * 10_000}},
        {"agentInfo": {"name": ""}},
    ):
        assert provider_of(result, registry, hooks).id == "acp"
