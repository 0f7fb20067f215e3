"""``acp-adapters registry`` and ``run --provider registry:ID``, end to end: a registry file
whose binary agent (a small script, as tar.gz and zip) is served from 127.0.0.1, installed on
first use, and run as a real ACP agent."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner, Result

import acp_adapters
from acp_adapters.cli import main
from acp_adapters.registry import current_platform

from .archives import File, sha256_hex, tar_gz, zip_archive
from .http_server import LoopbackServer

AGENT = Path(__file__).resolve().parents[1] / "agents" / "sessions_agent.py"
PLATFORM = current_platform()
pytestmark = pytest.mark.skipif(PLATFORM is None, reason="no registry platform for this machine")


def script() -> bytes:
    """The agent's binary: a script that starts the scripted ACP agent."""
    return (
        f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(str(AGENT))} "$@"\n'.encode()
    )


def entry(agent_id: str, url: str, sha: str | None, cmd: str = "./bin/tool") -> dict[str, Any]:
    target: dict[str, Any] = {"archive": url, "cmd": cmd, "args": ["--offer", "list"]}
    if sha is not None:
        target["sha256"] = sha
    return {
        "id": agent_id,
        "name": f"Tool {agent_id}",
        "version": "1.2.3",
        "description": "A scripted agent, as a binary",
        "distribution": {"binary": {PLATFORM: target}},
    }


@pytest.fixture
def served(tmp_path: Path) -> Any:
    with LoopbackServer() as server:
        files = [File("bin/tool", script(), mode=0o755)]
        good_tar, good_zip = tar_gz(files), zip_archive(files)
        agents = [
            entry("tool-tar", server.add("/tool.tar.gz", good_tar), sha256_hex(good_tar)),
            entry("tool-zip", server.add("/tool.zip", good_zip), sha256_hex(good_zip)),
            entry("tool-bad-sum", server.add("/bad.tar.gz", good_tar), "0" * 64),
            {"id": "Not An Id", "name": "", "version": "x", "description": "", "distribution": {}},
        ]
        registry = tmp_path / "registry.json"
        registry.write_text(json.dumps({"version": "1.0.0", "agents": agents, "extensions": []}))
        yield server, registry


