"""An agent that changes the tree under its own fs requests stays inside the session's folders.

Each case runs twice where the kernel has openat2(2): once through it, once through the
component walk that stands in for it elsewhere (forced with ``openat2_usable = False``).
"""

from __future__ import annotations

import ctypes
import errno
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import pytest

from acp_adapters.client.workspace import Workspace
from acp_adapters.transport import RpcError
from acp_adapters.workspace import confined as workspace_module

INSIDE = "inside"
OUTSIDE = "OUTSIDE: the agent must never see this"


def _openat2_here(tmp_path: Path) -> bool:
    if workspace_module.openat2_usable is not None:
        return workspace_module.openat2_usable
    descriptor = os.open(tmp_path, os.O_RDONLY)
    try:
        return workspace_module._have_openat2(descriptor)
    finally:
        os.close(descriptor)


@pytest.fixture(params=["openat2", "walk"])
def mechanism(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> str:
    """How paths are opened: the kernel's openat2, or the walk (forced)."""
    if request.param == "walk":
        monkeypatch.setattr(workspace_module, "openat2_usable", False)

        def no_openat2(*args: object) -> int:
            raise AssertionError("the walk was forced: openat2 must not be called")

        monkeypatch.setattr(workspace_module, "_openat2", no_openat2)
    elif not _openat2_here(tmp_path):
        pytest.skip("this kernel has no openat2(2)")
    return str(request.param)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """ws/ (the cwd) with files, folders and symlinks in and out; extra/ (a second root);
    outside/ and secret.txt beside them."""
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "a.txt").write_text("a")
    (ws / "sub" / "inner.txt").write_text("inner")
    (tmp_path / "secret.txt").write_text(OUTSIDE)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "f.txt").write_text(OUTSIDE)
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "b.txt").write_text("b")
    links = {
        # inside, relative and absolute
        "rel-file": "a.txt",
        "rel-dir": "sub",
        "sub/up": "../a.txt",
        "sub/up-dir": "..",
        "chain": "rel-file",
        "abs-file": str(ws / "a.txt"),
        "abs-dir": str(ws / "sub"),
        "abs-dotdot": f"{ws}/sub/../a.txt",
        "to-extra": str(extra / "b.txt"),
        "dangling": "made-later",
        # outside
        "out-abs": str(tmp_path / "secret.txt"),
        "out-rel": "../secret.txt",
        "out-dir": str(tmp_path / "outside"),
        "out-dir-rel": "../outside",
        "sub/out-deep": "../../outside/f.txt",
        "out-root": "/",
        "loop": "loop",
    }
    for name, target in links.items():
        os.symlink(target, ws / name)
    os.symlink(str(ws / "a.txt"), extra / "back-to-cwd")
    return tmp_path


@pytest.fixture
def ws(tree: Path, mechanism: str) -> Iterator[Workspace]:
    workspace = Workspace(tree / "ws", (str(tree / "extra"),))
    yield workspace
    workspace.close()


def _outside_untouched(tree: Path) -> None:
    assert (tree / "secret.txt").read_text() == OUTSIDE
    assert sorted(os.listdir(tree / "outside")) == ["f.txt"]
    assert (tree / "outside" / "f.txt").read_text() == OUTSIDE
    assert sorted(os.listdir(tree)) == ["extra", "outside", "secret.txt", "ws"]


# --- symlinks and .. -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("rel-file", "a"),
        ("rel-dir/inner.txt", "inner"),
        ("sub/up", "a"),
        ("sub/up-dir/a.txt", "a"),
        ("chain", "a"),
        ("abs-file", "a"),  # openat2 refuses an absolute symlink (EXDEV): the walk judges it
        ("abs-dir/inner.txt", "inner"),
        ("abs-dotdot", "a"),
        ("to-extra", "b"),
        ("sub/../a.txt", "a"),
        ("{ws}/rel-dir/../a.txt", "a"),
        ("{extra}/back-to-cwd", "a"),
    ],
)
def test_symlinks_and_dotdot_that_stay_inside_are_read(
    ws: Workspace, tree: Path, path: str, text: str
) -> None:
    path = path.format(ws=tree / "ws", extra=tree / "extra")
    assert ws.read_text(path) == text
    assert ws.read_confined(path, 100) == text


