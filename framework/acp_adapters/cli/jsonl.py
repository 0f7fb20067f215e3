"""``run --format jsonl``: one JSON object a line, as the session goes, then a summary.

Each line is one of::

    {"type": "item", ...the item's row, as in --format json}
    {"type": "session", "kind": "opened" | "usage" | "info" | ..., "session": {...}}
    {"type": "summary", "provider": ..., "protocol": ..., "stop_reason": ..., ...}

An item's line is written each time the item appears or changes (a message
grows, a tool call completes): its last line is the item as it ended. A message
or a thought is ``running`` on the lines written while it streams, and gets a
last line of its own, ``completed``, once its turn has ended. The lines are what
this run adds: a named session's earlier turns (``-s NAME``, read back from the
store) are not written again (``sessions show NAME --format json`` has them); a
session loaded with ``--resume`` writes the history the agent replayed, each item
``"replayed": true``. A
session line is written once the session is open and set up (``opened``), then
each time the agent reports something of it (``usage``, ``info``, ``commands``,
``mode``, ``config``, ``turn``); ``session`` is all of it as it is then
(:meth:`Timeline.session_json`). The summary is the last line, whether the run succeeded
or not, whatever ended it (a failure, a timeout, a signal): its ``exit_code`` and ``error``
say; a run that failed before a session was open has a summary too, with no session in it
(``provider`` the one asked for, or null; ``protocol`` null).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from ..client import ItemChange, SessionChange
from ..timeline.items import TimelineItem
from .render import STREAMED_KINDS
from .rows import dumps_line, item_row


class JsonlWriter:
    """Writes the lines of ``--format jsonl`` to stdout, each as it comes."""

    def __init__(self) -> None:
        # The streamed items whose last line said ``running``: they get a last one at the
        # turn's end.
        self._streaming: set[str] = set()

    def change(self, change: ItemChange | SessionChange) -> None:
        """A change of a running turn."""
        if isinstance(change, ItemChange):
            row = item_row(change.item)
            if row["kind"] in STREAMED_KINDS and row["status"] == "completed":
                # A message is done when its turn is: until then more text may come.
                row["status"] = "running"
                self._streaming.add(row["id"])
            self.line({"type": "item", **row})
        else:
            self.session(change.kind, change.session)

    def turn_ended(self, items: Sequence[TimelineItem]) -> None:
        """The turn ended: the last line of each message and thought written ``running``."""
        for item in items:
            row = item_row(item)
            if row["id"] in self._streaming:
                self._streaming.discard(row["id"])
                self.line({"type": "item", **row})

    def item(self, item: TimelineItem) -> None:
        self.line({"type": "item", **item_row(item)})

    def session(self, kind: str, session: dict[str, Any]) -> None:
        self.line({"type": "session", "kind": kind, "session": session})

    def line(self, value: dict[str, Any]) -> None:
        click.echo(dumps_line(value))


def summary_object(
    rows: list[dict[str, Any]],
    *,
    provider: str | None,
    version: int | None,
    stop_reason: str | None,
    session: dict[str, Any] | None,
    exit_code: int = 0,
    error: str | None = None,
) -> dict[str, Any]:
    """The last line: who and what (provider, protocol, session id, title, mode), how it
    went (stop reason, turns, items, usage), and how the command ends (exit code, error)."""
    session = session or {}
    return {
        "type": "summary",
        "provider": provider,
        "protocol": version,
        "session_id": session.get("session_id"),
        "title": session.get("title"),
        "mode": session.get("current_mode"),
        "stop_reason": stop_reason,
        "turns": len({row["turn"] for row in rows if row["turn"]}),
        "items": len(rows),
        "usage": session.get("usage"),
        "exit_code": exit_code,
        "error": error,
    }
