"""The revert's three-way merge: the turn's hunks undone, the later edits kept, a hunk a
later edit touched a conflict named by its header in the turn's patch."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from acp_adapters.workspace.revert import merge

LINES = st.lists(st.sampled_from(["a", "b", "c", "", "dd"]), min_size=0, max_size=6)


def _text(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


@given(LINES, LINES)
def test_a_file_nothing_changed_since_is_put_back_whole(start: list[str], end: list[str]) -> None:
    found = merge(_text(start), _text(end), _text(end))
    assert (found.text, found.conflicts) == (_text(start), ())


BLOCKS = 6


@st.composite
def _apart(draw: st.DrawFn) -> tuple[list[list[str]], int, list[str], int, list[str]]:
    """Blocks of lines between separators; the turn changes one block, a later edit
    another at least two blocks away."""
    blocks = [
        [f"b{n} {line}" for line in draw(st.lists(st.sampled_from("xyz"), min_size=1, max_size=3))]
        for n in range(BLOCKS)
    ]
    turn = draw(st.integers(0, BLOCKS - 1))
    later = draw(st.integers(0, BLOCKS - 1).filter(lambda b: abs(b - turn) >= 2))
    return (
        blocks,
        turn,
        draw(st.lists(st.sampled_from(["T1", "T2"]), max_size=3)),
        later,
        draw(st.lists(st.sampled_from(["L1", "L2"]), max_size=3)),
    )


def _joined(blocks: list[list[str]]) -> str:
    return _text([line for n, block in enumerate(blocks) for line in [*block, f"--- {n} ---"]])


@given(_apart())
def test_the_turns_hunk_is_undone_and_a_later_edit_apart_from_it_kept(
    case: tuple[list[list[str]], int, list[str], int, list[str]],
) -> None:
    blocks, turn, turn_lines, later, later_lines = case
    start = _joined(blocks)
    end = _joined([turn_lines if n == turn else b for n, b in enumerate(blocks)])
    now = _joined(
        [
            turn_lines if n == turn else later_lines if n == later else b
            for n, b in enumerate(blocks)
        ]
    )
    found = merge(start, end, now)
    expected = _joined([later_lines if n == later else b for n, b in enumerate(blocks)])
    assert (found.text, found.conflicts) == (expected, ())


def test_a_later_edit_of_the_turns_lines_or_the_line_beside_them_is_a_conflict() -> None:
    start = _text([f"line {n}" for n in range(10)])
    end = start.replace("line 4\n", "LINE FOUR\n")
    for touched in ("LINE FOUR\n", "line 3\n", "line 5\n"):
        found = merge(start, end, end.replace(touched, "later\n"))
        assert found.text is None
        assert [hunk.header for hunk in found.conflicts] == ["@@ -2,7 +2,7 @@"]
    apart = merge(start, end, end.replace("line 7\n", "later\n"))
    assert apart.text == start.replace("line 7\n", "later\n")


def test_a_hunk_a_later_edit_undid_the_same_way_is_done() -> None:
    start = _text(["one", "two", "three", "four", "five", "six"])
    end = start.replace("two\n", "TWO\n")
    now = start.replace("six\n", "SIX\n")  # undone by hand, and an edit apart
    assert merge(start, end, now).text == now


def test_a_merge_past_the_edit_cap_gives_up() -> None:
    start = _text([f"old {n}" for n in range(100)])
    end = _text([f"new {n}" for n in range(100)])
    found = merge(start, end, end + "later\n", max_edits=10)
    assert (found.capped, found.text) == (True, None)