@pytest.mark.parametrize(
    "path",
    [
        "out-abs",
        "out-rel",
        "out-dir/f.txt",
        "out-dir-rel/f.txt",
        "sub/out-deep",
        "out-root/etc/passwd",
        "../secret.txt",
        "sub/../../secret.txt",
        "rel-dir/../../secret.txt",
        "sub/up-dir/../secret.txt",
        "{ws}/../secret.txt",
        "{ws}/sub/../../outside/f.txt",
        "{tree}/secret.txt",
    ],
)
def test_symlinks_and_dotdot_that_lead_out_are_refused(
    ws: Workspace, tree: Path, path: str
) -> None:
    path = path.format(ws=tree / "ws", tree=tree)
    with pytest.raises(RpcError, match="outside the session's folders") as info:
        ws.read_text(path)
    assert info.value.code == -32000
    assert ws.read_confined(path, 1 << 20) is None
    with pytest.raises(RpcError, match="outside the session's folders") as info:
        ws.write_text(path, "written by the agent")
    assert info.value.code == -32000
    _outside_untouched(tree)


@pytest.mark.parametrize(
    "path",
    [
        "out-dir/new/deeper/file.txt",
        "out-dir-rel/new/file.txt",
        "sub/up-dir/../new/file.txt",
        "../new/file.txt",
        "{ws}/../new/file.txt",
        "out-root/{tree}/new/file.txt",
    ],
)
def test_no_folder_is_made_outside(ws: Workspace, tree: Path, path: str) -> None:
    path = path.format(ws=tree / "ws", tree=str(tree).lstrip("/"))
    with pytest.raises(RpcError, match="outside the session's folders") as info:
        ws.write_text(path, "x")
    assert info.value.code == -32000
    _outside_untouched(tree)


def test_a_symlink_loop_is_an_error_not_a_hang(ws: Workspace) -> None:
    with pytest.raises(RpcError, match="cannot read loop") as info:
        ws.read_text("loop")
    assert info.value.code == -32602
    assert ws.read_confined("loop", 100) is None


def test_writes_through_inside_symlinks_replace_the_file_they_name(
    ws: Workspace, tree: Path
) -> None:
    root = tree / "ws"
    assert ws.write_text("abs-file", "via an absolute link") == root / "a.txt"
    assert (root / "a.txt").read_text() == "via an absolute link"
    assert os.readlink(root / "abs-file") == str(root / "a.txt")  # the link is kept
    ws.write_text("chain", "via two links")
    assert (root / "a.txt").read_text() == "via two links"
    assert ws.write_text("rel-dir/new.txt", "n") == root / "sub" / "new.txt"
    ws.write_text("abs-dir/made/deep.txt", "d")
    assert (root / "sub" / "made" / "deep.txt").read_text() == "d"
    ws.write_text("dangling", "the link's target is made, inside")
    assert (root / "made-later").read_text() == "the link's target is made, inside"
    ws.write_text("to-extra", "into the other root")
    assert (tree / "extra" / "b.txt").read_text() == "into the other root"
    _outside_untouched(tree)


# --- writes: modes and the errors a path can make ------------------------------------------


def test_a_new_file_follows_the_umask(ws: Workspace, tree: Path) -> None:
    old = os.umask(0o027)
    try:
        ws.write_text("new.txt", "x")
        ws.write_text("made/in/folders.txt", "x")
    finally:
        os.umask(old)
    assert oct((tree / "ws" / "new.txt").stat().st_mode & 0o7777) == "0o640"
    assert oct((tree / "ws" / "made" / "in" / "folders.txt").stat().st_mode & 0o7777) == "0o640"
    assert oct((tree / "ws" / "made" / "in").stat().st_mode & 0o7777) == "0o750"


def test_an_existing_file_keeps_its_mode(ws: Workspace, tree: Path) -> None:
    script = tree / "ws" / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    old = os.umask(0o077)  # the umask is for new files only
    try:
        ws.write_text("run.sh", "#!/bin/sh\necho hi\n")
    finally:
        os.umask(old)
    assert oct(script.stat().st_mode & 0o7777) == "0o755"
    assert script.read_text() == "#!/bin/sh\necho hi\n"


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_a_trailing_slash_names_no_file(ws: Workspace, tree: Path) -> None:
    for path in ("slash.txt/", "a.txt/", "sub/", f"{tree}/ws/new/"):
        with pytest.raises(RpcError, match=f"^{path}") as info:
            ws.write_text(path, "x")
        assert info.value.code == -32602
    assert not (tree / "ws" / "slash.txt").exists()
    assert not (tree / "ws" / "new").exists()
    assert (tree / "ws" / "a.txt").read_text() == "a"


