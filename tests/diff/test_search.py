"""The edit search's shortcuts never change its answer.

The fast paths (lower-bound pruning, iterative deepening, the closed form for texts
with no line in common) must give exactly the script of the plain forward search,
which the property and vector tests tie to jsdiff.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_adapters.diff import search
from acp_adapters.diff.bounds import interned, order_bound, presence_bound
from acp_adapters.diff.lines import split_lines
from acp_adapters.diff.search import DELETE, EQUAL, INSERT, common_prefix, edit_script
from diff_helpers import edit_distance
from jsdiff_reference import create_two_files_patch

WORDS = st.one_of(st.sampled_from(["a", "b", "", "}"]), st.integers(0, 40).map(lambda i: f"u{i}"))


def _plain(a: list[object], b: list[object], limit: int) -> search.Script | None:
    """The forward search with no bounds and no budget."""
    prefix = common_prefix(a, b)
    if prefix == len(a) == len(b):
        return edit_script(a, b, limit)
    plain = search._Search(a, b, prefix, limit)
    plain.advance(1 << 62)
    return plain.result()


@st.composite
def line_pairs(draw: st.DrawFn) -> tuple[list[object], list[object]]:
    old = draw(st.lists(WORDS, min_size=1, max_size=50))
    new = list(old)
    for _ in range(draw(st.integers(0, 14))):
        at = draw(st.integers(0, len(new)))
        op = draw(st.sampled_from(["insert", "delete", "replace", "swap", "reverse"]))
        if op == "insert":
            new.insert(at, draw(WORDS))
        elif new and op == "delete":
            del new[min(at, len(new) - 1)]
        elif new and op == "replace":
            new[min(at, len(new) - 1)] = f"v{draw(st.integers(0, 20))}"
        elif len(new) > 1 and op == "swap":
            i = min(at, len(new) - 2)
            new[i], new[i + 1] = new[i + 1], new[i]
        elif op == "reverse":
            new[at:] = new[at:][::-1]
    return old, new or ["z"]


@given(line_pairs(), st.sampled_from([2, 6, 15, 40, 1000]))
def test_bounded_search_finds_the_plain_searchs_script(
    pair: tuple[list[object], list[object]], cap: int
) -> None:
    a, b = pair
    limit = min(cap, len(a) + len(b))
    prefix = common_prefix(a, b)
    if prefix == len(a) == len(b):
        return
    expected = _plain(a, b, limit)
    # Every bound, entered as early as possible (a first search that has not begun).
    first = search._Search(a, b, prefix, limit)
    assert search._bounded(a, b, prefix, limit, first) == expected
    assert edit_script(a, b, cap) == expected


@given(line_pairs(), st.sampled_from([2, 6, 15, 1000]), st.sampled_from([(0.0, 0), (0.0, 3)]))
def test_every_stage_of_the_search_agrees(
    pair: tuple[list[object], list[object]], cap: int, budget: tuple[float, int]
) -> None:
    """Budgets of (almost) nothing send every input through each later stage."""
    a, b = pair
    expected = _plain(a, b, min(cap, len(a) + len(b)))
    saved = search.FIRST_SEARCH_CELLS, search.PRESENCE_SEARCH_CELLS
    search.FIRST_SEARCH_CELLS = search.PRESENCE_SEARCH_CELLS = budget
    try:
        assert edit_script(a, b, cap) == expected
    finally:
        search.FIRST_SEARCH_CELLS, search.PRESENCE_SEARCH_CELLS = saved


@given(line_pairs())
def test_bounds_never_exceed_the_edits_left(pair: tuple[list[object], list[object]]) -> None:
    a, b = pair
    a_ids, b_ids = interned(a, b)
    bounds = [presence_bound(a, b, 0), order_bound(a_ids, b_ids, 0)]
    for x in range(len(a) + 1):
        for y in range(len(b) + 1):
            rest = edit_distance(_text(a[x:]), _text(b[y:]))
            for bound in bounds:
                assert bound.remaining(x, y) <= rest
    for bound in bounds:
        assert bound.floor <= edit_distance(_text(a), _text(b))


def _text(lines: list[object]) -> str:
    return "".join(f"{line}\n" for line in lines)


def test_no_line_in_common_deletes_everything_then_inserts() -> None:
    a = ["same", *(f"old {i}" for i in range(300))]
    b = ["same", *(f"new {i}" for i in range(299))]
    assert edit_script(a, b, 1000) == [(EQUAL, 1), (DELETE, 300), (INSERT, 299)]
    assert edit_script(a, b, 598) is None


@pytest.mark.parametrize("seed", range(6))
def test_large_searches_match_jsdiff(seed: int) -> None:
    """Inputs big enough to leave the first phase: swaps, moves, replacements, repeats."""
    rng = random.Random(seed)
    size = rng.choice([300, 600])
    pool = [f"line {i} = value({i})" for i in range(size)]
    old = [rng.choice(["}", "", *pool]) if rng.random() < 0.1 else pool[i] for i in range(size)]
    new = list(old)
    for _ in range(rng.randint(20, 160)):
        i = rng.randrange(len(new) - 1)
        kind = rng.random()
        if kind < 0.3:
            new[i], new[i + 1] = new[i + 1], new[i]
        elif kind < 0.6:
            new[i] = f"changed {rng.random()}"
        elif kind < 0.8:
            new.insert(i, rng.choice(["}", "", f"added {i}"]))
        else:
            new.insert(rng.randrange(len(new)), new.pop(i))
    old_text, new_text = _text(old), _text(new)
    expected = create_two_files_patch("f", "f", old_text, new_text, max_edit_length=1000)
    from acp_adapters import unified_diff

    assert unified_diff("f", "f", old_text, new_text, max_edits=1000) == expected


def test_split_lines_keeps_jsdiff_tokens() -> None:
    assert split_lines("") == []
    assert split_lines("a") == [("a",)]
    assert split_lines("a\n") == ["a"]
    assert split_lines("a\r\n\nb") == ["a\r", "", ("b",)]
    assert split_lines("\n") == [""]
    # A last line without newline is not the same line as one with it.
    assert split_lines("a\n")[0] != split_lines("a")[0]
