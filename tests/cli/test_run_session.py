"""``acp-adapters run`` sets the session up, runs several turns, bounds them, and asks no one
when told: with the scripted agent of ``tests/agents/cli_agent.py``, which keeps what it got."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from acp_adapters.cli import asking, live, run_command
from acp_adapters.cli.errors import (
    EXIT_QUESTION,
    EXIT_SESSION_OPTION,
    EXIT_TIMEOUT,
    EXIT_USAGE,
)
from acp_adapters.cli.rows import FIELDS

from .conftest import ROOT, Invoke, agent_command, one_error_line

CLI_AGENT = ROOT / "tests" / "agents" / "cli_agent.py"


def cli_agent(*flags: str) -> str:
    return shlex.join([sys.executable, str(CLI_AGENT), *flags])


def _run(cli: Invoke, *args: str, agent: str | None = None, **kw: Any) -> Result:
    return cli("run", "--command", agent or cli_agent(), *args, **kw)


def _received(result: Result) -> dict[str, Any]:
    """What the agent said it received: the JSON of its answer to the prompt ``received``."""
    lines = result.stdout.splitlines()
    answer = lines[lines.index("    " + "received") + 3]
    return json.loads(answer.strip())  # type: ignore[no-any-return]


# --- --model, --mode, --set -------------------------------------------------------------


def test_the_settings_are_sent_in_order_before_the_first_prompt(cli: Invoke) -> None:
    result = _run(
        cli,
        "--model",
        "large",
        "--mode",
        "code",
        "--set",
        "fast=true",
        "--set",
        "effort=high",
        "--prompt",
        "settings",
        "--prompt",
        "received",
    )
    assert result.exit_code == 0, result.stderr
    assert "    mode code, model large, effort high, fast on\n" in result.stdout
    received = _received(result)
    assert received["set_config_option"] == [["model", "large"], ["fast", True], ["effort", "high"]]
    assert received["set_mode"] == ["code"]
    assert received["prompt"] == ["settings", "received"]
    # The session line shows the mode the agent is now in.
    assert result.stdout.splitlines()[-1] == "mode code"


def test_a_boolean_is_sent_as_a_boolean_whatever_its_case(cli: Invoke) -> None:
    result = _run(cli, "--set", "fast=FALSE", "received")
    assert result.exit_code == 0, result.stderr
    assert _received(result)["set_config_option"] == [["fast", False]]


@pytest.mark.parametrize(
    ("args", "agent", "says"),
    [
        (
            ["--model", "huge"],
            (),
            "Error: --model huge: the agent has no such model; its models: small (Small model), "
            "large (Large model)",
        ),
        (
            ["--model", "large"],
            ("no-model",),
            "Error: --model large: the agent has no model option (a config option of category "
            "model); its options: effort (low, medium, high), fast (true, false)",
        ),
        (
            ["--mode", "plan"],
            (),
            "Error: --mode plan: the agent has no such mode; its modes: ask (Ask), code (Code)",
        ),
        (["--mode", "code"], ("no-modes",), "Error: --mode code: the agent has no modes"),
        (
            ["--set", "fast=yes"],
            (),
            "Error: --set fast=yes: 'fast' is a boolean option: give true or false",
        ),
        (
            ["--set", "effort=max"],
            (),
            "Error: --set effort=max: 'effort' has no such choice; its choices: low (Low), "
            "medium (Medium), high (High)",
        ),
        (
            ["--set", "speed=1"],
            (),
            "Error: --set speed=1: the agent has no option 'speed'; its options: model (small, "
            "large), effort (low, medium, high), fast (true, false)",
        ),
    ],
)
def test_what_the_agent_does_not_offer_fails_before_any_prompt(
    cli: Invoke, args: list[str], agent: tuple[str, ...], says: str
) -> None:
    result = _run(cli, *args, "hello", agent=cli_agent(*agent))
    assert result.exit_code == EXIT_SESSION_OPTION
    assert one_error_line(result) == says
    assert result.stdout == ""  # no prompt was sent


def test_models_listed_the_old_way_are_named_not_set(cli: Invoke) -> None:
    result = _run(cli, "--model", "large", "hello", agent=cli_agent("legacy-models"))
    assert result.exit_code == EXIT_SESSION_OPTION
    line = one_error_line(result)
    assert "it lists models (small, large) for session/set_model" in line
    assert "this client does not send" in line


def test_an_option_is_checked_against_what_the_last_setting_left(cli: Invoke) -> None:
    """A --set after --model is checked against the options as the model's answer left them."""
    result = _run(cli, "--model", "small", "--set", "model=large", "received")
    assert result.exit_code == 0, result.stderr
    assert _received(result)["set_config_option"] == [["model", "small"], ["model", "large"]]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--set", "fast", "hi"], "'fast' is not KEY=VALUE"),
        (["--set", "=1", "hi"], "'=1' is not KEY=VALUE"),
        (["--prompt", "one", "two"], "as words or with --prompt, not both"),
        (["--prompt", " "], "--prompt is empty"),
        (["--timeout", "0", "hi"], "0"),
        (["--non-interactive", "maybe", "hi"], "'maybe' is not one of"),
        (["--format", "yaml", "hi"], "'yaml' is not one of"),
    ],
)
def test_usage_errors(cli: Invoke, args: list[str], says: str) -> None:
    result = _run(cli, *args, input="")
    assert result.exit_code == EXIT_USAGE
    assert says in result.stderr
    assert "Traceback" not in result.stderr


