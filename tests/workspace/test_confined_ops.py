"""The confined operations of checkpoints and revert: no link followed, nothing outside
read, written or removed, no FIFO or device opened for reading.

Each case runs through openat2(2) where the kernel has it, and through the component walk
that stands in for it elsewhere (forced)."""

from __future__ import annotations

import ctypes
import os
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_adapters.workspace import confined
from acp_adapters.workspace.confined import (
    ChangedError,
    Expected,
    LinkInPathError,
    NotRegularFileError,
    OutsideError,
    Roots,
)

OUTSIDE = "OUTSIDE: never read, written or removed"


@pytest.fixture(params=["openat2", "walk"])
def mechanism(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> str:
    if request.param == "walk":
        monkeypatch.setattr(confined, "openat2_usable", False)

        def no_openat2(*args: object) -> int:
            raise AssertionError("the walk was forced: openat2 must not be called")

        monkeypatch.setattr(confined, "_openat2", no_openat2)
    else:
        descriptor = os.open(tmp_path, os.O_RDONLY)
        try:
            if not confined._have_openat2(descriptor):
                pytest.skip("this kernel has no openat2(2)")
        finally:
            os.close(descriptor)
    return str(request.param)


@pytest.fixture
def tree(tmp_path: Path, mechanism: str) -> Iterator[tuple[Roots, Path, Path]]:
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "a.txt").write_text("a")
    (ws / "sub" / "inner.txt").write_text("inner")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text(OUTSIDE)
    (outside / "inner.txt").write_text(OUTSIDE)
    roots = Roots(ws)
    yield roots, ws, outside
    roots.close()


def _untouched(outside: Path) -> None:
    assert sorted(os.listdir(outside)) == ["f.txt", "inner.txt"]
    assert (outside / "f.txt").read_text() == OUTSIDE
    assert (outside / "inner.txt").read_text() == OUTSIDE


def test_no_link_reads_a_link_as_a_link_and_refuses_one_on_the_way(
    tree: tuple[Roots, Path, Path],
) -> None:
    roots, ws, outside = tree
    os.symlink(outside / "f.txt", ws / "out-file")
    os.symlink(outside, ws / "out-dir")
    os.symlink("a.txt", ws / "in-file")
    facts = roots.lstat("out-file")
    assert facts is not None
    assert facts.st_mode & 0o170000 == 0o120000
    with pytest.raises(LinkInPathError):
        roots.read_bytes("out-file", 100, links="none")
    with pytest.raises(LinkInPathError):
        roots.read_bytes("in-file", 100, links="none")  # inside or not: a link is a link
    with pytest.raises(LinkInPathError):
        roots.lstat("out-dir/f.txt")
    with pytest.raises(LinkInPathError):
        roots.read_bytes("out-dir/f.txt", 100, links="none")
    assert roots.read_bytes("sub/inner.txt", 100, links="none") == b"inner"
    assert roots.lstat("missing/deeper") is None
    assert roots.lstat("a.txt/below") is None  # a file where a folder would be: nothing there
    with pytest.raises(OutsideError):
        roots.lstat("/etc/passwd")


def test_a_write_with_no_link_replaces_the_link_not_what_it_points_to(
    tree: tuple[Roots, Path, Path],
) -> None:
    roots, ws, outside = tree
    os.symlink(outside / "f.txt", ws / "link")
    roots.replace("link", b"mine\n", links="none", mode=0o640)
    assert not (ws / "link").is_symlink()
    assert (ws / "link").read_bytes() == b"mine\n"
    assert (ws / "link").stat().st_mode & 0o777 == 0o640
    os.symlink(outside, ws / "dir-link")
    with pytest.raises(LinkInPathError):
        roots.replace("dir-link/inner.txt", b"x", links="none")
    roots.replace("made/deep/new.txt", b"new", links="none")  # folders made inside
    assert (ws / "made" / "deep" / "new.txt").read_bytes() == b"new"
    roots.replace("a-link", b"", links="none", link_target="../outside/f.txt")
    assert os.readlink(ws / "a-link") == "../outside/f.txt"  # a link made is only a name
    _untouched(outside)


def test_a_removal_removes_a_name_never_what_a_link_points_to(
    tree: tuple[Roots, Path, Path],
) -> None:
    roots, ws, outside = tree
    os.symlink(outside / "f.txt", ws / "link")
    roots.remove("link")
    assert not os.path.lexists(ws / "link")
    os.symlink(outside, ws / "sub-link")
    with pytest.raises(LinkInPathError):
        roots.remove("sub-link/inner.txt")
    with pytest.raises(IsADirectoryError):
        roots.remove("sub")
    with pytest.raises(FileNotFoundError):
        roots.remove("nothing.txt")
    _untouched(outside)


