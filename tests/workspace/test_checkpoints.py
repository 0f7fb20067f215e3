"""Checkpoints of a workspace: what they record, what they leave out, what a pass costs, and
what changed between two of them."""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_adapters.workspace import scan
from acp_adapters.workspace.checkpoints import Checkpoints, FileChange, TurnChanges
from acp_adapters.workspace.confined import Roots
from acp_adapters.workspace.objects import ObjectStore
from acp_adapters.workspace.scan import CheckpointLimits, tree_files


@pytest.fixture(autouse=True)
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files made by a test are as old as the racy window (which has its own test)."""
    monkeypatch.setattr(scan, "_RACY_NS", 0)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "app.py").write_text("print('hi')\n")
    (folder / "README.md").write_text("# project\n")
    return folder


def checkpoints(ws: Path, tmp_path: Path, **options: object) -> Iterator[Checkpoints]:
    """Checkpoints of ``ws`` in a store of their own (what another scanner kept would be
    taken up: a stat pass, nothing read)."""
    roots = Roots(ws)
    folder = tmp_path / f"stores-{len(list(tmp_path.glob('stores-*')))}"
    found = Checkpoints(roots, folder=folder, **options)  # type: ignore[arg-type]
    yield found
    found.close()
    roots.close()


@pytest.fixture
def cps(ws: Path, tmp_path: Path) -> Iterator[Checkpoints]:
    yield from checkpoints(ws, tmp_path)


def files_of(cps: Checkpoints, record: object) -> dict[str, tuple[str, int, str | None]]:
    (_, tree), *_ = record.roots  # type: ignore[attr-defined]
    return {
        path: (entry.kind, entry.mode, entry.oid) for path, entry in tree_files(cps.store, tree)
    }


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_checkpoint_records_files_links_and_modes_and_leaves_out_what_is_not_a_file(
    cps: Checkpoints, ws: Path
) -> None:
    (ws / "tool.sh").write_text("#!/bin/sh\n")
    os.chmod(ws / "tool.sh", 0o755)
    os.symlink("README.md", ws / "link")
    os.symlink("/etc/passwd", ws / "out-link")  # a link is recorded, never followed
    os.mkfifo(ws / "pipe")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(ws / "sock"))
    try:
        record = cps.take()
    finally:
        listener.close()
    found = files_of(cps, record)
    assert found == {
        "README.md": ("file", 0o644, sha(b"# project\n")),
        "src/app.py": ("file", 0o644, sha(b"print('hi')\n")),
        "tool.sh": ("file", 0o755, sha(b"#!/bin/sh\n")),
        "link": ("link", 0o120000, sha(b"README.md")),
        "out-link": ("link", 0o120000, sha(b"/etc/passwd")),
    }
    assert cps.blob(sha(b"/etc/passwd")) == b"/etc/passwd"
    assert record.files == 5


def test_the_ignore_rules_are_gits(ws: Path, tmp_path: Path) -> None:
    (ws / ".gitignore").write_text("*.log\n!keep.log\nbuild/\n/top.tmp\n")
    (ws / "src" / ".gitignore").write_text("local.txt\n!*.log\n")
    for name in ("x.log", "keep.log", "top.tmp", "src/top.tmp", "src/local.txt", "src/y.log"):
        (ws / name).write_text(name)
    (ws / "build").mkdir()
    (ws / "build" / "out.o").write_text("o")
    (ws / ".git" / "info").mkdir(parents=True)
    (ws / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (ws / ".git" / "info" / "exclude").write_text("secret.env\n")
    (ws / "secret.env").write_text("s")
    (ws / "mine.cache").write_text("c")
    for found in checkpoints(ws, tmp_path, ignore=("*.cache",)):
        names = set(files_of(found, found.take()))
    assert names == {
        ".gitignore",
        "README.md",
        "keep.log",
        "src/.gitignore",
        "src/app.py",
        "src/top.tmp",  # /top.tmp is the root's only
        "src/y.log",  # brought back by the deeper file
    }


def test_an_unchanged_workspace_costs_a_stat_pass_and_a_new_process_too(
    cps: Checkpoints, ws: Path, tmp_path: Path
) -> None:
    first = cps.take()
    assert cps.scanner.last_read == 2
    again = cps.take()
    assert (again.id, cps.scanner.last_read) == (first.id, 0)
    (ws / "README.md").write_text("# changed\n")
    changed = cps.take()
    assert cps.scanner.last_read == 1
    assert changed.id != first.id
    cps.scanner.save()
    # Another process: what this one found is in the store.
    roots = Roots(ws)
    other = Checkpoints(roots, store=ObjectStore(cps.store.path))
    try:
        assert other.take().id == changed.id
        assert other.scanner.last_read == 0
    finally:
        roots.close()


def test_a_racily_clean_file_is_read_again(
    cps: Checkpoints, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan, "_RACY_NS", int(3600 * 1e9))  # every file is recent
    cps.take()
    cps.take()
    assert cps.scanner.last_read == 2  # read again: a change in the same tick would not show
    monkeypatch.setattr(scan, "_RACY_NS", 0)
    cps.take()
    assert cps.scanner.last_read == 2
    cps.take()
    assert cps.scanner.last_read == 0


def test_over_the_caps_a_file_is_recorded_by_size_and_hash_and_said_so(
    ws: Path, tmp_path: Path
) -> None:
    big = b"x" * 5000
    (ws / "big.bin").write_bytes(big)
    (ws / "huge.bin").write_bytes(b"y" * 20000)
    limits = CheckpointLimits(max_file_bytes=4096, max_hash_bytes=10000)
    for found in checkpoints(ws, tmp_path, limits=limits):
        record = found.take()
        (_, tree), *_ = record.roots
        entries = dict(tree_files(found.store, tree))
        assert (entries["big.bin"].oid, entries["big.bin"].stored) == (sha(big), False)
        assert entries["big.bin"].omitted == "too_large"
        assert found.blob(sha(big)) is None
        assert entries["huge.bin"].omitted == "unhashed"
        assert entries["huge.bin"].oid.startswith("stat-")
        assert any("4096" in note for note in record.notes)
        assert any("10000" in note for note in record.notes)
    for found in checkpoints(ws, tmp_path, limits=CheckpointLimits(max_total_bytes=30)):
        record = found.take()
        (_, tree), *_ = record.roots
        omitted = {path: e.omitted for path, e in tree_files(found.store, tree)}
        assert "total_cap" in omitted.values()
        assert any("30 bytes" in note for note in record.notes)
    for found in checkpoints(ws, tmp_path, limits=CheckpointLimits(max_files=2)):
        record = found.take()
        assert any("past 2 files" in note for note in record.notes)


def test_what_changed_between_two_checkpoints_with_renames_paired(
    cps: Checkpoints, ws: Path
) -> None:
    (ws / "gone.txt").write_text("bye\n")
    (ws / "a.txt").write_text("moving\n")
    start = cps.take()
    (ws / "gone.txt").unlink()
    (ws / "a.txt").rename(ws / "src" / "b.txt")
    (ws / "README.md").write_text("# changed\n")
    (ws / "new.txt").write_text("hello\n")
    os.chmod(ws / "src" / "app.py", 0o755)
    changes = {c.path: c for c in cps.changes(start, cps.take())}
    root = str(ws.resolve())
    assert set(changes) == {
        f"{root}/gone.txt",
        f"{root}/src/b.txt",
        f"{root}/README.md",
        f"{root}/new.txt",
        f"{root}/src/app.py",
    }
    assert changes[f"{root}/src/b.txt"].moved_from == f"{root}/a.txt"
    assert changes[f"{root}/gone.txt"].after is None
    assert changes[f"{root}/new.txt"].before is None
    mode = changes[f"{root}/src/app.py"]
    assert (mode.before.mode, mode.after.mode, mode.before.oid == mode.after.oid) == (
        0o644,
        0o755,
        True,
    )


def test_a_turns_changes_go_to_the_tool_call_that_completed_after_them_else_to_its_end(
    cps: Checkpoints, ws: Path
) -> None:
    root = str(ws.resolve())
    turn = TurnChanges(cps)
    turn.started(cps.take())
    (ws / "README.md").write_text("# by the tool\n")
    (ws / "other.txt").write_text("by nobody\n")
    reported = turn.tool_call([f"{root}/README.md", f"{root}/missing.txt", "/etc/passwd"])
    assert [(c.path, c.changed) for c in reported] == [
        (f"{root}/README.md", True),
        (f"{root}/missing.txt", False),  # the checkpoint says: nothing there, before or after
    ]
    (ws / "README.md").write_text("# by the tool, then again\n")
    ended = turn.ended(cps.take())
    by_path = {c.path: c for c in ended}
    assert set(by_path) == {f"{root}/README.md", f"{root}/other.txt"}
    again = by_path[f"{root}/README.md"]
    assert again.before is not None
    assert again.after is not None
    assert cps.blob(again.before.oid) == b"# by the tool\n"  # the tool call's after
    assert cps.blob(again.after.oid) == b"# by the tool, then again\n"
    # The next turn starts where this one ended.
    turn.started(cps.take())
    assert turn.ended(cps.take()) == []


def test_a_tool_call_before_a_turn_starts_reports_nothing(cps: Checkpoints, ws: Path) -> None:
    turn = TurnChanges(cps)
    assert turn.tool_call([str(ws / "README.md")]) == []
    record = cps.take()
    assert turn.ended(record) == []
    assert turn.start == record


def test_file_changes_say_when_they_changed() -> None:
    assert not FileChange("p", None, None).changed


def test_a_file_changing_while_read_is_read_again(cps: Checkpoints, ws: Path) -> None:
    cps.take()
    path = ws / "README.md"
    path.write_text("# one\n")
    os.utime(path, ns=(0, 0))  # its mtime put back: the change time still says
    time.sleep(0.01)
    cps.take()
    assert cps.scanner.last_read == 1


def test_a_checkpoint_is_restored_through_writes_that_follow_no_link(
    cps: Checkpoints, ws: Path, tmp_path: Path
) -> None:
    os.symlink("README.md", ws / "link")
    (ws / "tool.sh").write_text("#!/bin/sh\n")
    start = cps.take()
    (ws / "README.md").write_text("# changed\n")
    (ws / "src" / "app.py").unlink()
    (ws / "new.txt").write_text("made since\n")
    os.chmod(ws / "tool.sh", 0o755)
    (ws / "link").unlink()
    os.symlink("/etc/passwd", ws / "link")
    planned = cps.restore(start, dry_run=True)
    assert not planned.conflicts
    assert (ws / "new.txt").exists()  # a dry run writes nothing
    done = cps.restore(start)
    assert not done.conflicts
    assert (ws / "README.md").read_text() == "# project\n"
    assert (ws / "src" / "app.py").read_text() == "print('hi')\n"
    assert not (ws / "new.txt").exists()
    assert (ws / "tool.sh").stat().st_mode & 0o777 == 0o644
    assert os.readlink(ws / "link") == "README.md"
    assert cps.take().id == start.id
    # A link to outside where a folder was: removed as a name, the folder made again inside.
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "src" / "app.py").unlink()
    (ws / "src").rmdir()
    os.symlink(outside, ws / "src")
    assert not cps.restore(start).conflicts
    assert not (ws / "src").is_symlink()
    assert (ws / "src" / "app.py").read_text() == "print('hi')\n"
    assert list(outside.iterdir()) == []
    # A link the checkpoints do not see (ignored) where a folder was: a conflict, nothing
    # is written.
    (ws / ".gitignore").write_text("src\n")
    cps.take()
    (ws / ".gitignore").unlink()
    shutil.rmtree(ws / "src")
    (ws / "README.md").write_text("# changed again\n")
    os.symlink(outside, ws / "src")
    (ws / ".gitignore").write_text("src\n")
    refused = cps.restore(start)
    assert [c.path for c in refused.conflicts] == [str(ws.resolve() / "src" / "app.py")]
    assert (ws / "README.md").read_text() == "# changed again\n"
    assert list(outside.iterdir()) == []


def test_a_folder_of_too_many_names_stops_the_pass_and_loses_no_file(
    ws: Path, tmp_path: Path
) -> None:
    for found in checkpoints(ws, tmp_path, limits=CheckpointLimits(max_files=5)):
        first = found.take()
        for number in range(20):
            (ws / f"n{number}.tmp").write_text("x")
        (ws / ".gitignore").write_text("*.tmp\n")  # ignored names are listed too
        record = found.take()
        assert any("names listed the pass stopped" in note for note in record.notes)
        # Nothing the earlier pass had is taken for deleted.
        assert {c.path for c in found.changes(first, record) if c.after is None} == set()


def test_the_bytes_one_pass_hashes_are_bounded(ws: Path, tmp_path: Path) -> None:
    for number in range(4):
        (ws / f"big{number}.bin").write_bytes(b"b" * 3000)
    limits = CheckpointLimits(max_file_bytes=1000, max_hash_total_bytes=7000)
    for found in checkpoints(ws, tmp_path, limits=limits):
        record = found.take()
        (_, tree), *_ = record.roots
        omitted = sorted(
            e.omitted or "" for p, e in tree_files(found.store, tree) if p.endswith(".bin")
        )
        assert omitted == ["too_large", "too_large", "unhashed", "unhashed"]
        assert any("7000 bytes read in one pass" in note for note in record.notes)
