"""``acp-adapters run``: a live session with the scripted fake agent."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from acp_adapters.cli.rows import FIELDS

from .conftest import Invoke, agent_command, one_error_line


def test_basic_text(cli: Invoke) -> None:
    result = cli("run", "--command", agent_command("basic"), "hello", "there")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        "[1] user_message  completed\n"
        "    hello there\n"
        "\n"
        "[2] assistant_message  completed\n"
        "    you said: hello there\n"
        "\n"
        "acp, protocol 1: 2 items in 1 turn; stop reason end_turn\n"
    )
    assert result.stderr == ""


def test_basic_json(cli: Invoke) -> None:
    result = cli("run", "--format", "json", "--command", agent_command("basic"), "hello")
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [(r["kind"], r["status"], r["text"]) for r in rows] == [
        ("user_message", "completed", "hello"),
        ("assistant_message", "completed", "you said: hello"),
    ]
    assert all(tuple(row) == FIELDS for row in rows)
    assert rows[0]["session_id"] == "fake-session"


def test_the_prompt_can_come_from_stdin(cli: Invoke) -> None:
    result = cli("run", "--command", agent_command("basic"), input="from a pipe\n")
    assert "    you said: from a pipe\n" in result.stdout


def test_a_v2_agent_streams_its_message(cli: Invoke) -> None:
    result = cli("run", "--command", agent_command("v2"), "hi")
    assert result.exit_code == 0, result.stderr
    assert "[2] assistant_message  completed\n    you said: hi\n" in result.stdout
    assert "protocol 2:" in result.stdout


def _edit(cli: Invoke, workspace: Path, *options: str, stdin: str | None = None) -> object:
    return cli(
        "run",
        "--command",
        agent_command("edit", str(workspace)),
        "--cwd",
        str(workspace),
        *options,
        "edit the files",
        input=stdin,
    )


def test_edit_with_full_access_shows_the_patches_and_records(
    cli: Invoke, workspace: Path, tmp_path: Path
) -> None:
    record = tmp_path / "records" / "edit.jsonl"
    record.parent.mkdir()  # a capture's folder is not made for it
    result = _edit(cli, workspace, "--approve", "full-access", "--record", str(record))
    assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
    out = result.stdout  # type: ignore[attr-defined]
    assert "[2] file_change  completed  Edit existing.txt\n    modify existing.txt  +1 -1\n" in out
    assert "    --- existing.txt\n    +++ existing.txt\n    @@ -1,2 +1,2 @@\n" in out
    assert "     alpha\n    -beta\n    +BETA changed\n" in out
    assert "    add new.txt  +1 -0\n    --- /dev/null\n    +++ new.txt\n" in out
    assert "    allow (allow_once)\n" in out
    assert out.splitlines()[-1] == (
        "acp, protocol 1: 5 items in 1 turn; 2 file changes (2 files, +2 -1), 1 approval; "
        "stop reason end_turn"
    )
    assert (workspace / "existing.txt").read_text() == "alpha\nBETA changed\n"
    assert (workspace / "new.txt").read_text() == "brand new\n"
    # The record is a capture: replayed offline, it gives the same file changes.
    lines = record.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["msg"]["method"] == "initialize"
    replayed = cli("replay", "--offline", "--format", "json", str(record))
    changes = [r for r in json.loads(replayed.stdout) if r["kind"] == "file_change"]
    assert [c["paths"] for c in changes] == [["<workspace>/existing.txt"], ["<workspace>/new.txt"]]
    assert changes[0]["diff_str"].endswith("-beta\n+BETA changed\n")


def test_edit_as_json(cli: Invoke, workspace: Path) -> None:
    result = _edit(cli, workspace, "--approve", "full-access", "--format", "json")
    rows = json.loads(result.stdout)  # type: ignore[attr-defined]
    changes = [r for r in rows if r["kind"] == "file_change"]
    real = workspace.resolve()
    assert [c["paths"] for c in changes] == [[f"{real}/existing.txt"], [f"{real}/new.txt"]]
    assert changes[0]["operations"] == {f"{real}/existing.txt": "modify"}
    assert changes[1]["operations"] == {f"{real}/new.txt": "add"}
    assert [(c["additions"], c["deletions"]) for c in changes] == [(1, 1), (1, 0)]
    assert changes[0]["diff_str"] == (
        f"--- {real}/existing.txt\n+++ {real}/existing.txt\n"
        "@@ -1,2 +1,2 @@\n alpha\n-beta\n+BETA changed\n"
    )
    assert changes[0]["patch_source"] == "checkpoint"  # the workspace, before and after


def test_read_only_refuses_the_edit(cli: Invoke, workspace: Path) -> None:
    result = _edit(cli, workspace, "--approve", "read-only")
    assert "[2] file_change  failed" in result.stdout  # type: ignore[attr-defined]
    assert "    reject (reject_once)" in result.stdout  # type: ignore[attr-defined]
    assert (workspace / "existing.txt").read_text() == "alpha\nbeta\n"


@pytest.mark.parametrize(
    ("answer", "chosen", "content"),
    [
        # Allowed, the agent goes on to its second edit: a question of its own.
        ("1\n1\n", "allow (allow_once)", "alpha\nBETA changed\n"),
        ("9\n3\n", "reject (reject_once)", "alpha\nbeta\n"),
    ],
)
def test_ask_shows_the_patch_and_takes_the_answer(
    cli: Invoke, workspace: Path, answer: str, chosen: str, content: str
) -> None:
    result = _edit(cli, workspace, "--approve", "ask", stdin=answer)
    assert result.exit_code == 0  # type: ignore[attr-defined]
    err = result.stderr  # type: ignore[attr-defined]
    assert err.startswith("\n? permission: Edit existing.txt\n    modify existing.txt  +1 -1\n")
    assert "    -beta\n    +BETA changed\n" in err
    options = (
        "    1) Allow (allow_once)\n    2) Always (allow_always)\n    3) Reject (reject_once)\n"
    )
    assert options in err
    assert f"    {chosen}\n" in result.stdout  # type: ignore[attr-defined]
    assert (workspace / "existing.txt").read_text() == content
    if answer.startswith("9"):
        assert "Answer with an option's number, 1 to 3." in err


def test_ask_without_an_answer_cancels_and_fails(cli: Invoke, workspace: Path) -> None:
    # No terminal, and the answers' input ended: no one can answer, the run fails (8).
    result = _edit(cli, workspace, stdin="")
    assert result.exit_code == 8  # type: ignore[attr-defined]
    assert "no answer: cancelled" in result.stderr  # type: ignore[attr-defined]
    assert "[3] approval_request  cancelled" in result.stdout  # type: ignore[attr-defined]
    assert (workspace / "existing.txt").read_text() == "alpha\nbeta\n"


def test_ask_keeps_stdout_json(cli: Invoke, workspace: Path) -> None:
    result = _edit(cli, workspace, "--format", "json", stdin="1\n1\n")
    rows = json.loads(result.stdout)  # type: ignore[attr-defined]
    approval = next(r for r in rows if r["kind"] == "approval_request")
    assert (approval["outcome"], approval["option_id"]) == ("selected", "allow")
    assert "? permission" in result.stderr  # type: ignore[attr-defined]


def test_what_the_connection_skipped_is_logged_only_with_debug(cli: Invoke) -> None:
    quiet = cli("run", "--command", agent_command("faults"), "hi")
    # Its messages nested too deep were dropped: the run says so, and fails; the lines that
    # were not JSON are logged only.
    assert quiet.exit_code == 1
    # The fake agent's lone surrogate is shown as U+FFFD, and the text goes on.
    assert "    a lone surrogate: \ufffd, still here\n" in quiet.stdout
    assert "nested deeper than 128 levels: it was dropped" in quiet.stdout
    assert "too deep: nested deeper than 128 levels" in one_error_line(quiet)
    assert "not_json" not in quiet.stderr
    loud = cli("run", "--debug", "--command", agent_command("faults"), "hi")
    assert "acp_adapters.transport: WARNING: acp connection: not_json: this banner" in loud.stderr
    assert loud.stdout == quiet.stdout


# --- errors ------------------------------------------------------------------------------


def test_an_agent_that_is_not_installed(cli: Invoke) -> None:
    result = cli("run", "--command", "no-such-agent-here --acp", "hi")
    assert result.exit_code == 3
    line = one_error_line(result)
    assert "'no-such-agent-here' was not found" in line
    assert "--command" in line


def test_a_providers_agent_that_is_not_installed(cli: Invoke, tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path), "ACP_ADAPTERS_PLUGINS": "grok"}  # no npx on this PATH
    result = cli("run", "--provider", "grok", "hi", env=env)
    assert result.exit_code == 3
    assert one_error_line(result) == (
        "Error: cannot start the agent (npx @xai-official/grok@1.0.41 agent stdio): 'npx' was "
        'not found; install it, or pass another --command "CMD ARGS"'
    )


def test_an_agent_that_crashes(cli: Invoke) -> None:
    result = cli("run", "--command", agent_command("crash"), "hi")
    assert result.exit_code == 1
    line = one_error_line(result)
    assert "the agent exited (exit status 3)" in line
    assert "fatal: the model went away" in line
    assert "    working" in result.stdout  # what came before the crash is shown


def test_a_crash_in_json_still_prints_what_came_before(cli: Invoke) -> None:
    result = cli("run", "--format", "json", "--command", agent_command("crash"), "hi")
    assert result.exit_code == 1
    rows = json.loads(result.stdout)
    assert [(r["kind"], r["status"]) for r in rows] == [
        ("user_message", "completed"),
        ("assistant_message", "completed"),
        ("error", "failed"),
    ]
    assert "the agent exited (exit status 3)" in one_error_line(result)


@pytest.mark.parametrize("where", ["group", "command"])
def test_debug_shows_the_traceback(cli: Invoke, where: str) -> None:
    args = ["run", "--command", agent_command("crash"), "hi"]
    result = cli(*(["--debug", *args] if where == "group" else [*args, "--debug"]))
    assert result.exit_code == 1
    assert "Traceback (most recent call last)" in result.stderr
    assert "ConnectionClosed" in result.stderr
    assert result.stderr.splitlines()[-1].startswith("Error: the agent exited")


def test_an_agent_that_wants_authentication(cli: Invoke) -> None:
    result = cli("run", "--command", agent_command("auth"), "hi", env={"FAKE_KEY": None})
    assert result.exit_code == 4
    line = one_error_line(result)
    assert "authenticate with one of: key" in line
    assert "credentials" in line


def _script_agent(tmp_path: Path, answers: str) -> str:
    """``--command`` for an agent that answers each request with ``ANSWERS[method]``."""
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import json, sys\n"
        f"ANSWERS = {answers}\n"
        "for line in sys.stdin:\n"
        "    message = json.loads(line)\n"
        "    if 'id' not in message or 'method' not in message:\n"
        "        continue\n"
        "    answer = {'jsonrpc': '2.0', 'id': message['id'], **ANSWERS[message['method']]}\n"
        "    print(json.dumps(answer), flush=True)\n",
        encoding="utf-8",
    )
    return shlex.join([sys.executable, str(agent)])


def test_an_agent_of_another_protocol_version(cli: Invoke, tmp_path: Path) -> None:
    command = _script_agent(tmp_path, "{'initialize': {'result': {'protocolVersion': 7}}}")
    result = cli("run", "--command", command, "hi")
    assert result.exit_code == 1
    assert "protocol version 7" in one_error_line(result)


def test_an_error_answer(cli: Invoke, tmp_path: Path) -> None:
    answers = (
        "{'initialize': {'result': {'protocolVersion': 1}},"
        " 'session/new': {'result': {'sessionId': 's'}},"
        " 'session/prompt': {'error': {'code': -32603, 'message': 'model overloaded'}}}"
    )
    result = cli("run", "--command", _script_agent(tmp_path, answers), "hi")
    assert result.exit_code == 1
    line = one_error_line(result)
    assert "the agent answered an error: model overloaded (code -32603)" in line


def test_an_error_answer_shows_its_data_escaped(cli: Invoke, tmp_path: Path) -> None:
    answers = (
        "{'initialize': {'result': {'protocolVersion': 1}},"
        " 'session/new': {'result': {'sessionId': 's'}},"
        " 'session/prompt': {'error': {'code': -32603, 'message': 'Internal error', 'data':"
        " {'details': 'model \\x1b[31mclaude-x\\x1b[0m not found', 'status': 404}}},"
        " 'session/cancel': {}}"
    )
    result = cli("run", "--command", _script_agent(tmp_path, answers), "hi")
    assert result.exit_code == 1
    assert one_error_line(result) == (
        "Error: the agent answered an error: Internal error (code -32603); data: "
        '{"details":"model \\u001b[31mclaude-x\\u001b[0m not found","status":404}; '
        "run again with --debug to see more"
    )


def test_an_agent_that_fails_at_once_shows_its_exit_status_and_stderr(cli: Invoke) -> None:
    for _ in range(5):  # its exit status used to race the write that failed
        result = cli("run", "--command", "sh -c 'echo missing API key >&2; exit 1'", "hi")
        assert result.exit_code == 1
        assert one_error_line(result) == (
            "Error: the agent exited (exit status 1); its stderr ends with: missing API key; "
            "run again with --debug to see more"
        )


def test_a_command_line_that_does_not_parse_is_a_usage_error(cli: Invoke) -> None:
    result = cli("run", "--command", '"unterminated', "hi")
    assert result.exit_code == 2
    assert one_error_line(result) == (
        'Error: --command is not a command line (No closing quotation): "unterminated; '
        'quote it as a shell would, --command "CMD ARGS"'
    )


def test_an_unknown_provider(cli: Invoke) -> None:
    result = cli("run", "--provider", "nobody", "hi")
    assert result.exit_code == 2
    assert "'nobody'" in one_error_line(result)


def test_a_provider_without_a_launch_command(cli: Invoke) -> None:
    result = cli("run", "--provider", "acp", "hi")
    assert result.exit_code == 2
    assert "pass --command" in one_error_line(result)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["hi"], "--provider ID or --command"),
        (["--command", "", "hi"], "--command is empty"),
        (["--command", "agent"], "give a prompt"),
        (["--command", "agent", "--approve", "sometimes", "hi"], "'sometimes' is not one of"),
        (["--command", "agent", "--cwd", "/no/such/folder", "hi"], "does not exist"),
    ],
)
def test_usage_errors(cli: Invoke, args: list[str], says: str) -> None:
    result = cli("run", *args, input="")
    assert result.exit_code == 2
    assert says in result.stderr
    assert "Traceback" not in result.stderr
