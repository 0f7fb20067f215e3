"""A message's versions share their chunks, yet each keeps exactly what it had."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from acp_adapters.runtime.values import Block, Message


def text(words: str) -> Block:
    return Block(type="text", data={"type": "text", "text": words})


CHUNKS = st.one_of(
    st.text(min_size=1, max_size=5).map(text),
    st.just(text("")),
    st.just(Block(type="image", data={"type": "image", "data": "AA==", "mimeType": "image/png"})),
    st.just(Block(type="text", data={"type": "text", "text": "noted", "annotations": {}})),
)


def merged(history: list[Block]) -> tuple[Block, ...]:
    """The plain definition: runs of plain-text chunks are one text block."""
    blocks: list[Block] = []
    for block in history:
        plain = block.type == "text" and set(block.data) == {"type", "text"}
        last = blocks[-1] if blocks else None
        if plain and last is not None and set(last.data) == {"type", "text"}:
            blocks[-1] = text((last.text or "") + (block.text or ""))
        else:
            blocks.append(text(block.text or "") if plain else block)
    return tuple(blocks)


@given(
    st.lists(
        # (how many versions back to grow from, the chunks, whether they add or replace)
        st.tuples(
            st.one_of(st.just(0), st.integers(min_value=0, max_value=30)),
            st.lists(CHUNKS, max_size=3),
            st.booleans(),
        ),
        max_size=25,
    ),
    st.lists(st.integers(min_value=0), max_size=10),
)
def test_every_version_keeps_its_own_blocks(
    steps: list[tuple[int, list[Block], bool]], reads: list[int]
) -> None:
    versions = [(Message(id="m", role="agent"), [])]
    for step, (back, chunks, append) in enumerate(steps):
        message, history = versions[-1 - back % len(versions)]
        grown = message.with_blocks(chunks, append=append, last_seq=step)
        versions.append((grown, [*history, *chunks] if append else list(chunks)))
        # Reading any version in between (which joins text) changes nothing either.
        for read in reads[step : step + 1]:
            versions[read % len(versions)][0].blocks  # noqa: B018
    for message, history in versions:
        assert message.blocks == merged(history)
        assert message.text == "".join(b.text or "" for b in merged(history))


def test_equal_messages_are_equal_however_they_were_chunked() -> None:
    one = Message(id="m", role="agent").with_blocks([text("hel"), text("lo")], append=True)
    other = Message(id="m", role="agent").with_blocks([text("hello")], append=True)
    assert one == other
    assert hash(one) == hash(other)
    assert one != Message(id="m", role="agent").with_blocks([text("hell")], append=True)


def test_compact_values_share_one_fields_set_that_no_copy_changes() -> None:
    from acp_adapters.runtime.values import Location, ToolCall, compact

    first = compact(ToolCall(id="a", title="one", locations=(compact(Location(path="/x")),)))
    second = compact(ToolCall(id="b"))
    # Every field counts as set (a projected value decides them all), in one shared set.
    assert first.model_fields_set == set(ToolCall.model_fields)
    assert first.model_fields_set is second.model_fields_set
    before = first.model_dump()
    changed = first.model_copy(update={"title": "two"})
    assert changed.title == "two"
    assert first.title == "one"
    assert first.model_dump() == before
    assert ToolCall.model_validate(first.model_dump()) == first
    # An update that names a field the class lacks goes into the copy's own set alone.
    odd = first.model_copy(update={"not_a_field": 1})
    assert "not_a_field" in odd.model_fields_set
    assert "not_a_field" not in second.model_fields_set
