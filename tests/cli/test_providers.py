"""``acp-adapters providers``: the installed providers, their plugin and launch command."""

from __future__ import annotations

import json
from pathlib import Path

import pluggy
import pytest

from acp_adapters import get_plugin_manager, hookimpl
from acp_adapters.cli import providers_command

from .conftest import Invoke, one_error_line


def test_providers_table(cli: Invoke) -> None:
    result = cli("providers", env={"ACP_ADAPTERS_PLUGINS": "grok,codex"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["ID", "NAME", "PLUGIN", "COMMAND"]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert sorted(rows) == ["acp", "codex", "grok"]
    assert rows["grok"].split()[-4:] == ["npx", "@xai-official/grok@1.0.41", "agent", "stdio"]
    assert "Grok Build" in rows["grok"]
    assert " grok " in rows["grok"]
    assert rows["acp"].endswith("(use --command)")


def test_providers_json(cli: Invoke) -> None:
    result = cli("providers", "--format", "json", env={"ACP_ADAPTERS_PLUGINS": "grok"})
    assert result.exit_code == 0
    providers = {p["id"]: p for p in json.loads(result.output)}
    assert sorted(providers) == ["acp", "grok"]
    grok = providers["grok"]
    assert grok["plugin"] == "grok"
    assert grok["command"] == ["npx", "@xai-official/grok@1.0.41", "agent", "stdio"]
    assert grok["protocol_version"] == 1
    assert grok["env_needs"] == ["XAI_API_KEY"]
    assert "grok" in grok["agent_names"]
    assert providers["acp"]["command"] is None


def test_every_installed_plugin_is_listed(cli: Invoke) -> None:
    result = cli("providers", "--format", "json", env={"ACP_ADAPTERS_PLUGINS": None})
    plugins = {p["plugin"] for p in json.loads(result.output)}
    assert {"grok", "codex", "claude", "registry"} <= plugins


def test_a_plugin_that_fails_is_one_line(cli: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        @hookimpl
        def register_providers(self, register: object) -> None:
            raise RuntimeError("registry file missing")

    def plugin_manager() -> pluggy.PluginManager:
        pm = get_plugin_manager(load_entrypoints=False, environ={})
        pm.register(Broken(), name="test-broken")
        return pm

    monkeypatch.setattr(providers_command, "get_plugin_manager", plugin_manager)
    result = cli("providers")
    assert result.exit_code == 1
    line = one_error_line(result)
    assert "plugin 'test-broken' failed in register_providers: registry file missing" in line
    assert "ACP_ADAPTERS_DISABLE_PLUGINS" in line


def test_a_registry_binary_not_installed_says_its_first_run_installs_it(
    cli: Invoke, tmp_path: Path
) -> None:
    env = {"ACP_ADAPTERS_PLUGINS": "registry", "ACP_ADAPTERS_CACHE": str(tmp_path / "cache")}
    result = cli("providers", env=env)
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line for line in result.output.splitlines()[1:]}
    binaries = [row for row in rows.values() if "a binary for" in row]
    assert binaries  # the bundled registry has binary agents
    for row in binaries:
        assert row.endswith(": installed by its first run)")
    assert not any(
        row.endswith("(use --command)") for key, row in rows.items() if key.startswith("registry:")
    )
