"""The timeline as text for another agent: each item by the render_item_text hook (a
provider's plugin first), read a page at a time without anything cut."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_adapters import (
    AssistantMessageItem,
    CommandExecutionItem,
    FileChangeItem,
    Provider,
    UserMessageItem,
    get_plugin_manager,
    hookimpl,
)
from acp_adapters.projection.text import TextPage, render_items, timeline_text

PATCH = "--- a.py\n+++ a.py\n@@ -1 +1 @@\n-old\n+new\n"
ITEMS = [
    UserMessageItem(text="fix it"),
    FileChangeItem(paths=("a.py",), additions=1, deletions=1, diff_str=PATCH),
    CommandExecutionItem(command="pytest -q", output="1 passed\n", exit_code=0),
    AssistantMessageItem(text="done 🎉"),
]


def test_each_kind_reads_as_the_other_agent_needs_it() -> None:
    assert render_items(ITEMS) == (
        "User: fix it\n\n"
        "Edited a.py +1 -1\n" + PATCH.rstrip() + "\n\n"
        "$ pytest -q\n1 passed\n(exit 0)\n\n"
        "Assistant: done 🎉"
    )


def pages(items: list[Any], max_chars: int) -> list[TextPage]:
    read, offset = [], 0
    while True:
        page = timeline_text(items, offset=offset, max_chars=max_chars)
        read.append(page)
        if page.next_offset is None:
            return read
        offset = page.next_offset


@settings(max_examples=80, deadline=None)
@given(
    texts=st.lists(st.text(min_size=0, max_size=60), min_size=1, max_size=6),
    max_chars=st.integers(min_value=1, max_value=50),
)
def test_the_pages_read_in_turn_are_the_whole_text(texts: list[str], max_chars: int) -> None:
    items = [AssistantMessageItem(text=text) for text in texts]
    whole = render_items(items)
    read = pages(items, max_chars)
    assert "".join(page.text for page in read) == whole
    assert all(len(page.text) <= max_chars for page in read)
    assert all(page.truncated for page in read[:-1])
    assert not read[-1].truncated
    assert {page.total_chars for page in read} == {len(whole)}


def test_a_page_never_ends_inside_a_character() -> None:
    items = [AssistantMessageItem(text="🎉" * 30)]
    for page in pages(items, 7):
        page.text.encode("utf-8")  # a half of a pair would not encode
    first = timeline_text(items, max_chars=12)
    assert first.text == "Assistant: 🎉"
    assert first.next_offset == 12


def test_past_the_end_and_bad_bounds() -> None:
    past = timeline_text(ITEMS, offset=10_000)
    assert (past.text, past.next_offset, past.truncated) == ("", None, False)
    with pytest.raises(ValueError, match="offset"):
        timeline_text(ITEMS, offset=-1)
    with pytest.raises(ValueError, match="max_chars"):
        timeline_text(ITEMS, max_chars=0)


class AcmeText:
    """A provider plugin that renders its own agent's commands its own way."""

    @hookimpl
    def register_providers(self, register: Any) -> None:
        register(Provider(id="acme", name="Acme"))

    @hookimpl
    def render_item_text(self, item: Any, provider: Any) -> str | None:
        if provider is None or provider.id != "acme" or item.kind != "command_execution":
            return None
        return f"acme ran {item.command}"


def test_a_providers_plugin_renders_its_own_agents_items() -> None:
    pm = get_plugin_manager()
    pm.register(AcmeText(), name="acme")
    acme = Provider(id="acme", name="Acme")
    other = Provider(id="acp", name="ACP agent")
    command = [ITEMS[2]]
    assert timeline_text(command, provider=acme, pm=pm).text == "acme ran pytest -q"
    assert timeline_text(command, provider=other, pm=pm).text.startswith("$ pytest -q")
    assert timeline_text(command, pm=pm).text.startswith("$ pytest -q")
