"""``acp-adapters sessions patch`` and ``sessions revert``: a named session's turn as one
patch (from its checkpoints), and the turn undone per hunk, a conflict its own exit code."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from acp_adapters.cli.errors import EXIT_CONFLICT, EXIT_USAGE
from diff_helpers import apply_patch
from workspace_helpers import NOTES, NOTES_TOP, SCENARIOS, WORKSPACE_AGENT, seed

from .conftest import Invoke, one_error_line


def _two_turns(cli: Invoke, tmp_path: Path) -> tuple[str, Path]:
    """The scenario ``user-edit-between-turns`` through ``run -s notes``: turn 1 rewrites the
    first line of notes.txt; the user edits its last; turn 2 says hi."""
    ws = tmp_path / "ws"
    ws.mkdir()
    seed(ws, SCENARIOS["user-edit-between-turns"])
    store = str(tmp_path / "store.db")
    base = ("run", "--command", shlex.join(WORKSPACE_AGENT), "--cwd", str(ws))
    for prompt in ("edit-top", "say hi"):
        ran = cli(*base, "--store", store, "-s", "notes", "--approve", "full-access", prompt)
        assert ran.exit_code == 0, ran.stderr
        if prompt == "edit-top":
            notes = ws / "notes.txt"
            notes.write_text(notes.read_text().replace("note 10\n", "note 10, the user's\n"))
    return store, ws


def test_a_turns_patch_is_printed_and_given_as_json(cli: Invoke, tmp_path: Path) -> None:
    store, ws = _two_turns(cli, tmp_path)
    notes = str((ws / "notes.txt").resolve())
    printed = cli("sessions", "patch", "notes", "--turn", "1", "--store", store)
    assert printed.exit_code == 0, printed.stderr
    after = NOTES_TOP + NOTES.split("\n", 1)[1]
    # Its files by their names in the session's folder (patch -p0 applies it there).
    assert apply_patch(printed.stdout, {"notes.txt": NOTES}) == {"notes.txt": after}
    as_json = json.loads(
        cli(
            "sessions", "patch", "notes", "--turn", "1", "--store", store, "--format", "json"
        ).stdout
    )
    assert as_json["turn"] == 1
    assert as_json["patch"] == printed.stdout.replace("notes.txt", notes)
    (file,) = as_json["files"]
    assert (file["path"], file["operation"], file["checkpointed"]) == (notes, "modify", True)
    assert file["before"]["mode"] == file["after"]["mode"] == "100644"
    # The last turn by default: turn 2 changed no file (the user's edit is no turn's).
    last = cli("sessions", "patch", "notes", "--store", store)
    assert last.stdout == "turn 2 changed no file\n"
    missing = cli("sessions", "patch", "notes", "--turn", "7", "--store", store)
    assert missing.exit_code == EXIT_USAGE
    assert "no turn 7 (its turns: 1 to 2)" in one_error_line(missing)


def test_a_turn_is_reverted_per_hunk_and_a_conflict_has_its_own_exit_code(
    cli: Invoke, tmp_path: Path
) -> None:
    store, ws = _two_turns(cli, tmp_path)
    notes = ws / "notes.txt"
    dry = cli("sessions", "revert", "notes", "--turn", "1", "--dry-run", "--store", store)
    assert dry.exit_code == 0, dry.stderr
    assert dry.stdout.splitlines()[0] == "would write notes.txt"
    assert notes.read_text().startswith(NOTES_TOP)
    edited = notes.read_text()
    # The line beside the turn's change: a later edit that touches its hunk.
    notes.write_text(edited.replace("note 2\n", "note 2, right beside the turn's change\n"))
    conflict = cli("sessions", "revert", "notes", "--turn", "1", "--store", store)
    assert conflict.exit_code == EXIT_CONFLICT
    line = one_error_line(conflict)
    assert "nothing was written" in line
    assert "notes.txt: later edits touched the turn's hunks: @@ -1,4 +1,4 @@" in line
    notes.write_text(edited)  # as it was: the user's edit at the bottom only
    done = cli("sessions", "revert", "notes", "--turn", "1", "--store", store)
    assert done.exit_code == 0, done.stderr
    assert done.stdout.splitlines() == ["wrote notes.txt", "turn 1 is undone: 1 files"]
    assert notes.read_text() == NOTES.replace("note 10\n", "note 10, the user's\n")
    again = cli("sessions", "revert", "notes", "--turn", "1", "--store", store)
    assert again.stdout.startswith("turn 1: nothing to undo")