def test_a_bound_write_fails_when_another_file_is_behind_the_name(
    tree: tuple[Roots, Path, Path],
) -> None:
    roots, ws, _ = tree
    facts = roots.lstat("a.txt")
    assert facts is not None
    bound = Expected.unchanged(facts)
    (ws / "a.txt").write_text("someone else's")
    with pytest.raises(ChangedError):
        roots.replace("a.txt", b"mine", links="none", expected=bound)
    assert (ws / "a.txt").read_text() == "someone else's"
    with pytest.raises(ChangedError):
        roots.remove("a.txt", expected=bound)
    with pytest.raises(ChangedError):
        roots.replace("a.txt", b"mine", links="none", expected=Expected(absent=True))
    roots.replace("fresh.txt", b"mine", links="none", expected=Expected(absent=True))
    assert (ws / "fresh.txt").read_bytes() == b"mine"


# --- a FIFO, a socket, a device: never opened for reading ------------------------------------

_IN_OPEN = 0x20
_IN_NONBLOCK = os.O_NONBLOCK


def _inotify_opens(folder: Path) -> Iterator[list[str]]:
    libc = ctypes.CDLL(None, use_errno=True)
    descriptor = libc.inotify_init1(_IN_NONBLOCK)
    if descriptor < 0:
        pytest.skip("no inotify here")
    opened: list[str] = []
    try:
        if libc.inotify_add_watch(descriptor, os.fsencode(folder), _IN_OPEN) < 0:
            pytest.skip("inotify cannot watch the folder")
        yield opened
        try:
            data = os.read(descriptor, 65536)
        except BlockingIOError:
            data = b""
        at = 0
        while at < len(data):
            _, _, _, length = struct.unpack_from("iIII", data, at)
            name = data[at + 16 : at + 16 + length].rstrip(b"\0").decode()
            opened.append(name)
            at += 16 + length
    finally:
        os.close(descriptor)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
def test_a_fifo_is_refused_without_being_opened_for_reading(
    tree: tuple[Roots, Path, Path],
) -> None:
    roots, ws, _ = tree
    os.mkfifo(ws / "pipe")
    watching = _inotify_opens(ws)
    opened = next(watching)
    with pytest.raises(NotRegularFileError):
        roots.read_bytes("pipe", 100, links="none")
    with pytest.raises(NotRegularFileError):
        roots.read_bytes("pipe", 100)
    assert roots.read_bytes("a.txt", 100) == b"a"  # the watch sees what is opened
    next(watching, None)
    assert "a.txt" in opened
    assert "pipe" not in opened


def test_dev_zero_behind_a_link_is_never_read(tree: tuple[Roots, Path, Path]) -> None:
    roots, ws, _ = tree
    os.symlink("/dev/zero", ws / "zero")
    with pytest.raises(LinkInPathError):
        roots.read_bytes("zero", 1 << 30, links="none")
    with pytest.raises(OutsideError):  # followed, it leads out
        roots.read_bytes("zero", 1 << 30)


# --- links swapped between the check and the use, from another process --------------------

SWAPPER = r"""
import ctypes, os, sys
ws, outside, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
real, link = os.path.join(ws, "sub"), os.path.join(ws, "sub-link")
os.symlink(outside, link)
libc = ctypes.CDLL(None, use_errno=True)
exchange = getattr(libc, "renameat2", None)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
for _ in range(rounds):
    # sub <-> sub-link in one step: a folder, then a link to outside, under the same name.
    if exchange is not None:
        if exchange(AT_FDCWD, real.encode(), AT_FDCWD, link.encode(), RENAME_EXCHANGE) != 0:
            sys.exit(3)
    else:
        os.rename(real, real + ".tmp"); os.rename(link, real)
        os.rename(real, link); os.rename(real + ".tmp", real)
print("swapped", rounds)
"""


def test_links_swapped_thousands_of_times_from_another_process_never_lead_out(
    tree: tuple[Roots, Path, Path],
) -> None:
    roots, ws, outside = tree
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(ws), str(outside), "5000"],
        stdout=subprocess.PIPE,
        text=True,
    )
    outcomes: dict[str, int] = {}
    stop = threading.Event()

    def record(what: str) -> None:
        outcomes[what] = outcomes.get(what, 0) + 1

    try:
        while swapper.poll() is None:
            for operation in ("write", "remove", "read", "link"):
                try:
                    if operation == "write":
                        roots.replace("sub/inner.txt", b"written\n", links="none")
                    elif operation == "remove":
                        roots.remove("sub/inner.txt")
                    elif operation == "read":
                        data = roots.read_bytes("sub/inner.txt", 1000, links="none")
                        assert OUTSIDE.encode() not in data
                    else:
                        roots.replace("sub/inner.txt", b"", links="none", link_target="x")
                    record(f"{operation}: done")
                except OSError as error:  # noqa: PERF203 (each outcome is counted)
                    record(f"{operation}: {type(error).__name__}")
    finally:
        stop.set()
        out, _ = swapper.communicate()
    assert swapper.returncode == 0, out
    assert out.strip() == "swapped 5000"
    _untouched(outside)
    done = sum(count for what, count in outcomes.items() if what.endswith("done"))
    refused = sum(count for what, count in outcomes.items() if "LinkInPath" in what)
    assert done > 0, outcomes  # the operations ran in the folder,
    assert refused > 0, outcomes  # and met the link, and refused it
