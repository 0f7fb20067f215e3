"""A turn's results: what a prompt came to, and its changes as they come.

:class:`Turn` is what :meth:`Session.prompt <acp_adapters.client.session.Session.prompt>`
returns; :class:`TurnStream` what :meth:`~acp_adapters.client.session.Session.stream_prompt`
and :meth:`~acp_adapters.client.session.Session.changes` yield, each change an
:class:`ItemChange` or a :class:`SessionChange`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import anyio

from ..timeline.items import TimelineItem


def prompt_blocks(prompt: str | Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A prompt as content blocks: a string is one text block."""
    return [{"type": "text", "text": prompt}] if isinstance(prompt, str) else list(prompt)


@dataclass(frozen=True)
class ItemChange:
    """A timeline item that appeared or changed, as it is now."""

    item: TimelineItem


@dataclass(frozen=True)
class SessionChange:
    """Something the agent reported of the session changed: ``kind`` is ``usage``, ``info``
    (title, updated time), ``commands``, ``mode``, ``config`` or ``turn``; ``session`` is
    all of it as it is now (:meth:`Timeline.session_json`)."""

    kind: str
    session: dict[str, Any]


Change = TypeVar("Change", ItemChange, "ItemChange | SessionChange")


@dataclass
class Turn:
    """One prompt and what came of it: its stop reason and the items of its turn."""

    index: int
    stop_reason: str | None
    items: list[TimelineItem] = field(default_factory=list)


class TurnStream(Generic[Change]):
    """The changes of one turn as they come (:meth:`Session.stream_prompt`): ``async for``.

    Each is an :class:`ItemChange`; with ``session_events``, also a :class:`SessionChange`.
    """

    def __init__(self) -> None:
        self._changes: deque[Any] = deque()
        self._more = anyio.Event()
        self._ended = False
        self._failure: Exception | None = None
        self._listening = True
        #: Called when the reader stops the stream (:meth:`aclose`).
        self.on_close: Callable[[], None] | None = None

    # --- what feeds it (the session that runs the turn) ------------------------------------

    def put_item(self, item: TimelineItem) -> None:
        """An item of the turn appeared or changed."""
        if self._listening:
            self._changes.append(ItemChange(item))
            self._more.set()

    def put_session(self, kind: str, session: dict[str, Any]) -> None:
        """Something of the session changed (``kind``), as it is now (``session``)."""
        if self._listening:
            self._changes.append(SessionChange(kind, session))
            self._more.set()

    def end(self, failure: Exception | None) -> None:
        """The turn ended; ``failure``, raised to the reader once it has read the rest."""
        self._ended, self._failure = True, failure
        self._more.set()

    def __aiter__(self) -> TurnStream[Change]:
        return self

    async def __anext__(self) -> Change:
        while not self._changes:
            if self._ended:
                if self._failure is not None:
                    raise self._failure
                raise StopAsyncIteration
            await self._more.wait()
            self._more = anyio.Event()
        change: Change = self._changes.popleft()
        return change

    async def aclose(self) -> None:
        """Stop the updates (the turn goes on)."""
        self._listening = False
        self._changes.clear()
        if self.on_close is not None:
            self.on_close()


__all__ = ["ItemChange", "SessionChange", "Turn", "TurnStream", "prompt_blocks"]
