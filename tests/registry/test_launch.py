"""Resolving how to launch a registry agent: the exact command lines, the environment."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from acp_adapters.registry import (
    RegistryAgent,
    RegistryError,
    base_environment,
    bundled_registry,
    current_platform,
    resolve_launch,
)

from .http_server import LoopbackServer


def _agent(distribution: dict[str, Any], version: str = "1.2.3") -> RegistryAgent:
    return RegistryAgent.model_validate(
        {
            "id": "demo",
            "name": "Demo",
            "version": version,
            "description": "a demo agent",
            "distribution": distribution,
        }
    )


BINARY = {
    "linux-x86_64": {
        "archive": "https://example.com/demo-linux.tar.gz",
        "cmd": "./bin/demo",
        "args": ["acp", "--stdio"],
        "env": {"DEMO_AUTO_UPDATE": "0"},
    },
    "windows-x86_64": {"archive": "https://example.com/demo.zip", "cmd": "./demo.exe"},
}
NPX = {"package": "@demo/agent@1.2.3", "args": ["--acp"], "env": {"DEMO_NPX": "1"}}
UVX = {"package": "demo-agent==1.2.3", "args": ["acp"], "env": {"DEMO_UVX": "1"}}
ALL = {"binary": BINARY, "npx": NPX, "uvx": UVX}


@pytest.mark.parametrize(
    ("system", "machine", "expected"),
    [
        ("Linux", "x86_64", "linux-x86_64"),
        ("Linux", "aarch64", "linux-aarch64"),
        ("Linux", "arm64", "linux-aarch64"),
        ("Darwin", "arm64", "darwin-aarch64"),
        ("Darwin", "x86_64", "darwin-x86_64"),
        ("Windows", "AMD64", "windows-x86_64"),
        ("Windows", "ARM64", "windows-aarch64"),
        ("Windows", "x64", "windows-x86_64"),
        ("Linux", "i686", None),
        ("Linux", "armv7l", None),
        ("FreeBSD", "amd64", None),
        ("Java", "", None),
    ],
)
def test_platform_detection(system: str, machine: str, expected: str | None) -> None:
    assert current_platform(system, machine) == expected


def test_the_platform_of_this_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("platform.system", lambda: "Darwin")
    monkeypatch.setattr("platform.machine", lambda: "arm64")
    assert current_platform() == "darwin-aarch64"


def test_auto_prefers_the_binary_then_npx_then_uvx(tmp_path: Path) -> None:
    agent = _agent(ALL)
    binary = resolve_launch(agent, platform="linux-x86_64", base_env={})
    assert (binary.kind, binary.command, binary.installed) == ("binary", None, False)
    assert binary.target is not None
    assert binary.target.archive == "https://example.com/demo-linux.tar.gz"
    assert (binary.args, binary.version, binary.platform) == (
        ("acp", "--stdio"),
        "1.2.3",
        "linux-x86_64",
    )
    with pytest.raises(RegistryError, match=r"not installed.*acp-adapters registry install demo"):
        _ = binary.argv
    installed = resolve_launch(agent, platform="linux-x86_64", base_env={}, install_dir=tmp_path)
    assert installed.argv == (str(tmp_path / "bin" / "demo"), "acp", "--stdio")
    assert installed.env == {"DEMO_AUTO_UPDATE": "0"}

    # no binary for this platform: npx
    assert resolve_launch(agent, platform="darwin-aarch64", base_env={}).kind == "npx"
    assert resolve_launch(agent, platform=None, base_env={}).kind in ("binary", "npx")
    # no npx: uvx
    no_npx = _agent({"binary": BINARY, "uvx": UVX})
    assert resolve_launch(no_npx, platform="darwin-aarch64", base_env={}).kind == "uvx"


def test_a_forced_distribution(tmp_path: Path) -> None:
    agent = _agent(ALL)
    assert resolve_launch(agent, distribution="uvx", platform="linux-x86_64").kind == "uvx"
    assert resolve_launch(agent, distribution="npx", platform="linux-x86_64").kind == "npx"
    windows = resolve_launch(
        agent, distribution="binary", platform="windows-x86_64", install_dir=tmp_path
    )
    assert windows.argv == (str(tmp_path / "demo.exe"),)
    with pytest.raises(
        RegistryError,
        match=r"'demo' has no binary for this platform \(darwin-aarch64\): "
        "binaries for linux-x86_64, windows-x86_64",
    ):
        resolve_launch(agent, distribution="binary", platform="darwin-aarch64")


@pytest.mark.parametrize(
    ("distribution", "kind", "offers"),
    [
        ({"npx": NPX}, "uvx", "npx"),
        ({"npx": NPX}, "binary", "npx"),
        ({"uvx": UVX}, "npx", "uvx"),
        ({"binary": BINARY}, "npx", "binary"),
    ],
)
def test_a_forced_kind_the_agent_lacks_is_an_error(
    distribution: dict[str, Any], kind: Any, offers: str
) -> None:
    with pytest.raises(
        RegistryError, match=f"'demo' has no {kind} distribution \\(it offers: {offers}\\)"
    ):
        resolve_launch(_agent(distribution), distribution=kind, platform="linux-x86_64")


def test_nothing_for_this_platform_is_an_error() -> None:
    with pytest.raises(RegistryError, match=r"no distribution for this platform \(linux-aarch64\)"):
        resolve_launch(_agent({"binary": BINARY}), platform="linux-aarch64")


@pytest.mark.parametrize(
    ("package", "version", "argv"),
    [
        ("@demo/agent@1.2.3", "9.9.9", ("npx", "-y", "@demo/agent@1.2.3", "--acp")),
        ("@demo/agent", "1.2.3", ("npx", "-y", "@demo/agent@1.2.3", "--acp")),  # the entry's
        ("demo-agent", "2.0.0-beta.1", ("npx", "-y", "demo-agent@2.0.0-beta.1", "--acp")),
        ("demo-agent@v1.0.0", "1.0.0", ("npx", "-y", "demo-agent@1.0.0", "--acp")),
        (
            "@google/gemini-cli@0.37.1",
            "0.37.0",
            ("npx", "-y", "@google/gemini-cli@0.37.1", "--acp"),
        ),
    ],
)
def test_npx_runs_an_exact_version(package: str, version: str, argv: tuple[str, ...]) -> None:
    agent = _agent({"npx": {"package": package, "args": ["--acp"]}}, version=version)
    launch = resolve_launch(agent, base_env={})
    assert launch.argv == argv
    assert launch.version == argv[2].rsplit("@", 1)[1]


@pytest.mark.parametrize(
    ("package", "version", "argv"),
    [
        ("demo-agent==1.2.3", "9.9.9", ("uvx", "--from", "demo-agent==1.2.3", "demo-agent", "acp")),
        ("demo-agent", "1.2.3", ("uvx", "--from", "demo-agent==1.2.3", "demo-agent", "acp")),
        ("demo-agent@1.2.3", "9.9.9", ("uvx", "--from", "demo-agent==1.2.3", "demo-agent", "acp")),
        (
            "hermes-agent[acp]==0.4.1",
            "0.4.1",
            ("uvx", "--from", "hermes-agent[acp]==0.4.1", "hermes-agent", "acp"),
        ),
        (
            "fast-agent-acp == 0.10.48",
            "0.10.48",
            ("uvx", "--from", "fast-agent-acp==0.10.48", "fast-agent-acp", "acp"),
        ),
        ("demo==1.0rc1", "1.0.0", ("uvx", "--from", "demo==1.0rc1", "demo", "acp")),
    ],
)
def test_uvx_runs_an_exact_version(package: str, version: str, argv: tuple[str, ...]) -> None:
    agent = _agent({"uvx": {"package": package, "args": ["acp"]}}, version=version)
    assert resolve_launch(agent, base_env={}).argv == argv


@pytest.mark.parametrize(
    "package",
    [
        "@demo/agent@latest",
        "@demo/agent@^1.2.0",
        "demo@1.x",
        "demo@>=1.0.0",
        "github:demo/agent",
        "../demo",
    ],
)
def test_npx_refuses_a_tag_or_a_range(package: str) -> None:
    agent = _agent({"npx": {"package": package}})
    with pytest.raises(RegistryError, match="'demo': npm package"):
        resolve_launch(agent)


@pytest.mark.parametrize(
    "package",
    [
        "demo@latest",
        "demo>=1.0",
        "demo~=1.2",
        "demo==1.*",
        "demo==1.0; python_version>'3'",
        "git+https://x/demo",
    ],
)
def test_uvx_refuses_a_range(package: str) -> None:
    agent = _agent({"uvx": {"package": package}})
    with pytest.raises(RegistryError, match="'demo': uvx package"):
        resolve_launch(agent)


def test_no_version_and_an_entry_version_that_is_not_exact_is_refused() -> None:
    agent = _agent({"npx": {"package": "demo"}}, version="1.2.3-or-so!")
    with pytest.raises(RegistryError, match="not an exact one"):
        resolve_launch(agent)


def test_the_environment_keeps_no_secret_of_the_parent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET", "hunter2")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("HOME", "/home/demo")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    monkeypatch.setenv("npm_config_cache", "/tmp/npm-cache")
    monkeypatch.setenv("UV_OFFLINE", "1")
    monkeypatch.setenv("https_proxy", "http://proxy:3128")
    agent = _agent(ALL)
    for kind in ("npx", "uvx", "binary"):
        env = resolve_launch(
            agent,
            distribution=kind,
            platform="linux-x86_64",
            extra_env={"DEMO_TOKEN": "from-the-application", "DEMO_NPX": "overridden"},
        ).env
        assert "SECRET" not in env
        assert "OPENAI_API_KEY" not in env
        assert "hunter2" not in env.values()
        assert env["PATH"] == "/usr/bin:/bin"
        assert env["HOME"] == "/home/demo"
        assert env["LC_ALL"] == "C.UTF-8"
        assert env["npm_config_cache"] == "/tmp/npm-cache"
        assert env["UV_OFFLINE"] == "1"
        assert env["https_proxy"] == "http://proxy:3128"
        assert env["DEMO_TOKEN"] == "from-the-application"
        assert env["DEMO_NPX"] == "overridden"  # the application's wins over the entry's
    npx = resolve_launch(agent, distribution="npx", platform="linux-x86_64").env
    assert "DEMO_UVX" not in npx
    binary = resolve_launch(agent, distribution="binary", platform="linux-x86_64").env
    assert binary["DEMO_AUTO_UPDATE"] == "0"
    assert "DEMO_NPX" not in binary


def test_the_entry_env_wins_over_the_base() -> None:
    agent = _agent({"npx": {"package": "demo@1.0.0", "env": {"TERM": "dumb"}}})
    env = resolve_launch(agent, base_env={"TERM": "xterm", "PATH": "/bin", "AWS_SECRET": "x"}).env
    assert env == {"TERM": "dumb", "PATH": "/bin"}


def test_base_environment_on_windows_names() -> None:
    environ = {
        "Path": "C:\\Windows",
        "SystemRoot": "C:\\Windows",
        "APPDATA": "C:\\Users\\d\\AppData\\Roaming",
        "ProgramFiles(x86)": "C:\\Program Files (x86)",
        "GITHUB_TOKEN": "ghp_fake",
    }
    assert base_environment(environ) == {k: v for k, v in environ.items() if k != "GITHUB_TOKEN"}


def test_base_environment_of_the_process() -> None:
    env = base_environment(os.environ)
    assert set(env) <= set(os.environ)


@pytest.mark.parametrize(
    "cmd", ["../demo", "/bin/sh", "bin/../../demo", "C:\\Windows\\cmd.exe", "\\\\server\\x"]
)
def test_a_cmd_outside_the_archive_is_refused(cmd: str) -> None:
    binary = {"linux-x86_64": {"archive": "https://example.com/a.tar.gz", "cmd": cmd}}
    with pytest.raises(ValueError, match="relative path inside the archive"):
        _agent({"binary": binary})


def test_a_cmd_through_a_symlink_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    install = tmp_path / "install"
    install.mkdir()
    (install / "bin").symlink_to(outside, target_is_directory=True)
    agent = _agent({"binary": BINARY})
    with pytest.raises(RegistryError, match="leads out of"):
        resolve_launch(agent, platform="linux-x86_64", install_dir=install)


def test_the_bundled_agents_resolve_on_every_platform() -> None:
    """Every bundled npx agent runs an exact version; each binary agent resolves where it
    has a binary, and falls back to nothing (an error) where it has none."""
    commands = {}
    for agent in bundled_registry().agents:
        launch = resolve_launch(agent, platform="linux-x86_64", base_env={})
        commands[agent.id] = launch.command or launch.kind
    assert commands == {
        "auggie": ("npx", "-y", "@augmentcode/auggie@0.15.0"),
        "claude-acp": ("npx", "-y", "@agentclientprotocol/claude-agent-acp@0.85.1"),
        "claude-code-acp": ("npx", "-y", "@zed-industries/claude-code-acp@0.16.0"),
        "codex-acp": ("npx", "-y", "@agentclientprotocol/codex-acp@1.4.0"),
        "factory-droid": "binary",
        "gemini": ("npx", "-y", "@google/gemini-cli@0.37.1"),
        "github-copilot": ("npx", "-y", "@github/copilot-language-server@1.425.0"),
        "grok-build": ("npx", "-y", "@xai-official/grok@1.0.30"),
        "kimi": "binary",
        "mistral-vibe": "binary",
        "opencode": "binary",
        "qoder": ("npx", "-y", "@qoder-ai/qodercli@0.1.26"),
        "qwen-code": ("npx", "-y", "@qwen-code/qwen-code@0.9.1"),
    }


def test_a_binary_agent_installed_by_the_installer_launches(tmp_path: Path) -> None:
    """``install_binary`` (what ``run --provider registry:ID`` calls) then ``launch_for``."""
    import acp_adapters_registry
    from acp_adapters.registry.install import install_binary

    with LoopbackServer() as server:
        url = server.add("/demo-agent", b"#!/bin/sh\necho demo\n")
        agent = RegistryAgent.model_validate(
            {
                "id": "demo",
                "name": "Demo",
                "version": "1.0.0",
                "description": "a demo agent",
                "distribution": {
                    "binary": {"linux-x86_64": {"archive": url, "cmd": "./demo", "args": ["acp"]}}
                },
            }
        )
        cache = tmp_path / "agents"
        before = acp_adapters_registry.launch_for(agent, platform="linux-x86_64", cache_dir=cache)
        assert (before.kind, before.command) == ("binary", None)
        target = before.target
        assert target is not None
        path = install_binary(
            agent.id,
            agent.version,
            "linux-x86_64",
            archive_url=target.archive,
            sha256=target.sha256,
            cmd=target.cmd,
            cache_dir=cache,
            allow_loopback_http=True,
        )
    after = acp_adapters_registry.launch_for(
        agent, platform="linux-x86_64", base_env={}, cache_dir=cache
    )
    assert after.argv == (str(path), "acp")
    assert (
        acp_adapters_registry.installed_dir(agent, "linux-x86_64", cache_dir=cache) == path.parent
    )
