"""``run -s NAME`` and ``acp-adapters sessions``: named sessions kept in a store, gone on
with after the process ended, listed, shown, exported as a capture, deleted."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from .conftest import Invoke, one_error_line

AGENT = Path(__file__).resolve().parents[1] / "agents" / "sessions_agent.py"


def test_a_named_session_goes_on_and_is_listed_shown_exported_and_deleted(
    cli: Invoke, tmp_path: Path
) -> None:
    store = str(tmp_path / "store.db")
    env = {"SESSIONS_AGENT_STATE": str(tmp_path / "agent-state.json")}
    agent = shlex.join([sys.executable, str(AGENT), "--offer", "resume"])
    base = ("run", "--command", agent, "--cwd", str(tmp_path), "--store", store, "-s", "work")
    first = cli(*base, "--format", "json", "one", env=env)
    assert first.exit_code == 0, first.stderr
    second = cli(*base, "--format", "json", "two", env=env)
    assert second.exit_code == 0, second.stderr
    rows = json.loads(second.stdout)
    said = [(r["turn"], r["text"]) for r in rows if r["kind"] == "assistant_message"]
    assert said == [(1, "s-1: one"), (2, "s-1: two")]

    listed = cli("sessions", "list", "--store", store, "--format", "json")
    (thread,) = json.loads(listed.stdout)
    assert (thread["name"], thread["agent_session_id"], thread["turns"]) == ("work", "s-1", 2)

    shown = cli("sessions", "show", "work", "--store", store, "--format", "json")
    assert [r["id"] for r in json.loads(shown.stdout)] == [r["id"] for r in rows]

    exported = cli("sessions", "export", "work", "--store", store)
    capture = tmp_path / "work.jsonl"
    capture.write_text(exported.stdout)
    replayed = cli("replay", "--offline", "--format", "json", str(capture))
    assert replayed.exit_code == 0, replayed.stderr
    assert [(r["kind"], r["text"]) for r in json.loads(replayed.stdout)] == [
        (r["kind"], r["text"]) for r in rows
    ]

    deleted = cli("sessions", "delete", "work", "--store", store)
    assert deleted.stdout.strip() == "Deleted work."
    assert json.loads(cli("sessions", "list", "--store", store, "--format", "json").stdout) == []
    missing = cli("sessions", "show", "work", "--store", store)
    assert missing.exit_code == 2
    assert "no session 'work'" in one_error_line(missing)
