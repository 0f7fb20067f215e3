"""``run --approve ask``: the answers a person types, and a question the agent walks away from."""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest

from .conftest import Invoke, agent_command

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("wrong", ["²", "٣", "1.0", "-1", "0", "", "one", "1 2", "1" * 5000])
def test_an_answer_that_is_no_options_number_asks_again(
    cli: Invoke, workspace: Path, wrong: str
) -> None:
    result = cli(
        "run",
        "--command",
        agent_command("edit", str(workspace)),
        "--cwd",
        str(workspace),
        "--approve",
        "ask",
        "edit the files",
        input=f"{wrong}\n3\n",
    )
    assert result.exit_code == 0, result.stderr
    assert "Answer with an option's number, 1 to 3." in result.stderr
    assert "    reject (reject_once)\n" in result.stdout
    assert (workspace / "existing.txt").read_text() == "alpha\nbeta\n"


def test_the_agent_exiting_while_a_question_waits_ends_the_command(tmp_path: Path) -> None:
    """The person never answers (stdin stays open): the command must not wait for them."""
    agent = shlex.join([sys.executable, str(HERE / "hostile_agent.py"), "ask-then-exit"])
    out, err = tmp_path / "out", tmp_path / "err"
    command = [sys.executable, "-m", "acp_adapters", "run", "--approve", "ask"]
    command += ["--cwd", str(tmp_path), "--command", agent, "go"]
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=stdout, stderr=stderr)
        started = time.monotonic()
        try:
            code = process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            assert process.stdin is not None
            process.stdin.close()
            process.wait(timeout=30)
    said = err.read_text(encoding="utf-8")
    assert code == 1, f"still running after {time.monotonic() - started:.0f}s:\n{said}"
    assert "? permission: edit \\x1b]0;owned\\x07x\n" in said
    assert said.splitlines()[-1] == (
        "Error: the agent exited (exit status 3); its stderr ends with: "
        "fatal: \\x1b]0;owned\\x07gone; run again with --debug to see more"
    )


def test_a_command_nobody_asked_permission_for_is_asked_with_its_line_cwd_and_variables() -> None:
    from acp_adapters import ClientAction, PermissionQuery
    from acp_adapters.cli.asking import TerminalAsk
    from acp_adapters.cli.render import Renderer
    from acp_adapters.plugin.permissions import ACTION_OPTIONS

    action = ClientAction(
        kind="command",
        argv=("/bin/sh", "-c", "rm -rf ~\x1b[2J"),
        command_line="rm -rf ~\x1b[2J",
        cwd="/ws",
        env_names=("TOKEN",),
    )
    query = PermissionQuery(request_id="c1", title="run it", options=ACTION_OPTIONS, action=action)
    text = click.unstyle(TerminalAsk(Renderer()).question(query, list(ACTION_OPTIONS)))
    assert "$ rm -rf ~\\x1b[2J" in text  # escaped: agent text never drives the terminal
    assert "in /ws" in text
    assert "with TOKEN set" in text
    assert "1) Allow" in text
    assert "2) Refuse" in text


def test_a_write_is_asked_with_its_path_and_patch() -> None:
    from acp_adapters import ClientAction, PermissionQuery
    from acp_adapters.cli.asking import TerminalAsk
    from acp_adapters.cli.render import Renderer
    from acp_adapters.plugin.permissions import ACTION_OPTIONS

    patch = "--- a.txt\n+++ a.txt\n@@ -1,1 +1,1 @@\n-one\n+two\n"
    action = ClientAction(kind="write", path="/ws/a.txt", patch=patch)
    query = PermissionQuery(request_id="c1", options=ACTION_OPTIONS, action=action)
    text = click.unstyle(TerminalAsk(Renderer()).question(query, list(ACTION_OPTIONS)))
    assert "write /ws/a.txt" in text
    assert "-one" in text
    assert "+two" in text
