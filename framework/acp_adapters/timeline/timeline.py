"""The ``Timeline``: a session's items in order, with what they were projected with.

This folder imports no other of the package, and a timeline is handed the provider and
the session's state it came through: :class:`TimelineProvider` and :class:`TimelineState`
say what it reads of them (a :class:`~acp_adapters.plugin.providers.Provider` and a
:class:`~acp_adapters.runtime.state.SessionState` are those).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any, Protocol, overload

from .items import TimelineItem
from .schema import timeline_json_schema


class TimelineProvider(Protocol):
    """The provider a timeline came through, as it is read from the timeline."""

    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str: ...


class _Dumped(Protocol):
    """A value of the session's state, JSON-ready through pydantic."""

    def model_dump(self, *, mode: str) -> dict[str, Any]: ...


class _Info(Protocol):
    @property
    def title(self) -> str | None: ...

    @property
    def updated_at(self) -> str | None: ...


class _TurnState(_Dumped, Protocol):
    @property
    def state(self) -> str: ...

    @property
    def stop_reason(self) -> str | None: ...


class TimelineState(Protocol):
    """The session's state a timeline holds, as far as the timeline reads it: what the agent
    reported of the session (:meth:`Timeline.session_json`) and how its turn stands."""

    @property
    def session_id(self) -> str | None: ...

    @property
    def turn(self) -> int: ...

    @property
    def info(self) -> _Info: ...

    @property
    def current_mode(self) -> str | None: ...

    @property
    def modes(self) -> Sequence[_Dumped]: ...

    @property
    def config_options(self) -> Sequence[_Dumped]: ...

    @property
    def commands(self) -> Sequence[_Dumped]: ...

    @property
    def usage(self) -> _Dumped | None: ...

    @property
    def turn_state(self) -> _TurnState: ...


class Timeline:
    """Items ordered by ordinal, with the provider and protocol version they came through.

    ``problems`` lists what the traffic reader skipped (lines that were not
    JSON, messages that were not JSON-RPC), one line each.
    """

    def __init__(
        self,
        items: list[TimelineItem],
        *,
        provider: TimelineProvider,
        version: int,
        session_id: str | None,
        state: TimelineState,
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

    def session_json(self) -> dict[str, Any]:
        """What the agent reported of the session, JSON-ready: its ``title`` and when it was
        ``updated_at`` (session info), the ``current_mode`` and the ``modes``, the
        ``config_options`` (each with its ``current_value``), the ``commands`` it offers, its
        last ``usage`` (tokens ``used`` of the context ``size``, and the cost), and the
        ``turn_state`` (``idle`` or ``running``, and the last stop reason)."""
        return session_json(self.state)

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


def session_json(state: TimelineState) -> dict[str, Any]:
    """What the agent reported of a session (see :meth:`Timeline.session_json`)."""
    usage = state.usage
    return {
        "session_id": state.session_id,
        "title": state.info.title,
        "updated_at": state.info.updated_at,
        "current_mode": state.current_mode,
        "modes": [mode.model_dump(mode="json") for mode in state.modes],
        "config_options": [option.model_dump(mode="json") for option in state.config_options],
        "commands": [command.model_dump(mode="json") for command in state.commands],
        "usage": usage.model_dump(mode="json") if usage is not None else None,
        "turn_state": state.turn_state.model_dump(mode="json"),
    }
