"""``run -s NAME`` as a user of named sessions expects it: a session stays in its folder
unless ``--move``d, goes on with a new agent session when the agent lost its own, has a
name, and is not kept when its first run fails before any turn."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from acp_adapters.cli.errors import EXIT_AGENT_NOT_FOUND, EXIT_SESSION_OPTION, EXIT_USAGE

from .conftest import Invoke, one_error_line

AGENT = Path(__file__).resolve().parents[1] / "agents" / "sessions_agent.py"


def _agent(*flags: str) -> str:
    return shlex.join([sys.executable, str(AGENT), *flags])


def _listed(cli: Invoke, store: Path) -> list[dict[str, object]]:
    result = cli("sessions", "list", "--store", str(store), "--format", "json")
    assert result.exit_code == 0, result.output
    rows: list[dict[str, object]] = json.loads(result.stdout)
    return rows


def _sent(log: Path) -> list[str]:
    if not log.exists():
        return []
    return [json.loads(line)["method"] for line in log.read_text().splitlines()]


def test_a_session_run_from_another_folder_is_refused_unless_moved(
    cli: Invoke, tmp_path: Path
) -> None:
    store, log = tmp_path / "store.db", tmp_path / "log.jsonl"
    env = {"SESSIONS_AGENT_STATE": str(tmp_path / "state.json"), "SESSIONS_AGENT_LOG": str(log)}
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    base = ("run", "--command", _agent("--offer", "resume"), "--store", str(store), "-s", "work")
    assert cli(*base, "--cwd", str(here), "one", env=env).exit_code == 0
    started = len(_sent(log))

    refused = cli(*base, "--cwd", str(there), "two", env=env)
    assert refused.exit_code == EXIT_USAGE, refused.output
    line = one_error_line(refused)
    assert f"kept for {here}, not {there}" in line
    assert f"--cwd {here}" in line
    assert "--move" in line
    assert len(_sent(log)) == started  # no agent started
    assert [row["cwd"] for row in _listed(cli, store)] == [str(here)]

    moved = cli(*base, "--cwd", str(there), "--move", "--format", "json", "two", env=env)
    assert moved.exit_code == 0, moved.output
    rows = json.loads(moved.stdout)
    assert [r["title"] for r in rows if r["kind"] == "notice"] == ["the session moved"]
    assert [r["text"] for r in rows if r["kind"] == "assistant_message"] == [
        "s-1: one",
        "s-1: two",
    ]
    (listed,) = _listed(cli, store)
    assert (listed["cwd"], listed["turns"]) == (str(there), 2)


def test_an_agent_that_lost_the_session_gets_a_new_one_with_a_note(
    cli: Invoke, tmp_path: Path
) -> None:
    store, work = tmp_path / "store.db", tmp_path / "work"
    work.mkdir()  # the store out of it: its checkpoints see only the session's files
    # No state kept: the agent's next process has no session s-1 (it answers -32002).
    base = ("run", "--command", _agent("--offer", "resume"), "--cwd", str(work))
    base += ("--store", str(store), "-s", "work", "--format", "json")
    assert cli(*base, "one").exit_code == 0
    second = cli(*base, "two")
    assert second.exit_code == 0, second.output
    rows = json.loads(second.stdout)
    assert [r["kind"] for r in rows] == [
        "user_message",
        "assistant_message",
        "notice",
        "user_message",
        "assistant_message",
    ]
    assert "the agent no longer had session s-1" in rows[2]["text"]
    shown = cli("sessions", "show", "work", "--store", str(store), "--format", "json")
    assert [r["id"] for r in json.loads(shown.stdout)] == [r["id"] for r in rows]


@pytest.mark.parametrize("name", ["", "  ", "a\x1bb", "a\x9bb", "a\u202eb", "a\udcffb"])
def test_a_name_no_one_could_type_or_see_is_a_usage_error(
    cli: Invoke, tmp_path: Path, name: str
) -> None:
    store = tmp_path / "store.db"
    result = cli("run", "--command", _agent(), "--store", str(store), "-s", name, "hi")
    assert result.exit_code == EXIT_USAGE, result.output
    assert "name the session otherwise" in one_error_line(result)
    queued = cli("sessions", "send", name, "--command", _agent(), "--store", str(store), "hi")
    assert queued.exit_code == EXIT_USAGE, queued.output
    assert "name the session otherwise" in one_error_line(queued)
    assert not store.exists()


@pytest.mark.parametrize(
    ("command", "extra", "code"),
    [
        ("/no/such/agent", (), EXIT_AGENT_NOT_FOUND),
        (_agent("--offer", "resume"), ("--model", "no-such-model"), EXIT_SESSION_OPTION),
    ],
    ids=["agent-not-found", "bad-model"],
)
def test_a_first_run_that_fails_before_any_turn_leaves_no_session(
    cli: Invoke, tmp_path: Path, command: str, extra: tuple[str, ...], code: int
) -> None:
    store = tmp_path / "store.db"
    base = ("run", "--cwd", str(tmp_path), "--store", str(store), "-s", "work")
    failed = cli(*base, "--command", command, *extra, "hi")
    assert failed.exit_code == code, failed.output
    assert _listed(cli, store) == []
    # A session with a turn is kept, whatever a later run does.
    assert cli(*base, "--command", _agent("--offer", "resume"), "hi").exit_code == 0
    assert cli(*base, "--command", command, *extra, "again").exit_code == code
    assert [row["name"] for row in _listed(cli, store)] == ["work"]


def test_a_session_sent_a_prompt_is_kept_before_its_first_turn(cli: Invoke, tmp_path: Path) -> None:
    # `sessions send` makes the session with its prompt queued: it waits for whoever drives
    # it, so it is kept though no turn ran yet, even when a run on it fails to start.
    store = tmp_path / "store.db"
    sent = cli(
        "sessions", "send", "work", "--command", "/no/such/agent", "--store", str(store), "hi"
    )
    assert sent.exit_code == 0, sent.output
    failed = cli("run", "--command", "/no/such/agent", "--store", str(store), "-s", "work", "x")
    assert failed.exit_code == EXIT_AGENT_NOT_FOUND
    assert [(row["name"], row["turns"]) for row in _listed(cli, store)] == [("work", 0)]
