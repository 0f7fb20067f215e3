"""A raw value too large for the wire becomes a summary that is one short line, whatever its shape.

The agent chooses a tool's raw input and output (their keys too): a summary is built from them,
so it is held to its bound (:data:`~acp_adapters.wire.SUMMARY_CHARS` characters, no line break
nor control character) for every shape: many keys, long keys, keys and strings with line
breaks, deep nesting, huge strings, many lines.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from acp_adapters.timeline.items import ToolItem
from acp_adapters.wire import RAW_LIMIT, SUMMARY_CHARS, wire_item

#: What would start a new line, or act on a terminal, where a summary is shown: C0 and C1
#: controls (line breaks, tabs, escapes) and the Unicode line and paragraph separators.
LINE_BREAKING = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def assert_bounded(summary: Any) -> None:
    assert isinstance(summary, str)
    assert len(summary) <= SUMMARY_CHARS, len(summary)
    assert not LINE_BREAKING.search(summary), repr(summary[:200])
    assert summary.startswith("[")
    # It is text a client can send on: valid JSON as a string, as the wire sends it.
    json.dumps(summary, ensure_ascii=False).encode("utf-8", "surrogatepass")


def test_eight_keys_of_256_kb_with_line_breaks_are_summarised_in_one_short_line() -> None:
    key = "line\n" * (256 * 1024 // 5)
    raw = {f"{number}{key}": number for number in range(8)}
    wired = wire_item(ToolItem(id="t1", input=raw))
    assert wired["truncated"] is True
    assert_bounded(wired["input"])
    # It still says what it was: an object, its keys' starts, its size.
    assert wired["input"].startswith("[object with keys 0line line")
    assert f"{len(json.dumps(raw, separators=(',', ':')).encode())} bytes" in wired["input"]


def test_a_value_of_many_lines_many_keys_or_deep_nesting_is_one_short_line() -> None:
    deep: Any = "x" * RAW_LIMIT
    for _ in range(5000):
        deep = [deep]
    shapes: list[Any] = [
        "\u2028\r\n\x1b[2J" * RAW_LIMIT,
        {str(n): "\x85" * 10 for n in range(100_000)},
        ["\n"] * RAW_LIMIT,
        deep,
        {"\x9b" * 1000: "v" * RAW_LIMIT},
    ]
    for raw in shapes:
        # As a store keeps an item (its JSON): deeper than an item model can be dumped.
        wired = wire_item({"id": "e", "kind": "error", "message": "m", "data": raw})
        assert wired["truncated"] is True
        assert_bounded(wired["data"])


# Keys and strings drawn from characters that break lines and act on terminals, among others.
_TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from('\n\r\t\x0b\x0c\x1b\x85\x9b\u2028\u2029\x00 a{}[]":,'),
        st.characters(codec="utf-8"),
    ),
    max_size=40,
)
_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(_TEXT, inner, max_size=6),
    max_leaves=40,
)


@settings(max_examples=200, deadline=None)
@given(value=_VALUES, padding=st.integers(min_value=0, max_value=3), key=_TEXT)
def test_any_raw_value_over_the_limit_has_a_bounded_summary(
    value: Any, padding: int, key: str
) -> None:
    # Made larger than the limit in each of the ways a value grows: a long string, many
    # items, long keys.
    key = key or "k"
    big: Any = [
        {key * (RAW_LIMIT // len(key) + 1): value},
        [value] * (RAW_LIMIT // 2 + 1),  # each item at least 1 character and a comma
        {"k": value, "pad": "\n" * (RAW_LIMIT + 1)},
        key * (RAW_LIMIT + 1),
    ][padding]
    wired = wire_item(ToolItem(id="t", input=big, output=value))
    assert wired["truncated"] is True
    assert_bounded(wired["input"])
    # What was not over the limit is sent as it is.
    if len(json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")) <= RAW_LIMIT:
        assert wired.get("output") == value
