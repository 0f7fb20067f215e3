"""What a session saw of files, and what it keeps of their contents, within a budget.

Each :class:`FileEvent` is one sight of a file: the client's answer to a read, the
agent's write, what the client found on the disk (before a write, around an edit, in a
checkpoint). The :class:`FileStore` holds them, indexed by path and by tool call, and
lets the oldest contents go past its budget (their digest kept), so that an agent that
reads a large file again and again does not grow the session without bound.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
from collections import deque
from typing import Literal

from .values import RuntimeModel


class FileEvent(RuntimeModel):
    """What the session showed of a file.

    ``read``: the client's answer to the agent's ``fs/read_text_file``; ``write``:
    the agent's ``fs/write_text_file``; ``found``: the file as the client found it
    on the disk just before it served that write; ``disk_before`` and
    ``disk_after``: what a live client read from the disk itself when an edit tool
    call started (or asked permission) and when it completed; ``checkpoint_before`` and
    ``checkpoint_after``: the texts of a checkpoint's change
    (:class:`~acp_adapters.runtime.values.PathChange`), its ``tool_call_id`` the tool
    call's, or ``change:N`` for one no tool call claimed. ``content`` None
    means the file did not exist (unless ``kept`` is False). ``path`` is the file's
    one spelling (:func:`~acp_adapters.runtime.folders.resolved_path`).
    ``tool_call_id`` is the tool call the event belongs to, where there is one.
    """

    op: Literal[
        "read",
        "write",
        "found",
        "disk_before",
        "disk_after",
        "checkpoint_before",
        "checkpoint_after",
    ]
    path: str
    content: str | None
    seq: int
    tool_call_id: str | None = None
    #: False when the session does not know the content: its budget of file contents
    #: (:data:`CONTENT_BUDGET`) was spent (``digest`` then says what it was, so two reads
    #: can still be told apart), or the file could not be read as text (no digest).
    kept: bool = True
    digest: str | None = None


#: How much file content (characters) a session keeps, in all, for true patches: the
#: contents of reads and writes through the client and of the disk reads around edits.
#: Past it the oldest contents no later patch needs are let go (only their digest is kept);
#: the same content read again costs nothing.
CONTENT_BUDGET = 64 * 1024 * 1024


#: The events that say what a file held at their point, looked up by path.
_KNOWN_BY_PATH = ("read", "write", "found")


def content_digest(text: str) -> str:
    """The SHA-256 of a text's UTF-8 bytes (lone surrogates escaped), as hex."""
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


class FileStore:
    """The file events of a session and what it keeps of their contents, within a budget.

    Indexed by path (reads and writes: what a file held before a position) and by
    tool call (its writes and disk reads), so no question looks at every event.
    A content equal to the last one kept for its path is that same string, charged
    once: reading an unchanged 30 MiB file twenty times keeps it once. Past the
    budget, the oldest contents are let go, from every event that holds them, except
    a path's latest read or write (what its next write is judged against).
    """

    def __init__(self, budget: int = CONTENT_BUDGET) -> None:
        self.budget = budget
        self.events: list[FileEvent] = []
        #: The characters of content kept now.
        self.kept_size = 0
        self._by_path: dict[str, list[int]] = {}
        self._by_call: dict[str, list[int]] = {}
        #: The last content kept for each path, and its number.
        self._last: dict[str, tuple[str, int]] = {}
        # Each content kept (by its number), oldest first, and the positions of the events
        # that hold it.
        self._kept: deque[int] = deque()
        self._holders: dict[int, list[int]] = {}
        self._numbers = itertools.count()

    def add(self, event: FileEvent) -> FileEvent:
        """Store ``event``, its content kept if the budget allows; the event as stored."""
        position = len(self.events)
        text = event.content
        if text is not None:
            same = self._last.get(event.path)
            if same is not None and same[0] == text:
                event = event.model_copy(update={"content": same[0]})
                self._holders[same[1]].append(position)
            elif len(text) > self.budget:
                event = event.model_copy(
                    update={"content": None, "kept": False, "digest": content_digest(text)}
                )
            else:
                number = next(self._numbers)
                self._last[event.path] = (text, number)
                self.kept_size += len(text)
                self._kept.append(number)
                self._holders[number] = [position]
        self.events.append(event)
        if event.op in _KNOWN_BY_PATH:
            self._by_path.setdefault(event.path, []).append(position)
        if event.tool_call_id is not None:
            self._by_call.setdefault(event.tool_call_id, []).append(position)
        self._within_budget()
        return self.events[position]

    def _within_budget(self) -> None:
        """Let go of the oldest contents until the rest fit the budget: first those no path's
        next write is judged against, then, if that is not enough, any."""
        for spare_latest in (True, False):
            protected: list[int] = []
            while self.kept_size > self.budget and self._kept:
                key = self._kept.popleft()
                if spare_latest and any(self._is_latest(p) for p in self._holders[key]):
                    protected.append(key)
                else:
                    self._let_go(key)
            self._kept.extendleft(reversed(protected))
            if self.kept_size <= self.budget:
                return

    def _let_go(self, key: int) -> None:
        """Keep only the digest of one content, in every event that holds it."""
        holders = self._holders.pop(key)
        first = self.events[holders[0]]
        text = first.content
        assert text is not None
        digest = content_digest(text)
        for position in holders:
            self.events[position] = self.events[position].model_copy(
                update={"content": None, "kept": False, "digest": digest}
            )
        if self._last.get(first.path, ("", -1))[1] == key:
            del self._last[first.path]
        self.kept_size -= len(text)

    def _is_latest(self, position: int) -> bool:
        """Whether the event at ``position`` is the latest read or write of its path."""
        event = self.events[position]
        positions = self._by_path.get(event.path) or [-1]
        return event.op in _KNOWN_BY_PATH and positions[-1] == position

    def before(self, path: str, seq: int) -> FileEvent | None:
        """The latest read, write or found content of ``path`` before position ``seq``."""
        positions = self._by_path.get(path, [])
        index = bisect.bisect_left(positions, seq, key=lambda p: self.events[p].seq)
        return self.events[positions[index - 1]] if index else None

    def claim(self, path: str, tool_call_id: str, since: int) -> bool:
        """Give the writes of ``path`` after position ``since`` that belong to no tool call
        (and what was found before each) to ``tool_call_id``; whether there was any.

        An agent may write through the client first and only then tell which tool
        call did it."""
        claimed = False
        for position in reversed(self._by_path.get(path, ())):
            event = self.events[position]
            if event.seq <= since:
                break
            if event.tool_call_id is None and event.op in ("write", "found"):
                self.events[position] = event.model_copy(update={"tool_call_id": tool_call_id})
                self._by_call.setdefault(tool_call_id, []).append(position)
                claimed = True
        if claimed:
            self._by_call[tool_call_id].sort()
        return claimed

    def unowned_writes(self, since: int) -> list[int]:
        """The positions (in :attr:`events`) of the writes after position ``since`` that
        belong to no tool call, in order."""
        found: list[int] = []
        for position in range(len(self.events) - 1, -1, -1):
            event = self.events[position]
            if event.seq <= since:
                break
            if event.op == "write" and event.tool_call_id is None:
                found.append(position)
        return found[::-1]

    def of_call(self, tool_call_id: str, *ops: str) -> tuple[FileEvent, ...]:
        """The events of a tool call, in order, of the kinds ``ops``."""
        return tuple(
            e for e in (self.events[p] for p in self._by_call.get(tool_call_id, ())) if e.op in ops
        )
