"""Laws the diff engine keeps on any input, checked with hypothesis.

* a patch applied to the old text gives the new text;
* its ``+`` and ``-`` lines are a minimal edit (checked against a plain LCS table);
* it is None exactly when that minimal edit exceeds the cap;
* it is byte for byte what jsdiff writes (the plain transcription in ``jsdiff_reference``).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from unidiff import PatchSet

from acp_adapters import unified_diff
from diff_helpers import apply_patch, edit_distance
from jsdiff_reference import create_two_files_patch

# Few distinct lines make many equal lines and ambiguous alignments; the odd ones carry
# separators that must not split a line (\r, U+2028, form feed, NEL) and an empty line.
LINE = st.sampled_from(["a", "b", "c", "", "x\r", "y\u2028z", "\x0c", "n\x85l", "é"])


@st.composite
def texts(draw: st.DrawFn, max_lines: int = 25) -> str:
    lines = draw(st.lists(LINE, max_size=max_lines))
    text = "\n".join(lines)
    return text + "\n" if lines and draw(st.booleans()) else text


@st.composite
def edited(draw: st.DrawFn, old: str) -> str:
    """A text close to ``old``: a few lines inserted, deleted, replaced or swapped."""
    lines = old.split("\n")
    for _ in range(draw(st.integers(0, 6))):
        at = draw(st.integers(0, len(lines)))
        op = draw(st.sampled_from(["insert", "delete", "replace", "swap"]))
        if op == "insert":
            lines.insert(at, draw(LINE))
        elif lines and op == "delete":
            del lines[min(at, len(lines) - 1)]
        elif lines and op == "replace":
            lines[min(at, len(lines) - 1)] = draw(LINE) + "!"
        elif len(lines) > 1:
            i = min(at, len(lines) - 2)
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
    return "\n".join(lines)


@st.composite
def text_pairs(draw: st.DrawFn) -> tuple[str, str]:
    old = draw(texts())
    new = draw(st.one_of(texts(), edited(old)))
    return old, new


CAPS = st.one_of(st.none(), st.integers(0, 40))


def _changed_lines(patch: str) -> int:
    return sum(f.added + f.removed for f in PatchSet(patch))


@given(text_pairs())
def test_applying_the_patch_gives_the_new_text(pair: tuple[str, str]) -> None:
    old, new = pair
    patch = unified_diff("f", "f", old, new)
    assert patch is not None
    assert apply_patch(patch, {"f": old}) == {"f": new}


@given(text_pairs())
def test_the_patch_is_a_minimal_edit(pair: tuple[str, str]) -> None:
    old, new = pair
    patch = unified_diff("f", "f", old, new)
    assert patch is not None
    assert _changed_lines(patch) == edit_distance(old, new)


@given(text_pairs(), st.integers(0, 40))
def test_the_cap_gives_up_exactly_past_the_minimal_edit(pair: tuple[str, str], cap: int) -> None:
    old, new = pair
    patch = unified_diff("f", "f", old, new, max_edits=cap)
    assert (patch is None) == (edit_distance(old, new) > cap)


@given(text_pairs(), CAPS)
def test_output_is_jsdiffs_byte_for_byte(pair: tuple[str, str], cap: int | None) -> None:
    old, new = pair
    expected = create_two_files_patch("a/f", "b/f", old, new, max_edit_length=cap)
    assert unified_diff("a/f", "b/f", old, new, max_edits=cap) == expected


@given(st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=60), st.data())
def test_long_ambiguous_inputs_match_jsdiff(lines: list[str], data: st.DataObject) -> None:
    old = "\n".join(lines) + "\n"
    new = data.draw(edited(old))
    cap = data.draw(st.sampled_from([None, 5, 20, 1000]))
    expected = create_two_files_patch("f", "f", old, new, max_edit_length=cap)
    assert unified_diff("f", "f", old, new, max_edits=cap) == expected
