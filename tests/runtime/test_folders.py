"""One spelling of a file: ``a.txt``, ``./a.txt`` and ``/ws/a.txt`` name one file in ``/ws``.

The projection keys what it knows of files (reads, writes, disk reads) by the path
:func:`resolved_path` gives; two spellings of one file that resolve apart lose the
file's before content, and so its true patch.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_adapters.runtime.folders import resolved_path


@pytest.mark.parametrize(
    ("path", "cwd", "expected"),
    [
        ("a.txt", "/ws", "/ws/a.txt"),
        ("./a.txt", "/ws", "/ws/a.txt"),
        ("sub/../a.txt", "/ws", "/ws/a.txt"),
        ("../x", "/ws/sub", "/ws/x"),
        ("sub//a.txt", "/ws", "/ws/sub/a.txt"),
        ("a.txt", "/ws/", "/ws/a.txt"),
        (".", "/ws", "/ws"),
    ],
)
def test_a_relative_path_is_taken_from_the_session_folder(
    path: str, cwd: str, expected: str
) -> None:
    assert resolved_path(path, cwd) == expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/ws/./a.txt", "/ws/a.txt"),
        ("/ws/sub/../a.txt", "/ws/a.txt"),
        ("/ws//sub///a.txt", "/ws/sub/a.txt"),
        ("//ws/a.txt", "/ws/a.txt"),  # normpath would keep a leading "//"
        ("///ws/a.txt", "/ws/a.txt"),
        ("/ws/sub/", "/ws/sub"),
        ("/..", "/"),
        ("//", "/"),
    ],
)
def test_an_absolute_path_is_folded_and_its_slashes_made_one(path: str, expected: str) -> None:
    assert resolved_path(path, None) == expected
    # The session's folder plays no part for a path that is absolute already.
    assert resolved_path(path, "/elsewhere") == expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("<workspace>/a.txt", "<workspace>/a.txt"),
        ("<workspace>/./sub/../a.txt", "<workspace>/a.txt"),
        ("<workspace>//a.txt", "<workspace>/a.txt"),
        ("<home>/.config/x", "<home>/.config/x"),
    ],
)
def test_a_capture_folder_mark_counts_as_an_absolute_name(path: str, expected: str) -> None:
    assert resolved_path(path, "/ws") == expected
    assert resolved_path(path, None) == expected


def test_a_relative_path_is_taken_from_a_marked_session_folder() -> None:
    """A capture's session folder is ``<workspace>``: relative paths are taken from it."""
    assert resolved_path("a.txt", "<workspace>") == "<workspace>/a.txt"
    assert resolved_path("./sub/../a.txt", "<workspace>") == "<workspace>/a.txt"


@pytest.mark.parametrize("path", ["a.txt", "./a.txt", "sub/../a.txt", "../a.txt", "a//b"])
@pytest.mark.parametrize("cwd", [None, "", "relative/folder"])
def test_without_a_known_absolute_folder_a_relative_path_is_left_as_it_is(
    path: str, cwd: str | None
) -> None:
    assert resolved_path(path, cwd) == path


@pytest.mark.parametrize("path", ["", "a\x00b", "/ws/a\x00/../b", "\x00"])
def test_an_empty_path_or_one_holding_nul_is_untouched(path: str) -> None:
    assert resolved_path(path, "/ws") == path
    assert resolved_path(path, None) == path


def test_three_spellings_of_one_file_resolve_to_one() -> None:
    spellings = ["a.txt", "./a.txt", "/ws/a.txt", "/ws/./a.txt", "sub/../a.txt", "//ws//a.txt"]
    assert {resolved_path(p, "/ws") for p in spellings} == {"/ws/a.txt"}


# --- laws -------------------------------------------------------------------------------------

#: A name of a file or folder that means nothing special (no mark, no slash, no NUL).
NAMES = st.text(alphabet="abcxyz019_-.", min_size=1, max_size=6).filter(
    lambda s: s not in (".", "..")
)
SEGMENTS = st.one_of(NAMES, st.sampled_from([".", "..", ""]))
RELATIVE = (
    st.lists(SEGMENTS, min_size=1, max_size=8)
    .map("/".join)
    .filter(lambda p: p != "" and not p.startswith("/"))
)
ABSOLUTE = st.builds(
    lambda slashes, rest: slashes + rest, st.sampled_from(["/", "//", "///"]), RELATIVE
)
FOLDERS = st.one_of(
    st.none(),
    st.builds(lambda rel: "/" + rel, st.lists(NAMES, max_size=3).map("/".join)),
)


@given(path=st.one_of(RELATIVE, ABSOLUTE), cwd=FOLDERS)
def test_resolving_a_resolved_path_again_changes_nothing(path: str, cwd: str | None) -> None:
    once = resolved_path(path, cwd)
    assert resolved_path(once, cwd) == once


@given(path=RELATIVE)
def test_a_relative_path_is_the_absolute_one_under_the_folder(path: str) -> None:
    assert resolved_path(path, "/ws") == resolved_path("/ws/" + path, None)


@given(path=st.one_of(RELATIVE, ABSOLUTE), cwd=FOLDERS)
def test_a_resolved_path_has_no_dot_segment_nor_doubled_slash(path: str, cwd: str | None) -> None:
    once = resolved_path(path, cwd)
    if once.startswith("/"):
        assert "//" not in once
        assert once == "/" or not once.endswith("/")
        assert not {".", ".."} & set(once.split("/")[1:])
