"""A large workspace's stat pass shared with a helper process: every change is still seen,
whichever half of the folders it is in; a helper that dies leaves the pass to the scanner."""

from __future__ import annotations

import os
import random
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_adapters.workspace import scan
from acp_adapters.workspace.checkpoints import Checkpoints
from acp_adapters.workspace.confined import Roots
from acp_adapters.workspace.objects import ObjectStore
from acp_adapters.workspace.scan import tree_files

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or (os.cpu_count() or 1) < 2,
    reason="the helper helps on Linux with a second core",
)

FOLDERS = 12
FILES = 40


@pytest.fixture(autouse=True)
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    """A helper from 300 files on (the suite's workspaces are small)."""
    monkeypatch.setattr(scan, "HELPER_FILES", 300)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    for number in range(FOLDERS):
        sub = folder / f"d{number:02}" / ("deep" if number % 3 == 0 else "")
        sub.mkdir(parents=True, exist_ok=True)
        for file in range(FILES):
            (sub / f"f{file:02}.txt").write_text(f"folder {number} file {file}\n")
    return folder


@pytest.fixture
def cps(ws: Path, tmp_path: Path) -> Iterator[Checkpoints]:
    roots = Roots(ws)
    found = Checkpoints(roots, folder=tmp_path / "stores")
    yield found
    found.close()
    roots.close()


def files_of(cps: Checkpoints) -> dict[str, str | None]:
    record = cps.take()
    (_, tree), *_ = record.roots
    return {path: entry.oid for path, entry in tree_files(cps.store, tree)}


def truth(ws: Path, tmp_path: Path) -> dict[str, str | None]:
    """What a scanner with no helper and no memory finds: the oracle."""
    roots = Roots(ws)
    store = ObjectStore(tmp_path / "oracle" / f"{random.random()}.db")
    fresh = Checkpoints(roots, store=store)
    fresh.scanner._helper_broken = True
    try:
        return files_of(fresh)
    finally:
        fresh.close()
        roots.close()


def test_the_helper_sees_every_change_in_its_half(
    cps: Checkpoints, ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan, "_RACY_NS", 0)
    files_of(cps)  # the first pass: the scanner learns the folders
    assert files_of(cps) == truth(ws, tmp_path)
    helper = cps.scanner._helper
    assert helper is not None
    assert helper.process.poll() is None
    helped = set(cps.scanner._assigned)
    assert helped
    assert len(helped) < FOLDERS + 4
    assert cps.scanner.last_read == 0  # an unchanged workspace: nothing read
    rng = random.Random(3)
    files = sorted(p for p in ws.rglob("*.txt"))
    for round_number in range(6):
        for path in rng.sample([p for p in files if p.exists()], 25):
            path.write_text(f"round {round_number}\n" + path.read_text())
        gone = rng.choice(files)
        if gone.exists():
            gone.unlink()
        (ws / f"d{round_number:02}" / f"new{round_number}.txt").write_text("new\n")
        assert files_of(cps) == truth(ws, tmp_path), round_number
    assert cps.scanner._helper is helper  # the same helper all along


def test_a_racily_clean_file_in_the_helpers_half_is_read_again(
    cps: Checkpoints, ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan, "_RACY_NS", 0)
    files_of(cps)
    files_of(cps)
    key = next(iter(cps.scanner._assigned))
    folder = ws / key[1]
    target = sorted(folder.glob("*.txt"))[0]
    monkeypatch.setattr(scan, "_RACY_NS", int(3600 * 1e9))  # every change is recent
    target.write_text("changed once\n")
    assert files_of(cps) == truth(ws, tmp_path)
    stat_before = target.stat()
    target.write_text("changed twice\n")  # the same size: only the times say it
    os.utime(target, ns=(stat_before.st_atime_ns, stat_before.st_mtime_ns))
    assert files_of(cps) == truth(ws, tmp_path)


def test_a_folder_swapped_for_a_link_in_the_helpers_half_is_a_link(
    cps: Checkpoints, ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan, "_RACY_NS", 0)
    files_of(cps)
    files_of(cps)
    key = next(k for k in cps.scanner._assigned if k[1] and "/" not in k[1])
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("OUTSIDE\n")
    folder = ws / key[1]
    for path in sorted(folder.rglob("*"), reverse=True):
        path.unlink() if not path.is_dir() else path.rmdir()
    folder.rmdir()
    os.symlink(outside, folder)
    found = files_of(cps)
    assert found == truth(ws, tmp_path)
    assert not any(path.startswith(f"{key[1]}/") for path in found)
    assert key[1] in found  # the link itself


def test_a_helper_that_dies_leaves_the_pass_to_the_scanner(
    cps: Checkpoints, ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan, "_RACY_NS", 0)
    files_of(cps)
    files_of(cps)
    helper = cps.scanner._helper
    assert helper is not None
    key = next(iter(cps.scanner._assigned))
    os.kill(helper.process.pid, signal.SIGKILL)
    helper.process.wait()
    changed = sorted((ws / key[1]).glob("*.txt"))[0]
    changed.write_text("while the helper was dead\n")
    assert files_of(cps) == truth(ws, tmp_path)
    assert cps.scanner._helper is None
    assert cps.scanner._helper_broken
    changed.write_text("and after\n")
    assert files_of(cps) == truth(ws, tmp_path)


def test_closing_ends_the_helper(cps: Checkpoints, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan, "_RACY_NS", 0)
    files_of(cps)
    files_of(cps)
    helper = cps.scanner._helper
    assert helper is not None
    cps.scanner.close()
    assert helper.process.poll() == 0  # it exited at the end of its input
    assert cps.scanner._helper is None
    files_of(cps)  # a closed scanner goes on alone
    assert cps.scanner._helper is None