def test_a_name_too_long_is_invalid_params_named_by_the_path(ws: Workspace, tree: Path) -> None:
    for path in ("n" * 300, f"sub/{'é' * 150}.txt", f"{'d' * 300}/x.txt"):
        with pytest.raises(RpcError) as info:
            ws.write_text(path, "x")
        assert info.value.code == -32602
        assert path in info.value.message
        assert "too long" in info.value.message
        with pytest.raises(RpcError) as info:
            ws.read_text(path)
        assert info.value.code == -32602
    assert _leftovers(tree / "ws") == []
    assert _leftovers(tree / "ws" / "sub") == []


def test_a_file_on_the_way_is_invalid_params(ws: Workspace, tree: Path) -> None:
    for path in ("a.txt/x", "a.txt/x/y.txt", "sub/inner.txt/x", "rel-file/x"):
        with pytest.raises(RpcError, match="Not a directory") as info:
            ws.write_text(path, "x")
        assert info.value.code == -32602
        assert info.value.message == f"cannot write {path}: {os.strerror(errno.ENOTDIR)}"
    assert (tree / "ws" / "a.txt").read_text() == "a"
    assert _leftovers(tree / "ws") == []


def test_writing_onto_a_folder_is_invalid_params(ws: Workspace, tree: Path) -> None:
    for path in ("sub", "rel-dir", "abs-dir", "sub/.", "sub/up-dir", "."):
        with pytest.raises(RpcError, match="is a directory") as info:
            ws.write_text(path, "x")
        assert info.value.code == -32602
    assert sorted(os.listdir(tree / "ws" / "sub")) == ["inner.txt", "out-deep", "up", "up-dir"]


def test_a_fifo_is_refused_without_waiting_for_a_writer(ws: Workspace, tree: Path) -> None:
    os.mkfifo(tree / "ws" / "fifo")
    os.symlink("fifo", tree / "ws" / "to-fifo")
    for path in ("fifo", "to-fifo"):
        with pytest.raises(RpcError, match="not a regular file"):
            ws.read_text(path)
        assert ws.read_confined(path, 100) is None


def test_read_confined_answers_none_for_what_it_cannot_read(ws: Workspace, tree: Path) -> None:
    (tree / "ws" / "big.txt").write_text("0123456789")
    (tree / "ws" / "latin1.txt").write_bytes(b"caf\xe9")
    assert ws.read_confined("big.txt", 10) == "0123456789"
    assert ws.read_confined(str(tree / "ws" / "big.txt"), 10) == "0123456789"
    for path in ("big.txt", "latin1.txt", "missing.txt", "sub", "", "a\x00b", 5, None):
        assert ws.read_confined(path, 9) is None
    assert ws.read_confined("/etc/hostname", 1 << 20) is None  # under no root


# --- the races -----------------------------------------------------------------------------


