"""diff_patch and file_patches on tool-call content as agents send it."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_adapters import DEFAULT_MAX_EDITS, FilePatch, diff_patch, file_patches
from diff_helpers import apply_patch, public_vectors

WORKSPACE_WRITE = {
    "type": "diff",
    "path": "<workspace>/.codex-probe-write-action.txt",
    "oldText": "",
    "newText": "codex app-server approval fixture.",
}


def _lines(count: int, tag: str) -> str:
    return "".join(f"{tag} line {i}: some code = compute({i})\n" for i in range(count))


def test_recorded_write_gives_the_vector_patch() -> None:
    expected = next(v for v in public_vectors() if v.id == "pub-001-fixture_recorded_write")
    assert diff_patch([WORKSPACE_WRITE]) == expected.expected
    assert diff_patch([WORKSPACE_WRITE]) == (
        "--- <workspace>/.codex-probe-write-action.txt\n"
        "+++ <workspace>/.codex-probe-write-action.txt\n"
        "@@ -0,0 +1,1 @@\n"
        "+codex app-server approval fixture.\n"
        "\\ No newline at end of file\n"
    )


def test_multi_file_call_joins_changed_files_with_one_blank_line() -> None:
    content = [
        {"type": "diff", "path": "/ws/new.py", "oldText": None, "newText": "print('hi')\n"},
        {
            "type": "diff",
            "path": "/ws/app.py",
            "oldText": "a = 1\nb = 2\n",
            "newText": "a = 1\nb = 3\n",
        },
        {"type": "diff", "path": "/ws/same.py", "oldText": "same\n", "newText": "same\n"},
    ]
    assert diff_patch(content) == (
        "--- /dev/null\n"
        "+++ /ws/new.py\n"
        "@@ -0,0 +1,1 @@\n"
        "+print('hi')\n"
        "\n"
        "--- /ws/app.py\n"
        "+++ /ws/app.py\n"
        "@@ -1,2 +1,2 @@\n"
        " a = 1\n"
        "-b = 2\n"
        "+b = 3\n"
    )
    assert [(p.path, p.operation, p.omitted_reason) for p in file_patches(content)] == [
        ("/ws/new.py", "add", None),
        ("/ws/app.py", "modify", None),
        ("/ws/same.py", "modify", "unchanged"),
    ]


def test_v2_patch_text_is_returned_as_sent() -> None:
    text = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"
    content = [
        {"type": "content", "content": {"type": "text", "text": "done"}},
        {
            "type": "diff",
            "changes": [{"operation": "modify", "path": "/ws/x"}],
            "patch": {"format": "git_patch", "text": text},
        },
        {"type": "diff", "path": "/ws/y", "oldText": "1\n", "newText": "2\n"},
    ]
    assert diff_patch(content) is text


def test_v2_diff_without_patch_text_falls_back_to_v1_entries() -> None:
    content = [
        {"type": "diff", "changes": [{"operation": "add", "path": "/ws/x"}], "patch": None},
        {"type": "diff", "changes": [], "patch": {"format": "git_patch", "text": 42}},
        {"type": "diff", "path": "/ws/y", "oldText": "1\n", "newText": "2\n"},
    ]
    assert diff_patch(content) == "--- /ws/y\n+++ /ws/y\n@@ -1,1 +1,1 @@\n-1\n+2\n"


def test_a_capped_rewrite_loses_only_its_own_patch() -> None:
    rewrite = {
        "type": "diff",
        "path": "/ws/big.py",
        "oldText": _lines(2000, "old"),
        "newText": _lines(2000, "new"),
    }
    small = {"type": "diff", "path": "/ws/small.py", "oldText": "x\n", "newText": "y\n"}
    assert diff_patch([rewrite]) is None
    assert (
        diff_patch([rewrite, small])
        == "--- /ws/small.py\n+++ /ws/small.py\n@@ -1,1 +1,1 @@\n-x\n+y\n"
    )
    patches = file_patches([rewrite, small])
    assert patches[0] == FilePatch("/ws/big.py", "modify", None, "capped")
    assert patches[1].patch is not None


def test_created_and_emptied_files_are_never_capped() -> None:
    big = _lines(5000, "line")
    created = {"type": "diff", "path": "/ws/c", "oldText": None, "newText": big}
    emptied = {"type": "diff", "path": "/ws/e", "oldText": big, "newText": ""}
    for entry in (created, emptied):
        (patch,) = file_patches([entry], max_edits=10)
        assert patch.patch is not None
        assert patch.patch.count("\n") == 5000 + 3


def test_the_cap_counts_inserted_plus_deleted_lines() -> None:
    old = _lines(600, "keep")
    # 500 replaced lines: 1,000 edits render; one more inserted line makes 1,001.
    new = _lines(100, "keep") + _lines(500, "changed")
    entry = {"type": "diff", "path": "/ws/f", "oldText": old, "newText": new}
    assert diff_patch([entry]) is not None
    assert diff_patch([{**entry, "newText": new + "extra\n"}]) is None
    assert diff_patch([entry], max_edits=999) is None
    assert file_patches([entry], max_edits=999)[0].omitted_reason == "capped"


def test_old_text_that_is_not_a_string_means_a_new_file() -> None:
    for old in (None, 7, ["x"], {"a": 1}):
        entry = {"type": "diff", "path": "/ws/n", "oldText": old, "newText": "x\n"}
        assert diff_patch([entry]) == "--- /dev/null\n+++ /ws/n\n@@ -0,0 +1,1 @@\n+x\n"
    absent = {"type": "diff", "path": "/ws/n", "newText": "x\n"}
    assert diff_patch([absent]) == "--- /dev/null\n+++ /ws/n\n@@ -0,0 +1,1 @@\n+x\n"
    empty = {"type": "diff", "path": "/ws/n", "oldText": "", "newText": "x\n"}
    assert diff_patch([empty]) == "--- /ws/n\n+++ /ws/n\n@@ -0,0 +1,1 @@\n+x\n"


def test_nothing_left_gives_none() -> None:
    assert diff_patch([]) is None
    assert (
        diff_patch([{"type": "diff", "path": "/ws/a", "oldText": "a\n", "newText": "a\n"}]) is None
    )
    # A new empty file has no lines to show.
    assert diff_patch([{"type": "diff", "path": "/ws/a", "newText": ""}]) is None
    assert file_patches([{"type": "diff", "path": "/ws/a", "newText": ""}])[0].omitted_reason == (
        "unchanged"
    )


def test_crlf_keeps_its_carriage_return_and_other_separators_do_not_split() -> None:
    old = "a\r\nb\u2028c\x0cd\rz\r\n"
    new = "a\r\nB\u2028c\x0cd\rz\r\n"
    patch = diff_patch([{"type": "diff", "path": "p", "oldText": old, "newText": new}])
    assert (
        patch == "--- p\n+++ p\n@@ -1,2 +1,2 @@\n a\r\n-b\u2028c\x0cd\rz\r\n+B\u2028c\x0cd\rz\r\n"
    )
    assert apply_patch(patch, {"p": old}) == {"p": new}


@dataclass(frozen=True)
class ModelDiff:
    """Content items of the runtime model carry attributes, not wire keys."""

    path: str
    old_text: str | None
    new_text: str
    type: str = "diff"


@dataclass(frozen=True)
class ModelPatch:
    format: str
    text: str


@dataclass(frozen=True)
class ModelDiffV2:
    changes: tuple[object, ...]
    patch: ModelPatch | None
    type: str = "diff"


def test_runtime_model_items_work_like_wire_dicts() -> None:
    items = [ModelDiff("/ws/a", None, "x\n"), ModelDiff("/ws/b", "1\n", "2\n")]
    wire = [
        {"type": "diff", "path": "/ws/a", "oldText": None, "newText": "x\n"},
        {"type": "diff", "path": "/ws/b", "oldText": "1\n", "newText": "2\n"},
    ]
    assert diff_patch(items) == diff_patch(wire) is not None
    assert file_patches(items) == file_patches(wire)
    v2 = ModelDiffV2((), ModelPatch("git_patch", "patch text"))
    assert diff_patch([*items, v2]) == "patch text"


@pytest.mark.parametrize(
    "content",
    [
        None,
        "diff",
        42,
        {"type": "diff", "path": "/a", "newText": "x"},
        [None, 1, "x", [], {}],
        [{"type": "diff"}],
        [{"type": "diff", "path": 1, "newText": "x"}],
        [{"type": "diff", "path": "/a", "newText": None}],
        [{"type": "diff", "path": "/a", "oldText": "x", "newText": 3}],
        [{"type": "Diff", "path": "/a", "newText": "x"}],
        [{"type": "terminal", "terminalId": "t"}],
        [{"type": "diff", "changes": [], "patch": "text"}],
        [{"type": "diff", "changes": [], "patch": {"text": None}}],
    ],
)
def test_bad_content_is_skipped(content: object) -> None:
    assert diff_patch(content) is None
    assert file_patches(content) == []


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
DIFF_KEYS = st.sampled_from(["type", "path", "oldText", "newText", "patch", "changes", "text"])
DIFFISH = st.dictionaries(DIFF_KEYS, JSON | st.just("diff"), max_size=5)


@given(st.one_of(JSON, st.lists(st.one_of(JSON, DIFFISH), max_size=5)))
def test_never_raises_on_any_json_value(content: object) -> None:
    json.dumps(content)  # it is a JSON value
    result = diff_patch(content)
    assert result is None or isinstance(result, str)
    for patch in file_patches(content):
        assert (patch.patch is None) == (patch.omitted_reason is not None)


@pytest.mark.parametrize("bad", [-1, 1.5, "10", None, True])
def test_max_edits_must_be_a_non_negative_integer(bad: object) -> None:
    with pytest.raises(ValueError, match="max_edits"):
        diff_patch([WORKSPACE_WRITE], max_edits=bad)  # type: ignore[arg-type]


def test_default_cap_is_one_thousand() -> None:
    assert DEFAULT_MAX_EDITS == 1000
