"""Every run ends within its bounds, says in one line why, and keeps its output.

The agents are ``ending_agent.py``'s scenarios (standard library only): silent ones,
one that ends a turn cancelled, one with a huge message, one that asks.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

import acp_adapters
from acp_adapters import AgentNotFoundError, StartTimeoutError, connect

from .conftest import Invoke, one_error_line

AGENT = Path(__file__).with_name("ending_agent.py")


def ending(scenario: str, *args: str) -> str:
    return shlex.join([sys.executable, str(AGENT), scenario, *args])


# --- the start is bounded ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("scenario", "phase"), [("mute", "initialize"), ("no-session", "session/new")]
)
def test_an_agent_that_never_opens_the_session_fails_past_the_start_timeout(
    cli: Invoke, scenario: str, phase: str
) -> None:
    started = time.monotonic()
    result = cli("run", "--command", ending(scenario), "--start-timeout", "0.5", "hi")
    assert result.exit_code == 124
    line = one_error_line(result)
    assert f"the agent did not answer {phase} within 0.5 s" in line
    assert "--start-timeout" in line
    assert time.monotonic() - started < 30  # not the default minute, nor for ever


def test_the_start_timeout_has_a_documented_default(cli: Invoke) -> None:
    shown = cli("run", "--help").stdout
    assert "--start-timeout SECONDS" in shown
    assert "[default: 60.0;" in " ".join(shown.split())
    page = (Path(__file__).parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "--start-timeout" in page


def test_connect_stops_an_agent_that_does_not_start_in_time(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    command = [
        sys.executable,
        "-c",
        f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(600)",
    ]

    async def main() -> None:
        with pytest.raises(StartTimeoutError) as raised:
            async with connect(
                command=command, cwd=tmp_path, timeouts=acp_adapters.Timeouts(start=0.5)
            ):
                pass  # pragma: no cover - it never opens
        assert raised.value.phase == "initialize"

    anyio.run(main)
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):  # stopped, not left behind
        os.kill(pid, 0)


def test_connect_refuses_a_start_timeout_out_of_range(tmp_path: Path) -> None:
    async def main(seconds: float) -> None:
        async with connect(
            command=["true"], cwd=tmp_path, timeouts=acp_adapters.Timeouts(start=seconds)
        ):
            pass  # pragma: no cover

    for seconds in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="start timeout"):
            anyio.run(main, seconds)


@pytest.mark.parametrize("what", ["folder", "not executable", "no format", "no interpreter"])
def test_an_agent_that_cannot_be_executed_is_said_as_a_missing_one_is(
    cli: Invoke, tmp_path: Path, what: str
) -> None:
    if what == "folder":
        target = tmp_path / "agent-folder"
        target.mkdir()
    else:
        target = tmp_path / "agent"
        text = {"not executable": "#!/bin/sh\necho hi\n", "no interpreter": "#!/no/such/sh\n"}
        target.write_text(text.get(what, "\x7fELF junk"))
        mode = 0o644 if what == "not executable" else 0o755
        target.chmod(mode)
        if what == "not executable" and os.geteuid() == 0:
            # root runs what has no execute bit for anyone only if some bit is set: none is.
            assert not target.stat().st_mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    result = cli("run", "--command", str(target), "hi")
    assert result.exit_code == 3
    line = one_error_line(result)
    assert f"cannot start the agent ({target}): '{target}' cannot be executed" in line
    assert "Errno" not in line

    async def main() -> None:
        with pytest.raises(AgentNotFoundError) as raised:
            async with connect(command=[str(target)], cwd=tmp_path):
                pass  # pragma: no cover
        assert raised.value.reason == "not executable"

    anyio.run(main)


# --- an interrupt at any moment ----------------------------------------------------------


def _program(*args: str) -> subprocess.Popen[str]:
    """``acp-adapters ARGS`` as its own process (``python -m acp_adapters``: the entry)."""
    environment = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    return subprocess.Popen(
        [sys.executable, "-m", "acp_adapters", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )


@pytest.mark.parametrize("delay", [0.05, 0.15, 0.25, 0.35, 0.45, 0.6, 0.8, 1.0])
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupt_at_any_moment_ends_with_one_line_and_its_code(
    delay: float, signum: int, code: int
) -> None:
    # From the program's first moments (its modules still loading) to a start that waits.
    running = _program("run", "--command", ending("mute"), "hi")
    time.sleep(delay)
    running.send_signal(signum)
    out, err = running.communicate(timeout=60)
    assert running.returncode == code, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("Error: "), err
    assert out == ""


# --- output survives every ending --------------------------------------------------------


def _first_line(running: subprocess.Popen[str]) -> str:
    assert running.stdout is not None
    return running.stdout.readline()


@pytest.mark.parametrize("output", ["json", "jsonl"])
def test_sigterm_in_a_turn_the_agent_ends_cancelled_still_prints_the_output(
    output: str,
) -> None:
    running = _program("run", "--format", output, "--command", ending("cancelled"), "go")
    if output == "jsonl":
        while '"working on it"' not in (line := _first_line(running)):
            assert line, "the run ended before the agent spoke"
        before = line
    else:
        time.sleep(2.0)  # json prints at the end only: the turn is under way by then
        before = ""
    running.send_signal(signal.SIGTERM)
    out, err = running.communicate(timeout=60)
    assert running.returncode == 143, err
    assert "Traceback" not in err
    if output == "json":
        rows = json.loads(out)
        assert [row["text"] for row in rows if row["kind"] == "assistant_message"] == [
            "working on it"
        ]
    else:
        lines = [json.loads(line) for line in (before + out).splitlines()]
        summary = lines[-1]
        assert summary["type"] == "summary"
        assert summary["exit_code"] == 143
        assert summary["error"].startswith("stopped by SIGTERM")
        assert [line["type"] for line in lines].count("summary") == 1


@pytest.mark.parametrize("output", ["json", "jsonl"])
def test_a_run_that_fails_before_its_session_still_prints_its_output(
    cli: Invoke, tmp_path: Path, output: str
) -> None:
    result = cli("run", "--format", output, "--command", str(tmp_path), "hi")
    assert result.exit_code == 3
    if output == "json":
        assert json.loads(result.stdout) == []
    else:
        (summary,) = [json.loads(line) for line in result.stdout.splitlines()]
        assert summary["type"] == "summary"
        assert summary["exit_code"] == 3
        assert "cannot be executed" in summary["error"]
        assert summary["session_id"] is None


# --- a question no one can answer fails the run ------------------------------------------


def test_a_question_whose_answers_input_ended_fails_the_run(cli: Invoke) -> None:
    # No terminal, stdin at its end (a CI job's `< /dev/null`): no one answers.
    result = cli("run", "--command", ending("ask"), "go", input="")
    assert result.exit_code == 8, result.stderr
    assert "no answer: cancelled" in result.stderr
    assert result.stderr.splitlines()[-1] == (
        "Error: the agent asked permission for 'rm -rf build', and its answers' input (stdin) "
        "ended: the request and the turn were cancelled; decide it with --approve or --rules, "
        "or --non-interactive deny"
    )


def test_a_rule_that_asks_with_no_one_to_answer_fails_the_run(cli: Invoke, tmp_path: Path) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text('[[rules]]\ndecision = "ask"\nkinds = ["execute"]\n', encoding="utf-8")
    result = cli(
        "run", "--approve", "full-access", "--rules", str(rules), "--command", ending("ask"),
        "go", input="",
    )  # fmt: skip
    assert result.exit_code == 8, result.stderr


def test_a_question_answered_on_stdin_goes_on(cli: Invoke) -> None:
    result = cli("run", "--command", ending("ask"), "go", input="1\n")
    assert result.exit_code == 0, result.stderr
    assert "answered: allow" in result.stdout


# --- JSON lines --------------------------------------------------------------------------

SESSIONS_AGENT = Path(__file__).parents[1] / "agents" / "sessions_agent.py"


@pytest.mark.parametrize("offer", ["resume", "load"])
def test_jsonl_of_a_continued_session_writes_only_what_the_run_adds(
    cli: Invoke, tmp_path: Path, offer: str
) -> None:
    env = {"SESSIONS_AGENT_STATE": str(tmp_path / "agent-state.json")}
    agent = shlex.join([sys.executable, str(SESSIONS_AGENT), "--offer", offer])
    base = ("run", "--command", agent, "--cwd", str(tmp_path), "--store", str(tmp_path / "s.db"))
    for prompt in ("one", "two"):
        result = cli(*base, "-s", "work", "--format", "jsonl", prompt, env=env)
        assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    items = [line for line in lines if line["type"] == "item"]
    assert {(row["turn"], row["replayed"]) for row in items} == {(2, False)}
    assert [row["text"] for row in items if row["kind"] == "user_message"] == ["two"]
    assert lines[-1]["turns"] == 2  # the summary is of the whole session


# --- a recording goes only where a folder is ---------------------------------------------


def test_record_into_a_missing_folder_is_refused_and_makes_no_folder(
    cli: Invoke, tmp_path: Path
) -> None:
    target = tmp_path / "no" / "such" / "folder" / "x.jsonl"
    result = cli("run", "--record", str(target), "--command", ending("ask"), "go")
    assert result.exit_code == 2
    line = one_error_line(result)
    assert f"its folder {target.parent} does not exist" in line
    assert not (tmp_path / "no").exists()


def test_connect_with_a_capture_it_cannot_write_starts_no_agent(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    command = [sys.executable, "-c", f"open({str(marker)!r}, 'w')"]

    async def main() -> None:
        with pytest.raises(FileNotFoundError):
            async with connect(command=command, cwd=tmp_path, record=tmp_path / "no" / "x.jsonl"):
                pass  # pragma: no cover

    anyio.run(main)
    assert not marker.exists()
    assert not (tmp_path / "no").exists()


# --- a message over the limits is not dropped without a word -----------------------------


@pytest.mark.parametrize("output", ["text", "jsonl"])
def test_a_message_over_the_line_limit_fails_the_run(cli: Invoke, output: str) -> None:
    huge = str(51 * 1024 * 1024)  # past the 50 MiB line limit
    result = cli("run", "--format", output, "--command", ending("huge", huge), "go")
    assert result.exit_code == 1
    line = one_error_line(result)
    assert "line too long: more than 52428800 bytes" in line
    assert "dropped, so the timeline misses what it said" in line
    said = "the agent sent a line longer than 52428800 bytes: it was dropped"
    if output == "jsonl":
        lines = [json.loads(line) for line in result.stdout.splitlines()]
        summary = lines[-1]
        assert (summary["stop_reason"], summary["exit_code"]) == ("end_turn", 1)
        assert "line too long" in summary["error"]
        (error,) = [line for line in lines if line.get("kind") == "error"]
        assert error["text"].startswith(said) or said in json.dumps(error)
    else:
        assert "error  failed" in result.stdout
        assert said in result.stdout


def test_a_dropped_message_is_an_error_item_of_the_timeline_and_its_recording(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        command = [sys.executable, str(AGENT), "huge", str(2048)]
        capture = tmp_path / "huge.jsonl"
        async with connect(
            command=command,
            cwd=tmp_path,
            limits=acp_adapters.Limits(max_line_bytes=1024),
            record=capture,
        ) as session:
            await session.prompt("go")
            errors = [i for i in session.timeline.items if i.kind == "error"]
        assert [(e.data, e.status, e.turn) for e in errors] == [
            ({"reason": "line_too_long", "limit": 1024}, "failed", 1)
        ]
        assert "longer than 1024 bytes: it was dropped" in errors[0].message
        (line,) = [json.loads(t) for t in capture.read_text().splitlines() if '"dropped"' in t]
        assert (line["dir"], line["reason"], line["limit"]) == ("dropped", "line_too_long", 1024)

    anyio.run(main)


# --- a client action asked of the user is an approval -------------------------------------


@pytest.mark.parametrize(
    ("answer", "option", "written"), [("1", "allow", True), ("2", "reject", False)]
)
def test_a_write_asked_of_the_user_is_an_approval_of_the_timeline(
    cli: Invoke, tmp_path: Path, answer: str, option: str, written: bool
) -> None:
    target = tmp_path / "notes.txt"
    args = ("run", "--cwd", str(tmp_path), "--command", ending("write", str(target)))
    result = cli(*args, "--format", "json", "go", input=f"{answer}\n")
    assert result.exit_code == 0, result.stderr
    (approval,) = [row for row in json.loads(result.stdout) if row["kind"] == "approval_request"]
    assert (approval["title"], approval["outcome"], approval["option_id"]) == (
        f"write {target}",
        "selected",
        option,
    )
    assert approval["status"] == "completed"
    assert target.exists() is written
    text = cli(*args, "go", input=f"{answer}\n")
    assert "1 approval; stop reason end_turn" in text.stdout.splitlines()[-1]


def _shown(rows: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return [(r["kind"], r["status"], r["title"], r["option_id"], r["text"]) for r in rows]


@pytest.mark.parametrize("scenario", ["write", "huge"])
def test_a_recording_with_a_question_or_a_dropped_message_replays_live_as_offline(
    cli: Invoke, tmp_path: Path, scenario: str
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    capture = tmp_path / f"{scenario}.jsonl"
    arg = str(work / "notes.txt") if scenario == "write" else str(51 * 1024 * 1024)
    args = ("run", "--cwd", str(work), "--record", str(capture), "--format", "json")
    ran = cli(*args, "--command", ending(scenario, arg), "go", input="1\n")
    assert ran.exit_code == (0 if scenario == "write" else 1), ran.stderr
    kinds = {"write": "approval_request", "huge": "error"}
    live = json.loads(cli("replay", "--format", "json", str(capture)).stdout)
    offline = json.loads(cli("replay", "--offline", "--format", "json", str(capture)).stdout)
    assert _shown(live) == _shown(offline)
    assert kinds[scenario] in [row["kind"] for row in live]
    assert len(_shown(live)) == len(json.loads(ran.stdout))


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_while_the_output_is_printed_ends_as_the_signal(signum: int, code: int) -> None:
    # The run is over and its rows are being written to a reader that does not read yet: the
    # run's own watcher of the signals is gone, the program's are back.
    running = _program("run", "--format", "json", "--command", ending("huge", "400000"), "go")
    time.sleep(3.0)  # blocked writing the rows, past the pipe's buffer
    running.send_signal(signum)
    _, err = running.communicate(timeout=60)
    assert running.returncode == code, err
    assert "Traceback" not in err
    if signum == signal.SIGTERM:
        assert err.splitlines()[-1] == "Error: stopped by SIGTERM"


@pytest.mark.parametrize("output", ["text", "jsonl"])
def test_a_reader_that_goes_away_ends_the_run_quietly_with_141(output: str) -> None:
    # `acp-adapters run ... | head -c 10`: the line that fails is printed as the turn streams.
    running = _program("run", "--format", output, "--command", ending("cancelled", "5"), "go")
    assert running.stdout is not None
    running.stdout.read(10)
    running.stdout.close()
    assert running.stderr is not None
    with running.stderr:
        err = running.stderr.read()
    assert running.wait(timeout=60) == 141, err
    assert err == ""


def test_a_message_nested_past_the_limit_is_not_dropped_without_a_word(
    cli: Invoke, tmp_path: Path
) -> None:
    capture, work = tmp_path / "deep.jsonl", tmp_path / "work"
    work.mkdir()
    args = ("run", "--cwd", str(work), "--record", str(capture), "--format", "json")
    result = cli(*args, "--command", ending("deep", "200"), "go")
    assert result.exit_code == 1
    assert "too deep: nested deeper than 128 levels" in one_error_line(result)
    rows = json.loads(result.stdout)
    (error,) = [row for row in rows if row["kind"] == "error"]
    assert "a message nested deeper than 128 levels: it was dropped" in error["text"]
    assert [row["text"] for row in rows if row["kind"] == "assistant_message"] == ["shown"]
    live = json.loads(cli("replay", "--format", "json", str(capture)).stdout)
    offline = json.loads(cli("replay", "--offline", "--format", "json", str(capture)).stdout)
    assert _shown(live) == _shown(offline) == _shown(rows)


def test_a_capture_of_many_dropped_messages_plays_a_few_again(cli: Invoke, tmp_path: Path) -> None:
    # Each dropped line is played as a line just over its limit (50 MiB by default): a few
    # lines of a capture must not make a replay build and send gigabytes.
    from acp_adapters.capture.reader import MAX_DROPPED_PLAYED

    capture = tmp_path / "one.jsonl"

    async def record() -> None:
        command = [sys.executable, str(AGENT), "huge", "4096"]
        async with connect(
            command=command,
            cwd=tmp_path,
            limits=acp_adapters.Limits(max_line_bytes=2048),
            record=capture,
        ) as session:
            await session.prompt("go")

    anyio.run(record)
    lines = capture.read_text(encoding="utf-8").splitlines(keepends=True)
    (at,) = [number for number, line in enumerate(lines) if '"dropped"' in line]
    many = tmp_path / "many.jsonl"
    # The copies within the turn, where the first was: before the answer that ends it.
    many.write_text("".join(lines[:at] + [lines[at]] * 31 + lines[at + 1 :]), encoding="utf-8")
    result = cli("replay", "--format", "json", str(many))
    assert result.exit_code == 0, result.stderr
    errors = [row for row in json.loads(result.stdout) if row["kind"] == "error"]
    assert len(errors) == MAX_DROPPED_PLAYED
    assert result.stderr.count("a message dropped over a limit of 2048, left out") == (
        31 - MAX_DROPPED_PLAYED
    )


def test_jsonl_of_a_named_session_writes_what_its_opening_added(
    cli: Invoke, tmp_path: Path
) -> None:
    # Each process of this agent has lost the sessions of the one before: the second run's
    # opening renews the thread's session, with a notice, which jsonl writes.
    agent = shlex.join([sys.executable, str(SESSIONS_AGENT), "--offer", "resume"])
    base = ("run", "--command", agent, "--cwd", str(tmp_path), "--store", str(tmp_path / "s.db"))
    for prompt in ("one", "two"):
        result = cli(
            *base, "-s", "work", "--format", "jsonl", prompt, env={"SESSIONS_AGENT_STATE": None}
        )
        assert result.exit_code == 0, result.stderr
    items = [json.loads(line) for line in result.stdout.splitlines()]
    items = [line for line in items if line["type"] == "item"]
    assert [(row["kind"], row["title"]) for row in items if row["kind"] == "notice"] == [
        ("notice", "the agent no longer had the session")
    ]
    assert {row["turn"] for row in items if row["kind"] != "notice"} == {2}


def test_the_sessions_own_store_and_recording_in_its_folder_are_not_its_changes(
    cli: Invoke, tmp_path: Path
) -> None:
    # Kept inside the session's folder, the store (and SQLite's files beside it) and the
    # recording change with every commit and line: none of it is the agent's doing.
    notes = tmp_path / "notes.txt"
    result = cli(
        "run", "--cwd", str(tmp_path), "--store", str(tmp_path / "s [1].db"), "-s", "t",
        "--record", str(tmp_path / "rec.jsonl"), "--format", "json",
        "--command", ending("write", str(notes)), "go", input="1\n",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    changed = [row["paths"] for row in json.loads(result.stdout) if row["kind"] == "file_change"]
    assert changed == [[str(notes.resolve())]]
