"""A timeline as text, for another agent to read, a page at a time.

Each item is rendered by the ``render_item_text`` hook, given the session's provider (its
plugin may render its own agent's items; the built-in rendering shows a file_change as its
paths, ``+A -D`` and the patch, a command as ``$ command`` and its output, a message as its
text), and the items are joined by a blank line. :func:`timeline_text` gives one page of at
most ``max_chars`` characters from ``offset``, and where the next page starts: an agent
reads a long thread in pages without anything being cut inside a character.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pluggy

from ..plugin.hooks import Hooks
from ..plugin.manager import get_plugin_manager
from ..plugin.providers import Provider
from ..timeline.items import TimelineItem

#: How many characters a page holds by default.
DEFAULT_MAX_CHARS = 20_000
#: What separates two items' texts.
SEPARATOR = "\n\n"


@dataclass(frozen=True)
class TextPage:
    """One page of a timeline's text."""

    text: str
    #: Where the page starts, in characters of the whole text.
    offset: int
    #: Where the next page starts; None when this page is the last.
    next_offset: int | None
    #: Whether the text goes on past this page.
    truncated: bool
    #: How long the whole text is.
    total_chars: int


def render_items(
    items: Iterable[TimelineItem],
    *,
    provider: Provider | None = None,
    pm: pluggy.PluginManager | None = None,
    hooks: Hooks | None = None,
) -> str:
    """The text of items, in the order given, each by the ``render_item_text`` hook."""
    hooks = hooks or Hooks(pm or get_plugin_manager())
    return SEPARATOR.join(hooks.render_item_text(item, provider) for item in items)


def timeline_text(
    items: Iterable[TimelineItem],
    *,
    provider: Provider | None = None,
    offset: int = 0,
    max_chars: int = DEFAULT_MAX_CHARS,
    pm: pluggy.PluginManager | None = None,
    hooks: Hooks | None = None,
) -> TextPage:
    """One page of the text of ``items`` (a :class:`~acp_adapters.timeline.timeline.Timeline`
    or a list of items): at most ``max_chars`` characters from ``offset``.

    Characters are code points: a page never ends inside one (a character outside the
    Basic Multilingual Plane is one character, never half of a pair).

    :raises ValueError: ``offset`` is negative or ``max_chars`` is not positive.
    """
    if offset < 0:
        raise ValueError(f"offset must be 0 or more, not {offset}")
    if max_chars <= 0:
        raise ValueError(f"max_chars must be more than 0, not {max_chars}")
    text = render_items(items, provider=provider, pm=pm, hooks=hooks)
    page = text[offset : offset + max_chars]
    end = offset + len(page)
    more = end < len(text)
    return TextPage(
        text=page,
        offset=min(offset, len(text)),
        next_offset=end if more else None,
        truncated=more,
        total_chars=len(text),
    )


__all__ = ["DEFAULT_MAX_CHARS", "TextPage", "render_items", "timeline_text"]