# --- several prompts ---------------------------------------------------------------------


def test_repeated_prompts_are_turns_of_one_session_in_order(cli: Invoke) -> None:
    result = _run(cli, "--prompt", "one", "--prompt", "two", "--prompt", "received")
    assert result.exit_code == 0, result.stderr
    assert _received(result)["prompt"] == ["one", "two", "received"]
    out = result.stdout
    assert out.index("    you said: one\n") < out.index("    you said: two\n")
    assert "[3] user_message  completed\n    two\n" in out
    assert "acp, protocol 1: 6 items in 3 turns; stop reason end_turn\n" in out


def test_repeated_prompts_as_json_are_one_array(cli: Invoke) -> None:
    result = _run(cli, "--format", "json", "--prompt", "one", "--prompt", "two")
    rows = json.loads(result.stdout)
    assert [(r["turn"], r["kind"], r["text"]) for r in rows] == [
        (1, "user_message", "one"),
        (1, "assistant_message", "you said: one"),
        (2, "user_message", "two"),
        (2, "assistant_message", "you said: two"),
    ]


@pytest.fixture
def at_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """stdin and stdout taken for a terminal (the lines still come from the test's input)."""
    monkeypatch.setattr(run_command, "_terminal", lambda stream: True)


@pytest.mark.usefixtures("at_a_terminal")
@pytest.mark.parametrize("end", ["\n", ""])
def test_on_a_terminal_prompts_are_read_until_an_empty_line_or_the_end(
    cli: Invoke, end: str
) -> None:
    result = _run(cli, input=f"hello\nreceived\n{end}")
    assert result.exit_code == 0, result.stderr
    assert _received(result)["prompt"] == ["hello", "received"]
    assert result.stderr.count("> ") == 3  # two prompts, and the line that ended
    assert "an empty line or Ctrl-D ends" in result.stderr
    assert "2 turns" in result.stdout.splitlines()[-2]


@pytest.mark.usefixtures("at_a_terminal")
def test_the_loop_and_the_questions_read_the_same_lines(cli: Invoke) -> None:
    result = _run(cli, input="clean\n1\nreceived\n\n")
    assert result.exit_code == 0, result.stderr
    assert "    permission: allow\n" in result.stdout
    assert _received(result)["prompt"] == ["clean", "received"]


# --- --timeout ---------------------------------------------------------------------------


