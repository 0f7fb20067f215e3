"""When a committed event arrived, if it is a ``session/update`` the agent sent: what the
benchmarks that time commits read, from an entry or its encoded text, cheaply."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

#: The time of an encoded event (``{"dir": ..., "t": at, ...}``, as capture entries are made).
_ARRIVAL: Final = re.compile(r'\{"dir": "agent->client", "t": ([0-9.eE+-]+),')


def update_arrival(entry: Mapping[str, Any] | str) -> float | None:
    """The ``t`` of a ``session/update`` from the agent; None for any other event."""
    if isinstance(entry, str):
        found = _ARRIVAL.match(entry)
        if found is None or '"method": "session/update"' not in entry:
            return None
        return float(found.group(1))
    message = entry.get("msg")
    if entry.get("dir") != "agent->client" or not isinstance(message, dict):
        return None
    if message.get("method") != "session/update":
        return None
    at = entry.get("t")
    return float(at) if isinstance(at, int | float) else None
