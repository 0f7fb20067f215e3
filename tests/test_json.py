"""JSON as ACP lines are read and written: lone surrogates and deep nesting from a peer."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_adapters import _json


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@given(st.recursive(st.text() | st.integers(), lambda inner: st.lists(inner, max_size=3)))
def test_written_text_is_utf8_and_reads_back_the_same(value: object) -> None:
    text = _json.dumps(value)
    text.encode("utf-8")  # never raises, lone surrogates included
    assert _json.loads(text) == value


def test_non_ascii_is_written_as_it_is_and_a_lone_surrogate_escaped() -> None:
    assert _json.dumps({"x": "é"}) == '{"x": "é"}'
    assert _json.dumps({"x": "é\ud800"}) == '{"x": "\\u00e9\\ud800"}'


@pytest.mark.parametrize("as_bytes", [False, True])
def test_nesting_up_to_the_limit_is_read_and_deeper_is_refused(as_bytes: bool) -> None:
    def read(text: str) -> object:
        return _json.loads(text.encode() if as_bytes else text)

    assert read(nested(_json.MAX_DEPTH)) is not None
    for depth in (_json.MAX_DEPTH + 1, 5_000, 200_000):  # 200,000 exhausts Python's recursion
        with pytest.raises(ValueError, match="nested deeper than"):
            read(nested(depth))
    # Many brackets side by side are not depth.
    wide = json.dumps([[[i]] for i in range(1_000)])
    assert len(read(wide)) == 1_000  # type: ignore[arg-type]
    with pytest.raises(json.JSONDecodeError):
        read("{not json")