def test_a_turn_past_its_timeout_is_cancelled_and_the_run_fails(cli: Invoke) -> None:
    result = _run(cli, "--timeout", "0.5", "--prompt", "wait", "--prompt", "never sent")
    assert result.exit_code == EXIT_TIMEOUT
    assert one_error_line(result) == (
        "Error: the turn took longer than --timeout 0.5s: it was cancelled; give it more time "
        "with a larger --timeout"
    )
    # The agent took the cancel (it says so only then) and ended its turn; the next
    # prompt was not sent.
    assert "    waiting to be cancelled\n    cancelled\n" in result.stdout
    assert "acp, protocol 1: 2 items in 1 turn; stop reason cancelled\n" in result.stdout
    assert "never sent" not in result.stdout


def test_an_agent_that_does_not_end_its_cancelled_turn_is_stopped(
    cli: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live, "CANCEL_WAIT_SECONDS", 0.2)
    result = _run(cli, "--timeout", "0.3", "stubborn")
    assert result.exit_code == EXIT_TIMEOUT
    assert result.stderr.splitlines() == [
        "The agent did not end its turn: stopping it",
        "Error: the turn took longer than --timeout 0.3s: it was cancelled; the agent did not "
        "end it and was stopped; give it more time with a larger --timeout",
    ]
    assert "    never ending\n" in result.stdout


def test_a_timeout_that_is_not_reached_changes_nothing(cli: Invoke) -> None:
    result = _run(cli, "--timeout", "60", "--prompt", "one", "--prompt", "received")
    assert result.exit_code == 0, result.stderr
    assert _received(result)["cancel"] == []


# --- questions ---------------------------------------------------------------------------


def test_non_interactive_fail_cancels_the_turn_and_exits(cli: Invoke) -> None:
    result = _run(cli, "--non-interactive", "fail", "--prompt", "clean", "--prompt", "never sent")
    assert result.exit_code == EXIT_QUESTION
    assert one_error_line(result) == (
        "Error: the agent asked permission for 'rm -rf build', and --non-interactive fail asks "
        "no one: the request and the turn were cancelled; decide it with --approve or --rules, "
        "or --non-interactive deny"
    )
    assert "[3] approval_request  cancelled  rm -rf build\n" in result.stdout
    assert "    permission: cancelled\n" in result.stdout
    assert "never sent" not in result.stdout


def test_non_interactive_deny_rejects_without_asking(cli: Invoke) -> None:
    result = _run(cli, "--non-interactive", "deny", "--prompt", "clean", "--prompt", "received")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""  # nothing was asked
    assert "    reject (reject_once)\n" in result.stdout
    assert "    permission: reject\n" in result.stdout
    assert _received(result)["cancel"] == []


def test_non_interactive_leaves_what_the_policy_decides(cli: Invoke) -> None:
    result = _run(cli, "--non-interactive", "fail", "--approve", "full-access", "clean")
    assert result.exit_code == 0, result.stderr
    assert "    permission: allow\n" in result.stdout


