"""Wire models of the two pinned ACP schemas, and parsing of the messages the core reads.

``v1`` (schema 1.21.0) and ``v2`` (draft 2.0.0-alpha.3) are generated from
``spec/acp/*/schema.json`` by ``tools/generate_protocol.py``. Each honours its
schema's ``x-deserialize-*`` rules; unions are open where the schema says so
(v2's enums and tagged unions, both versions' elicitation): unknown values are
kept.
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


#: The requests (and notifications) an agent sends the client, by method and version.
_AGENT_MESSAGES: dict[tuple[str, int], TypeAdapter[Any]] = {
    ("session/request_permission", 1): TypeAdapter(v1.RequestPermissionRequest),
    ("session/request_permission", 2): TypeAdapter(v2.RequestPermissionRequest),
    ("fs/read_text_file", 1): TypeAdapter(v1.ReadTextFileRequest),
    ("fs/write_text_file", 1): TypeAdapter(v1.WriteTextFileRequest),
    ("terminal/create", 1): TypeAdapter(v1.CreateTerminalRequest),
    ("terminal/output", 1): TypeAdapter(v1.TerminalOutputRequest),
    ("terminal/wait_for_exit", 1): TypeAdapter(v1.WaitForTerminalExitRequest),
    ("terminal/kill", 1): TypeAdapter(v1.KillTerminalRequest),
    ("terminal/release", 1): TypeAdapter(v1.ReleaseTerminalRequest),
    ("elicitation/create", 1): TypeAdapter(v1.CreateElicitationRequest),
    ("elicitation/create", 2): TypeAdapter(v2.CreateElicitationRequest),
    ("elicitation/complete", 1): TypeAdapter(v1.CompleteElicitationNotification),
    ("elicitation/complete", 2): TypeAdapter(v2.CompleteElicitationNotification),
}

#: The client's answer to an elicitation, by version.
_ELICITATION_ANSWER: dict[int, TypeAdapter[Any]] = {
    1: TypeAdapter(v1.CreateElicitationResponse),
    2: TypeAdapter(v2.CreateElicitationResponse),
}


def agent_methods(version: Version) -> frozenset[str]:
    """The methods an agent of ``version`` may call on the client."""
    return frozenset(method for method, v in _AGENT_MESSAGES if v == version)


def parse_agent_request(method: str, params: Any, version: Version) -> Any:
    """The params of a request (or notification) the agent sent, as a wire model.

    Raises :class:`KeyError` for a method the version does not have, and
    :class:`pydantic.ValidationError` for params its schema rejects.
    """
    return _AGENT_MESSAGES[(method, version)].validate_python(params)


def parse_elicitation_answer(answer: Any, version: Version) -> Any:
    """An answer to ``elicitation/create`` as the wire model (validated before it is sent)."""
    return _ELICITATION_ANSWER[version].validate_python(answer)


def parse_notification(params: Any, version: Version) -> Notification:
    """The params of a ``session/update`` notification as the wire model of ``version``.

    Raises :class:`pydantic.ValidationError` when they are invalid by that
    version's schema (after its rules dropped what they may drop).
    """
    result: Notification = _NOTIFICATION[version].validate_python(params)
    return result


__all__ = [
    "Notification",
    "Version",
    "agent_methods",
    "parse_agent_request",
    "parse_elicitation_answer",
    "parse_notification",
    "v1",
    "v2",
]
