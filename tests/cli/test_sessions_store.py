"""``acp-adapters sessions`` and the store it reads: a read makes no store (a mistyped
``--store`` is an error, the default store not made yet holds no session), a URL of no
backend is named as such, and JSON output escapes what a terminal acts on."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from .conftest import Invoke, one_error_line

AGENT = Path(__file__).resolve().parents[1] / "agents" / "sessions_agent.py"
#: The commands that read a store (and the arguments they need).
READING = [
    ("list",),
    ("list", "--format", "json"),
    ("show", "work"),
    ("export", "work"),
    ("follow", "work", "--until-idle"),
    ("patch", "work"),
    ("revert", "work", "--dry-run"),
    ("delete", "work"),
]


@pytest.mark.parametrize("command", READING, ids=lambda c: " ".join(c))
def test_a_mistyped_store_is_an_error_and_is_not_made(
    cli: Invoke, tmp_path: Path, command: tuple[str, ...]
) -> None:
    typo = tmp_path / "typo.db"
    result = cli("sessions", *command, "--store", str(typo))
    assert result.exit_code == 2, result.output
    line = one_error_line(result)
    assert f"no store at {typo}" in line
    assert "--store" in line  # what to do: name an existing one
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", READING, ids=lambda c: " ".join(c))
def test_the_default_store_not_made_yet_holds_no_session(
    cli: Invoke, tmp_path: Path, command: tuple[str, ...]
) -> None:
    data = tmp_path / "data"
    env = {"XDG_DATA_HOME": str(data), "ACP_ADAPTERS_STORE": None}
    result = cli("sessions", *command, env=env)
    if command[0] == "list":
        # No `run -s` ran yet: nothing to list, and a note that says where they will be.
        assert result.exit_code == 0, result.output
        if "json" in command:
            assert json.loads(result.stdout) == []
        else:
            assert result.stdout.splitlines() == ["NAME  PROVIDER  TURNS  TITLE"]
        assert result.stderr.startswith("Note: no session is kept yet")
        assert str(data / "acp-adapters" / "store.db") in result.stderr
    else:
        assert result.exit_code == 2, result.output
        assert "the store has no session 'work' (no session is kept yet" in one_error_line(result)
    assert not data.exists()  # neither the store nor its folder


def test_a_store_named_by_the_environment_must_exist(cli: Invoke, tmp_path: Path) -> None:
    typo = tmp_path / "typo.db"
    result = cli("sessions", "list", env={"ACP_ADAPTERS_STORE": str(typo)})
    assert result.exit_code == 2, result.output
    assert "name an existing store with ACP_ADAPTERS_STORE" in one_error_line(result)
    assert not typo.exists()


def test_a_url_of_no_backend_is_named_as_such(cli: Invoke) -> None:
    result = cli("sessions", "list", "--store", "mysql://app:secret@db/acp")
    assert result.exit_code == 1, result.output
    line = one_error_line(result)
    assert "mysql:// is not a store this library opens" in line
    assert "does not exist" not in line
    assert "secret" not in line


def test_sending_makes_the_store(cli: Invoke, tmp_path: Path) -> None:
    store = tmp_path / "new.db"
    agent = shlex.join([sys.executable, str(AGENT)])
    sent = cli("sessions", "send", "work", "--command", agent, "--store", str(store), "hello")
    assert sent.exit_code == 0, sent.output
    listed = cli("sessions", "list", "--store", str(store), "--format", "json")
    assert [row["name"] for row in json.loads(listed.stdout)] == ["work"]


#: What a terminal acts on: a C1 CSI, a right-to-left override, a line separator.
CONTROLS = "\x9b\u202e\u2028"


def test_every_json_output_escapes_what_a_terminal_acts_on(cli: Invoke, tmp_path: Path) -> None:
    folder = tmp_path / f"work{CONTROLS}"  # the folder shows in the list's cwd
    folder.mkdir()
    store = str(tmp_path / "store.db")
    agent = shlex.join([sys.executable, str(AGENT)])
    ran = cli(
        "run", "--command", agent, "--cwd", str(folder), "--store", store, "-s", "work",
        f"say {CONTROLS}",
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    outputs = {
        "list": cli("sessions", "list", "--store", store, "--format", "json").stdout,
        "show": cli("sessions", "show", "work", "--store", store, "--format", "json").stdout,
        "follow": cli(
            "sessions", "follow", "work", "--store", store, "--until-idle", "--format", "jsonl"
        ).stdout,
        "export": cli("sessions", "export", "work", "--store", store).stdout,
    }
    for command, output in outputs.items():
        assert output, command
        assert not any(ch in output for ch in CONTROLS), command
        assert "\\u009b\\u202e\\u2028" in output, command
        for line in output.splitlines() if command in ("follow", "export") else [output]:
            json.loads(line)  # each still JSON, the same text once read
    (row,) = json.loads(outputs["list"])
    assert row["cwd"] == str(folder)
