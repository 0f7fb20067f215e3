"""The session's folders: every path confined to them; atomic writes.

The hostile cases (races, symlinks, both ways of opening) are in tests/hostile/test_confinement.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_adapters.client import Workspace
from acp_adapters.client.terminals import trimmed
from acp_adapters.runtime.commands import command_argv as argv
from acp_adapters.transport import RpcError


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("one\ntwo\r\nthree\u2028still three\nfour")
    (tmp_path / "secret.txt").write_text("secret")
    os.symlink(tmp_path / "secret.txt", root / "link-out")
    os.symlink(root / "a.txt", root / "link-in")
    extra = tmp_path / "extra"
    extra.mkdir()
    return Workspace(root, (str(extra),))


@pytest.mark.parametrize(
    "path", ["../secret.txt", "{tmp}/secret.txt", "link-out", "/etc/passwd", "sub/../../secret.txt"]
)
def test_paths_outside_are_refused(ws: Workspace, tmp_path: Path, path: str) -> None:
    with pytest.raises(RpcError, match="outside the session's folders"):
        ws.read_text(path.replace("{tmp}", str(tmp_path)))
    with pytest.raises(RpcError, match="outside"):
        ws.write_text(path.replace("{tmp}", str(tmp_path)), "x")
    assert (tmp_path / "secret.txt").read_text() == "secret"


def test_paths_inside_are_read(ws: Workspace, tmp_path: Path) -> None:
    assert ws.read_text(str(ws.cwd / "a.txt")).startswith("one\n")
    assert ws.read_text("link-in") == ws.read_text("a.txt")
    (tmp_path / "extra" / "b.txt").write_text("b")
    assert ws.read_text(str(tmp_path / "extra" / "b.txt")) == "b"


def test_line_and_limit_split_at_newlines_only(ws: Workspace) -> None:
    assert ws.read_text("a.txt", line=2, limit=2) == "two\r\nthree\u2028still three\n"
    assert ws.read_text("a.txt", line=4) == "four"
    assert ws.read_text("a.txt", line=9) == ""
    assert ws.read_text("a.txt", limit=1) == "one\n"
    with pytest.raises(RpcError, match="line must be"):
        ws.read_text("a.txt", line=-1)


def test_a_missing_file_is_an_error_or_empty(ws: Workspace) -> None:
    with pytest.raises(RpcError) as info:
        ws.read_text("nope.txt")
    assert info.value.code == -32002
    assert ws.read_text("nope.txt", missing="empty") == ""


def test_writes_are_atomic_and_make_folders(ws: Workspace) -> None:
    ws.write_text("new/deep/file.txt", "hello\r\n")
    assert (ws.cwd / "new" / "deep" / "file.txt").read_bytes() == b"hello\r\n"
    (ws.cwd / "a.txt").chmod(0o640)
    ws.write_text("a.txt", "replaced")
    assert (ws.cwd / "a.txt").read_text() == "replaced"
    assert oct((ws.cwd / "a.txt").stat().st_mode & 0o777) == "0o640"
    assert not [p for p in ws.cwd.iterdir() if p.name.startswith(".a.txt.")]
    with pytest.raises(RpcError, match="content must be a string"):
        ws.write_text("a.txt", 5)
    with pytest.raises(RpcError, match="directory"):
        ws.write_text("sub", "x")


def test_terminal_command_lines() -> None:
    assert argv("ls", ["-l"]) == ["ls", "-l"]
    assert argv("ls", None) == ["ls"]
    assert argv("echo hi; cat f", None) == ["/bin/sh", "-c", "echo hi; cat f"]


def test_output_is_cut_from_the_start_at_a_character_boundary() -> None:
    data = "aé€😀".encode()  # 1 + 2 + 3 + 4 bytes
    assert trimmed(data, 100) == (data, False)
    assert trimmed(data, 4) == ("😀".encode(), True)
    assert trimmed(data, 6) == ("😀".encode(), True)
    assert trimmed(data, 7) == ("€😀".encode(), True)


def test_only_regular_files_of_a_size_that_fits_a_message_are_read(
    ws: Workspace, tmp_path: Path
) -> None:
    from acp_adapters.client.workspace import READ_LIMIT

    os.mkfifo(ws.cwd / "fifo")
    with pytest.raises(RpcError, match="not a regular file"):  # at once: no writer ever comes
        ws.read_text("fifo")
    with pytest.raises(RpcError, match="is a directory"):
        ws.read_text("sub")
    with open(ws.cwd / "huge.txt", "wb") as handle:
        handle.truncate(READ_LIMIT + 1)  # sparse: nothing is written to the disk
    with pytest.raises(RpcError, match="too large to read") as info:
        ws.read_text("huge.txt", line=1, limit=1)
    assert info.value.code == -32602


def test_content_no_utf8_can_hold_is_refused_and_leaves_nothing(ws: Workspace) -> None:
    with pytest.raises(RpcError, match="not valid Unicode") as info:
        ws.write_text("half.txt", "a\ud800b")
    assert info.value.code == -32602
    assert sorted(p.name for p in ws.cwd.iterdir()) == ["a.txt", "link-in", "link-out", "sub"]


def test_a_path_no_file_system_name_holds_is_invalid_params(ws: Workspace) -> None:
    for action in (lambda: ws.read_text("half\ud800.txt"), lambda: ws.write_text("h\ud800", "x")):
        with pytest.raises(RpcError, match="not valid Unicode") as info:
            action()
        assert info.value.code == -32602


def test_the_cwd_as_given_and_as_real_both_place_a_path(tmp_path: Path) -> None:
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "real" / "a.txt").write_text("a")
    os.symlink(tmp_path / "real", tmp_path / "alias")
    ws = Workspace(tmp_path / "alias")
    try:
        assert ws.cwd == tmp_path / "real"
        assert ws.read_text(str(tmp_path / "alias" / "a.txt")) == "a"
        assert ws.read_text(str(tmp_path / "real" / "a.txt")) == "a"
        assert ws.read_confined(str(tmp_path / "alias" / "a.txt"), 10) == "a"
        assert ws.resolve(str(tmp_path / "alias" / "sub")) == tmp_path / "real" / "sub"
        assert ws.resolve("sub") == tmp_path / "real" / "sub"
        with pytest.raises(RpcError, match="outside") as info:
            ws.resolve(str(tmp_path))
        assert info.value.code == -32000
    finally:
        ws.close()
