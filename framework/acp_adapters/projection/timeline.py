"""A session's timeline: its items in order, and what it was projected with."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, overload

from ..timeline.items import TimelineItem
from ..timeline.schema import timeline_json_schema

if TYPE_CHECKING:
    from ..plugin.providers import Provider
    from ..runtime import SessionState


class Timeline:
    """Items ordered by ordinal, with the provider and protocol version they came through.

    ``problems`` lists what the traffic reader skipped (lines that were not
    JSON, messages that were not JSON-RPC), one line each.
    """

    def __init__(
        self,
        items: list[TimelineItem],
        *,
        provider: Provider,
        version: int,
        session_id: str | None,
        state: SessionState,
        problems: list[str] | None = None,
    ) -> None:
        self.items = items
        self.provider = provider
        self.version = version
        self.session_id = session_id
        self.state = state
        self.problems = problems or []

    def to_json(self) -> list[dict[str, Any]]:
        """The items as JSON-ready dicts, each with its ``kind``, ``status``, ``paths``, ...

        :func:`timeline_json_schema` is the JSON Schema they follow.
        """
        return [item.model_dump(mode="json") for item in self.items]

    @staticmethod
    def json_schema() -> dict[str, Any]:
        """The JSON Schema of :meth:`to_json` (see :func:`timeline_json_schema`)."""
        return timeline_json_schema()

    def dumps(self, *, indent: int | None = 2) -> str:
        """:meth:`to_json` as a JSON string."""
        return json.dumps(self.to_json(), indent=indent, ensure_ascii=False)

    def of_kind(self, kind: str) -> list[TimelineItem]:
        """The items of one kind, in order."""
        return [item for item in self.items if item.kind == kind]

    def __iter__(self) -> Iterator[TimelineItem]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    @overload
    def __getitem__(self, index: int) -> TimelineItem: ...
    @overload
    def __getitem__(self, index: slice) -> list[TimelineItem]: ...
    def __getitem__(self, index: int | slice) -> TimelineItem | list[TimelineItem]:
        return self.items[index]
