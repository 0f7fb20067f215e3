"""The live client: the session API, and the answers to an agent's requests."""

from .session import (
    AgentNotFoundError,
    AuthenticationRequiredError,
    ItemChange,
    ProtocolVersionError,
    Session,
    Turn,
    TurnStream,
    connect,
)
from .workspace import Workspace

__all__ = [
    "AgentNotFoundError",
    "AuthenticationRequiredError",
    "ItemChange",
    "ProtocolVersionError",
    "Session",
    "Turn",
    "TurnStream",
    "Workspace",
    "connect",
]
