"""The registry plugin: one generic provider per agent of the ACP registry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import acp_adapters_registry
from acp_adapters import ProviderRegistry
from acp_adapters.testing import plugin_manager
from acp_adapters_registry.registry import read_registry

SPEC = Path(__file__).parent.parent.parent / "spec" / "registry" / "agents"


def test_one_provider_per_registry_agent() -> None:
    registry = ProviderRegistry.collect(plugin_manager(acp_adapters_registry))
    ids = {p.id for p in registry if p.id.startswith("registry:")}
    assert ids == {f"registry:{path.stem}" for path in SPEC.glob("*.json")}
    gemini = registry.get("registry:gemini")
    assert gemini.launch is not None
    assert (gemini.launch.command, gemini.launch.args) == (
        "npx",
        ("@google/gemini-cli@0.37.1", "--acp"),
    )
    auggie = registry.get("registry:auggie")
    assert auggie.launch is not None
    assert auggie.launch.env == {"AUGMENT_DISABLE_AUTO_UPDATE": "1"}
    assert registry.get("registry:opencode").launch is None  # binary distributions: not yet
    assert registry.for_agent("Gemini CLI").id == "acp"  # registry providers claim no agent names


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
    registry = ProviderRegistry.collect(plugin_manager(acp_adapters_registry))
    assert [p.id for p in registry if p.id.startswith("registry:")] == ["registry:gemini"]
    assert capsys.readouterr().err.count("skipped") == 5


@pytest.mark.parametrize("content", ["", "[]", '{"agents": 5}', "{not json"])
def test_an_unreadable_registry_gives_no_providers(tmp_path: Path, content: str) -> None:
    path = tmp_path / "registry.json"
    path.write_text(content)
    agents, skipped = read_registry(path)
    assert agents == []
    assert len(skipped) == 1
