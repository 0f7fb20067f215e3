"""``acp-adapters`` starts fast: what ``--help`` and ``providers`` load, and what they do not.

``--help`` lists the commands from the group's table without importing any of them;
``providers`` collects every plugin's providers without the protocol's models, the
runtime, the projection, pydantic or jsonschema (the registry plugin's from what the
registry resolved to, remembered after the first run). The time it takes is measured by
``tox -e bench`` (tests/benchmarks/bench_startup.py), never asserted here: these tests hold
the structural facts that make it fast, and that the commands still work.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
from click.testing import CliRunner

import acp_adapters.cli
from acp_adapters.cli.commands import COMMANDS, main

#: What neither ``--help`` nor ``providers`` (once the registry is remembered) may load.
HEAVY = (
    "acp_adapters.protocol",
    "acp_adapters.runtime",
    "acp_adapters.projection",
    "acp_adapters.client",
    "acp_adapters.timeline",
    "pydantic",
    "jsonschema",
)

#: The program as ``acp-adapters`` runs it, writing the modules it loaded to $MODULES at exit.
_PROGRAM = """
import atexit, json, os, sys
def _modules():
    with open(os.environ["MODULES"], "w") as out:
        json.dump(sorted(sys.modules), out)
atexit.register(_modules)
from acp_adapters.cli.entry import main
main(sys.argv[1:])
"""


def _run(tmp_path: Path, *args: str, cache: Path | None = None) -> tuple[str, list[str]]:
    """``acp-adapters ARGS`` in a new process: its stdout, and the modules it loaded."""
    modules = tmp_path / "modules.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACP_ADAPTERS_")}
    env.update(
        ACP_ADAPTERS_CACHE=str(cache or tmp_path / "cache"), MODULES=str(modules), COLUMNS="80"
    )
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(modules.read_text())
    return done.stdout, loaded


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


def test_help_lists_every_command_without_importing_one(tmp_path: Path) -> None:
    out, modules = _run(tmp_path, "--help")
    listed = out.split("Commands:\n", 1)[1].splitlines()
    assert [line.split()[0] for line in listed] == sorted(COMMANDS)
    assert _heavy(modules) == []
    command_modules = {f"acp_adapters.cli.{module}" for module, _, _ in COMMANDS.values()}
    assert command_modules & set(modules) == set()


def test_help_lists_the_commands_as_when_they_are_loaded(tmp_path: Path) -> None:
    """Cut to the terminal's width exactly as click cuts the commands' own help."""
    fresh, _ = _run(tmp_path, "--help")  # 80 columns: click formats 78 wide
    with click.Context(main) as ctx:
        for name in COMMANDS:
            assert main.get_command(ctx, name) is not None
    loaded = CliRunner().invoke(main, ["--help"], prog_name="acp-adapters", terminal_width=78)
    assert loaded.exit_code == 0
    assert loaded.output == fresh


def _own_commands() -> dict[str, click.Command]:
    """Every command the cli package defines at the top (not a group's subcommand)."""
    found: list[click.Command] = []
    for info in pkgutil.iter_modules(acp_adapters.cli.__path__):
        module = importlib.import_module(f"acp_adapters.cli.{info.name}")
        for value in vars(module).values():
            callback = getattr(value, "callback", None)
            if (
                isinstance(value, click.Command)
                and value is not main
                and getattr(callback, "__module__", None) == module.__name__
            ):
                found.append(value)
    inner = {id(c) for g in found if isinstance(g, click.Group) for c in g.commands.values()}
    return {command.name or "": command for command in found if id(command) not in inner}


def test_the_table_names_every_command_with_its_own_short_help() -> None:
    own = _own_commands()
    assert set(own) == set(COMMANDS)
    for name, (module, attribute, short) in COMMANDS.items():
        command = getattr(importlib.import_module(f"acp_adapters.cli.{module}"), attribute)
        assert command is own[name]
        assert short == command.get_short_help_str(10_000), name
        stand_in = click.Command(name, help=short)
        for limit in (20, 45, 60, 74):
            assert stand_in.get_short_help_str(limit) == command.get_short_help_str(limit)


def test_providers_loads_no_model_once_the_registry_is_remembered(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first, _ = _run(tmp_path, "providers", cache=cache)  # validates the registry, in full
    again, modules = _run(tmp_path, "providers", cache=cache)
    assert again == first
    ids = {line.split()[0] for line in again.splitlines()[1:]}
    assert {"acp", "claude", "codex", "grok", "registry:gemini", "registry:opencode"} <= ids
    assert "(a binary for" in again or "(none for this platform)" in again
    assert _heavy(modules) == []


def test_providers_json_is_the_same_from_the_memo(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first, _ = _run(tmp_path, "providers", "--format", "json", cache=cache)
    again, modules = _run(tmp_path, "providers", "--format", "json", cache=cache)
    rows: list[dict[str, Any]] = json.loads(again)
    assert rows == json.loads(first)
    gemini = next(row for row in rows if row["id"] == "registry:gemini")
    assert gemini["command"][:2] == ["npx", "-y"]
    assert _heavy(modules) == []


def test_a_command_loads_what_it_uses(tmp_path: Path) -> None:
    """What the group and the plugins defer is imported when a command runs."""
    out, modules = _run(tmp_path, "replay", "--offline", str(_capture()))
    assert "items in" in out
    assert "acp_adapters.cli.replay_command" in modules
    assert "acp_adapters.projection" in modules


def _capture() -> Path:
    captures = Path(__file__).resolve().parents[1] / "data" / "captures"
    return min(captures.glob("*.jsonl"))