def cli(tmp_path: Path, registry: Path, *args: str) -> Result:
    env = {
        "ACP_ADAPTERS_REGISTRY": str(registry),
        "ACP_ADAPTERS_CACHE": str(tmp_path / "cache"),
        "ACP_ADAPTERS_LOOPBACK_HTTP": "1",
        "NO_COLOR": "1",
    }
    try:
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:
        runner = CliRunner()
    result = runner.invoke(main, list(args), env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def test_list_shows_the_agents_and_reports_the_invalid_entry(served: Any, tmp_path: Path) -> None:
    _, registry = served
    result = cli(tmp_path, registry, "registry", "list")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["ID", "VERSION", "RUNS", "WITH", "NAME"]
    assert [line.split()[0] for line in lines[1:]] == ["tool-tar", "tool-zip", "tool-bad-sum"]
    assert "binary (not installed)" in lines[1]
    assert "skipped agent #3" in result.stderr


@pytest.mark.parametrize("agent_id", ["tool-tar", "tool-zip"])
def test_install_then_path_then_show(served: Any, tmp_path: Path, agent_id: str) -> None:
    _, registry = served
    installed = cli(tmp_path, registry, "registry", "install", agent_id)
    assert installed.exit_code == 0, installed.stderr
    executable = Path(installed.stdout.strip())
    assert executable.name == "tool"
    assert executable.is_relative_to(tmp_path / "cache")
    found = cli(tmp_path, registry, "registry", "path", agent_id)
    assert found.stdout.strip() == str(executable)
    shown = json.loads(
        cli(tmp_path, registry, "registry", "show", agent_id, "--format", "json").stdout
    )
    assert shown["installed"] == str(executable)
    assert shown["command"] == [str(executable), "--offer", "list"]


def test_a_checksum_mismatch_installs_nothing(served: Any, tmp_path: Path) -> None:
    _, registry = served
    result = cli(tmp_path, registry, "registry", "install", "tool-bad-sum")
    assert result.exit_code == 1
    assert "tool-bad-sum" in result.stderr
    assert "sha256" in result.stderr
    assert cli(tmp_path, registry, "registry", "path", "tool-bad-sum").exit_code == 1


def test_run_installs_a_binary_agent_on_first_use_and_runs_it(served: Any, tmp_path: Path) -> None:
    server, registry = served
    workspace = tmp_path / "ws"
    workspace.mkdir()
    args = (
        "run",
        "--provider",
        "registry:tool-tar",
        "--cwd",
        str(workspace),
        "--format",
        "json",
        "hello",
    )
    first = cli(tmp_path, registry, *args)
    assert first.exit_code == 0, first.stderr
    rows = json.loads(first.stdout)
    assert [r.get("text") for r in rows if r["kind"] == "assistant_message"] == ["s-1: hello"]
    assert len(server.requests_for("/tool.tar.gz")) == 1
    again = cli(tmp_path, registry, *args)
    assert again.exit_code == 0, again.stderr
    assert len(server.requests_for("/tool.tar.gz")) == 1  # installed once


def test_a_binary_agent_speaking_through_the_replay_agent_runs_end_to_end(
    tmp_path: Path,
) -> None:
    """The archive's program is the replay agent playing a recorded session: the registry
    agent is a real ACP agent process, installed from 127.0.0.1 and run by ``run``."""
    capture = tmp_path / "recorded.jsonl"
    workspace = tmp_path / "ws"
    workspace.mkdir()

    async def record() -> None:
        command = [sys.executable, str(AGENT)]
        async with acp_adapters.connect(command=command, cwd=workspace, record=capture) as s:
            await s.prompt("hello")

    anyio.run(record)
    replay = (
        f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -I -m acp_adapters.replay "
        f"--match methods {shlex.quote(str(capture))}\n"
    ).encode()
    with LoopbackServer() as server:
        archive = tar_gz([File("replayer/bin/agent", replay, mode=0o755)])
        agent = entry(
            "replayed",
            server.add("/replayed.tgz", archive),
            sha256_hex(archive),
            cmd="replayer/bin/agent",
        )
        agent["distribution"]["binary"][PLATFORM].pop("args")
        registry = tmp_path / "registry.json"
        registry.write_text(json.dumps({"version": "1.0.0", "agents": [agent], "extensions": []}))
        result = cli(
            tmp_path,
            registry,
            "run",
            "--provider",
            "registry:replayed",
            "--cwd",
            str(workspace),
            "--format",
            "json",
            "hello",
        )
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [r.get("text") for r in rows if r["kind"] == "assistant_message"] == ["s-1: hello"]


def test_an_unknown_agent_is_a_usage_error(served: Any, tmp_path: Path) -> None:
    _, registry = served
    result = cli(tmp_path, registry, "registry", "show", "nope")
    assert result.exit_code == 2
    assert "has no agent 'nope'" in result.stderr


def test_a_registry_named_by_url_is_fetched_then_read_from_the_cache(tmp_path: Path) -> None:
    with LoopbackServer() as server:
        agents = [entry("tool-url", "https://example.invalid/tool.tar.gz", "0" * 64)]
        body = json.dumps({"version": "1.0.0", "agents": agents, "extensions": []}).encode()
        url = server.add("/registry.json", body, etag='"one"')
        listed = cli(tmp_path, tmp_path / "unused.json", "registry", "list", "--registry", url)
        assert listed.exit_code == 0, listed.stderr
        assert "tool-url" in listed.stdout
        again = cli(tmp_path, tmp_path / "unused.json", "registry", "list", "--registry", url)
        assert "tool-url" in again.stdout
        (_, second) = server.requests_for("/registry.json")
        assert second.headers.get("If-None-Match") == '"one"'


def test_every_json_output_of_a_hostile_registry_escapes_what_a_terminal_acts_on(
    tmp_path: Path,
) -> None:
    hostile = entry("tool-x", "https://example.invalid/x.tar.gz", "0" * 64)
    hostile["name"] = "Tool \u009b31m red \u202e evil"
    hostile["description"] = "line\u2028break \x7f"
    registry = tmp_path / "registry.json"
    registry.write_text(json.dumps({"version": "1.0.0", "agents": [hostile], "extensions": []}))
    env = {"ACP_ADAPTERS_PLUGINS": "registry"}
    outputs = [
        cli(tmp_path, registry, "registry", "list", "--format", "json"),
        cli(tmp_path, registry, "registry", "show", "tool-x", "--format", "json"),
    ]
    runner = CliRunner()
    outputs.append(
        runner.invoke(
            main,
            ["providers", "--format", "json"],
            env={
                **env,
                "ACP_ADAPTERS_REGISTRY": str(registry),
                "ACP_ADAPTERS_CACHE": str(tmp_path),
            },
        )
    )
    for result in outputs:
        assert result.exit_code == 0, result.output
        for raw in ("\u009b", "\u202e", "\u2028", "\x7f"):
            assert raw not in result.stdout
        assert "\\u009b" in result.stdout
        assert "\\u202e" in result.stdout
        assert "Tool \u009b31m red \u202e evil" in json.dumps(
            json.loads(result.stdout), ensure_ascii=False
        )