def _exchanger() -> Callable[[str, str], None] | None:
    """``renameat2(a, b, RENAME_EXCHANGE)``: both names swapped in one step; None if absent."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except AttributeError:  # a C library older than glibc 2.28
        return None
    renameat2.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p)
    renameat2.argtypes += (ctypes.c_uint,)
    at_fdcwd, rename_exchange = -100, 2

    def exchange(a: str, b: str) -> None:
        if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange):
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code))

    return exchange


def _swapping(folder: Path, link: Path, stop: threading.Event, swaps: list[int]) -> None:
    """Swap the folder and the symlink to outside until told to stop."""
    exchange = _exchanger()
    hold = str(folder) + ".hold"
    a, b = str(folder), str(link)
    while not stop.is_set():
        if exchange is not None:
            exchange(a, b)
        else:  # four renames: each name is the folder, the link or missing in turn
            os.rename(a, hold)
            os.rename(b, a)
            os.rename(a, b)
            os.rename(hold, a)
        swaps[0] += 1
        # A pause (it lets go of the GIL): each state lasts about as long as a request's
        # steps, so requests do meet a folder at one step and the link at the next.
        time.sleep(1e-6)


def _outcome(what: str, request: Callable[[], object]) -> str:
    """What the request answered, or how it was refused."""
    try:
        return str(request())
    except RpcError as error:
        return f"{what} refused {error.code}"


@pytest.mark.parametrize("link", ["absolute", "relative"])
def test_swapping_a_folder_for_a_symlink_to_outside_never_escapes(
    tmp_path: Path, mechanism: str, link: str
) -> None:
    ws_root = tmp_path / "ws"
    (ws_root / "d").mkdir(parents=True)
    (ws_root / "d" / "f.txt").write_text(INSIDE)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text(OUTSIDE)
    os.symlink(outside if link == "absolute" else "../outside", ws_root / "e")
    ws = Workspace(ws_root)
    stop, swaps = threading.Event(), [0]
    swapper = threading.Thread(target=_swapping, args=(ws_root / "d", ws_root / "e", stop, swaps))
    outcomes: Counter[str] = Counter()
    swapper.start()
    try:
        for i in range(3000):
            outcomes[_outcome("read", lambda: ws.read_text("d/f.txt"))] += 1
            outcomes[_outcome("read", lambda: ws.read_text(str(ws_root / "d" / "f.txt")))] += 1
            outcomes[f"disk read {ws.read_confined('d/f.txt', 100)}"] += 1
            written = _outcome("write", partial(ws.write_text, "d/w.txt", f"write {i}"))
            outcomes["written" if written.endswith("w.txt") else written] += 1
    finally:
        stop.set()
        swapper.join()
        ws.close()
    assert outcomes[OUTSIDE] == 0, outcomes
    assert outcomes[f"disk read {OUTSIDE}"] == 0, outcomes
    assert sorted(os.listdir(outside)) == ["f.txt"], outcomes
    assert (outside / "f.txt").read_text() == OUTSIDE
    # The race was on: the swaps ran, reads met the folder and met the link.
    assert swaps[0] > 100, swaps
    assert outcomes[INSIDE] > 0, outcomes
    assert outcomes["read refused -32000"] + outcomes["write refused -32000"] > 0, outcomes
    assert outcomes["written"] > 0, outcomes


def test_swapping_the_root_itself_changes_nothing(tmp_path: Path, mechanism: str) -> None:
    """The roots are held open: a root renamed away and replaced by a link to outside is
    still the folder the session was given."""
    ws_root = tmp_path / "ws"
    ws_root.mkdir()
    (ws_root / "f.txt").write_text(INSIDE)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "f.txt").write_text(OUTSIDE)
    ws = Workspace(ws_root)
    try:
        os.rename(ws_root, tmp_path / "moved")
        os.symlink(tmp_path / "outside", ws_root)
        assert ws.read_text("f.txt") == INSIDE
        assert ws.read_text(str(ws_root / "f.txt")) == INSIDE
        ws.write_text("g.txt", "new")
    finally:
        ws.close()
    assert (tmp_path / "moved" / "g.txt").read_text() == "new"
    assert sorted(os.listdir(tmp_path / "outside")) == ["f.txt"]


def test_openat2_is_used_where_the_kernel_has_it(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not _openat2_here(tree):
        pytest.skip("this kernel has no openat2(2)")
    calls: list[str] = []
    real = workspace_module._openat2

    def counted(dirfd: int, path: str, flags: int, resolve: int = 0) -> int:
        calls.append(path)
        return real(dirfd, path, flags, resolve)

    monkeypatch.setattr(workspace_module, "_openat2", counted)
    ws = Workspace(tree / "ws")
    try:
        assert ws.read_text("sub/inner.txt") == "inner"
        ws.write_text("sub/new.txt", "n")
    finally:
        ws.close()
    assert calls == ["sub/inner.txt", "sub"]


@pytest.mark.parametrize(
    "path", ["newdir/.", "newdir/..", "sub/" + "a" * 300, "deep/" + "b" * 300 + "/c.txt"]
)
def test_a_write_refused_for_its_name_makes_no_folder(tmp_path: Path, path: str) -> None:
    from acp_adapters.client.workspace import Workspace
    from acp_adapters.transport import RpcError

    workspace = Workspace(tmp_path)
    with pytest.raises(RpcError) as refused:
        workspace.write_text(path, "x")
    assert refused.value.code == -32602
    assert path.split("/")[0] not in {p.name for p in tmp_path.iterdir()}