def test_with_the_prompt_on_stdin_questions_are_read_from_the_terminal(
    cli: Invoke, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    terminal = tmp_path / "tty"
    terminal.write_text("1\n", encoding="utf-8")
    monkeypatch.setattr(asking, "TERMINAL", str(terminal))
    result = _run(cli, input="clean\n")  # stdin holds the prompt, all of it
    assert result.exit_code == 0, result.stderr
    assert "Choose 1-2: 1\n" in result.stderr
    assert "    permission: allow\n" in result.stdout


def test_with_the_prompt_on_stdin_and_no_terminal_a_question_fails(
    cli: Invoke, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(asking, "TERMINAL", str(tmp_path / "no-terminal"))
    result = _run(cli, input="clean\n")
    assert result.exit_code == EXIT_QUESTION
    assert "there is no terminal to ask on (stdin holds the prompt)" in one_error_line(result)
    assert "    permission: cancelled\n" in result.stdout


def test_the_reject_option_is_the_one_that_rejects_once() -> None:
    options = [
        {"optionId": "no-ever", "kind": "reject_always"},
        {"optionId": "yes", "kind": "allow_once"},
        {"optionId": "no", "kind": "reject_once"},
    ]
    assert asking.reject_option(options) == "no"
    assert asking.reject_option(options[:2]) == "no-ever"
    assert asking.reject_option(options[1:2]) is None  # nothing rejects: the request is cancelled


# --- what the agent reports, as text and as JSON lines ------------------------------------


def test_text_shows_the_title_the_mode_and_the_usage(cli: Invoke) -> None:
    result = _run(cli, "report")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[-2:] == [
        "acp, protocol 1: 2 items in 1 turn; stop reason end_turn",
        'title "Fixing the parser"; mode ask; context 1,200 of 200,000 tokens (0.6%); '
        "cost 0.02 USD",
    ]


def _lines(result: Result) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_jsonl_streams_items_and_session_changes_and_ends_with_the_summary(cli: Invoke) -> None:
    args = ["--format", "jsonl", "--mode", "code", "--prompt", "report", "--prompt", "hi"]
    result = _run(cli, *args)
    assert result.exit_code == 0, result.stderr
    lines = _lines(result)
    assert lines[0]["type"] == "session"
    assert lines[0]["kind"] == "opened"
    assert lines[0]["session"]["current_mode"] == "code"
    items = [line for line in lines if line["type"] == "item"]
    assert all(tuple(line)[1:] == FIELDS for line in items)  # the row of --format json
    # A message streams as running, and is completed once its turn ended.
    assert [(i["turn"], i["kind"], i["text"], i["status"]) for i in items] == [
        (1, "user_message", "report", "completed"),
        (1, "assistant_message", "reported", "running"),
        (1, "assistant_message", "reported", "completed"),
        (2, "user_message", "hi", "completed"),
        (2, "assistant_message", "you said: hi", "running"),
        (2, "assistant_message", "you said: hi", "completed"),
    ]
    kinds = [line["kind"] for line in lines if line["type"] == "session"]
    assert {"usage", "info", "turn"} <= set(kinds)
    usage = next(line for line in lines if line.get("kind") == "usage")
    assert usage["session"]["usage"] == {
        "used": 1200,
        "size": 200000,
        "cost_amount": 0.02,
        "cost_currency": "USD",
    }
    assert lines[-1] == {
        "type": "summary",
        "provider": "acp",
        "protocol": 1,
        "session_id": "cli-session",
        "title": "Fixing the parser",
        "mode": "code",
        "stop_reason": "end_turn",
        "turns": 2,
        "items": 4,
        "usage": usage["session"]["usage"],
        "exit_code": 0,
        "error": None,
    }
    assert [line["type"] for line in lines].count("summary") == 1


def test_jsonl_ends_with_the_summary_of_a_run_that_failed(cli: Invoke) -> None:
    result = _run(cli, "--format", "jsonl", "--timeout", "0.5", "wait")
    assert result.exit_code == EXIT_TIMEOUT
    summary = _lines(result)[-1]
    assert summary["type"] == "summary"
    assert (summary["exit_code"], summary["stop_reason"]) == (EXIT_TIMEOUT, "cancelled")
    assert summary["error"].startswith("the turn took longer than --timeout 0.5s")


def test_jsonl_ends_with_the_summary_when_the_agent_crashes(cli: Invoke) -> None:
    result = cli("run", "--format", "jsonl", "--command", agent_command("crash"), "hi")
    assert result.exit_code == 1
    lines = _lines(result)
    last = {line["id"]: line for line in lines if line["type"] == "item"}  # each item's last
    assert [(row["kind"], row["status"]) for row in last.values()] == [
        ("user_message", "completed"),
        ("assistant_message", "completed"),
        ("error", "failed"),
    ]
    assert lines[-1]["type"] == "summary"
    assert lines[-1]["exit_code"] == 1
    assert lines[-1]["error"].startswith("the agent exited (exit status 3)")


def test_a_v2_agents_mode_and_model_are_its_options(cli: Invoke, tmp_path: Path) -> None:
    """ACP 2 has no session/set_mode: the mode is the option of category mode."""
    options = [
        {
            "configId": "mode",
            "name": "Mode",
            "type": "select",
            "category": "mode",
            "currentValue": "ask",
            "options": [{"value": "ask", "name": "Ask"}, {"value": "code", "name": "Code"}],
        },
        {
            "configId": "llm",
            "name": "Model",
            "type": "select",
            "category": "model",
            "currentValue": "small",
            "options": [{"value": "small", "name": "Small"}, {"value": "large", "name": "Large"}],
        },
    ]
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import json, sys\n"
        f"OPTIONS = {options!r}\n"
        "ANSWERS = {\n"
        "    'initialize': {'protocolVersion': 2, 'capabilities': {}},\n"
        "    'session/new': {'sessionId': 's', 'configOptions': OPTIONS},\n"
        "    'session/set_config_option': {'configOptions': OPTIONS},\n"
        "}\n"
        "for line in sys.stdin:\n"
        "    message = json.loads(line)\n"
        "    if 'id' in message and 'method' in message:\n"
        "        answer = {'jsonrpc': '2.0', 'id': message['id'],\n"
        "                  'result': ANSWERS[message['method']]}\n"
        "        print(json.dumps(answer), flush=True)\n",
        encoding="utf-8",
    )
    record = tmp_path / "run.jsonl"
    # The last --set is not offered: the run stops there, before any prompt.
    result = _run(
        cli,
        "--record",
        str(record),
        "--mode",
        "code",
        "--model",
        "large",
        "--set",
        "mode=plan",
        "hi",
        agent=shlex.join([sys.executable, str(agent)]),
    )
    assert result.exit_code == EXIT_SESSION_OPTION, result.stderr
    assert "--set mode=plan: 'mode' has no such choice" in one_error_line(result)
    sent = [
        json.loads(line)["msg"]
        for line in record.read_text(encoding="utf-8").splitlines()
        if json.loads(line).get("dir") == "client->agent"
    ]
    settings = [m["params"] for m in sent if m.get("method") == "session/set_config_option"]
    assert [(p["configId"], p["value"], p["type"]) for p in settings] == [
        ("llm", "large", "id"),
        ("mode", "code", "id"),
    ]
    assert not any(m.get("method") in ("session/set_mode", "session/prompt") for m in sent)


SESSIONS_AGENT = Path(__file__).resolve().parents[1] / "agents" / "sessions_agent.py"


def test_session_goes_on_with_an_earlier_session(cli: Invoke, tmp_path: Path) -> None:
    """--resume: resumed when the agent can, else loaded, the history shown as replayed."""
    log = tmp_path / "log.jsonl"  # outside the session's folder: no change of the turn's
    (tmp_path / "ws").mkdir()
    for offer, opened in (("load", "session/load"), ("resume,load", "session/resume")):
        agent = shlex.join([sys.executable, str(SESSIONS_AGENT), "--offer", offer])
        result = cli(
            "run",
            "--command",
            agent,
            "--cwd",
            str(tmp_path / "ws"),
            "--format",
            "json",
            "--resume",
            "old-1",
            "again",
            env={"SESSIONS_AGENT_LOG": str(log)},
        )
        assert result.exit_code == 0, result.stderr
        rows = json.loads(result.stdout)
        replayed = [r["kind"] for r in rows if r["replayed"]]
        assert replayed == (
            ["user_message", "assistant_message", "file_read"] if offer == "load" else []
        )
        assert rows[-1]["text"] == "old-1: again"
        sent = [json.loads(line)["method"] for line in log.read_text().splitlines()]
        assert opened in sent
        assert "session/new" not in sent
        log.unlink()
