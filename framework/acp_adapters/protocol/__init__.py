"""Wire models of the two pinned ACP schemas, and parsing of the messages the core reads.

``v1`` (schema 1.21.0) and ``v2`` (draft 2.0.0-alpha.3) are generated from
``spec/acp/*/schema.json`` by ``tools/generate_protocol.py``. Each honours its
schema's ``x-deserialize-*`` rules; v1's unions are closed, v2's enums and
tagged unions are open (unknown values are kept).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import TypeAdapter

from . import v1, v2

#: A protocol version this package speaks.
Version = Literal[1, 2]

#: Any session/update notification's params, of either version.
Notification = v1.SessionNotification | v2.UpdateSessionNotification

_NOTIFICATION: dict[int, TypeAdapter[Any]] = {
    1: TypeAdapter(v1.SessionNotification),
    2: TypeAdapter(v2.UpdateSessionNotification),
}


def parse_notification(params: Any, version: Version) -> Notification:
    """The params of a ``session/update`` notification as the wire model of ``version``.

    Raises :class:`pydantic.ValidationError` when they are invalid by that
    version's schema (after its rules dropped what they may drop).
    """
    result: Notification = _NOTIFICATION[version].validate_python(params)
    return result


__all__ = ["Notification", "Version", "parse_notification", "v1", "v2"]
