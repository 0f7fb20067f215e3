"""The live client: the session API, and the answers to an agent's requests."""

from .mcp import McpServer, mcp_servers_from_config
from .session import (
    AgentNotFoundError,
    AuthenticationRequiredError,
    ItemChange,
    ProtocolVersionError,
    Session,
    SessionChange,
    Turn,
    TurnStream,
    connect,
)
from .workspace import Workspace

__all__ = [
    "AgentNotFoundError",
    "AuthenticationRequiredError",
    "ItemChange",
    "McpServer",
    "ProtocolVersionError",
    "Session",
    "SessionChange",
    "Turn",
    "TurnStream",
    "Workspace",
    "connect",
    "mcp_servers_from_config",
]
