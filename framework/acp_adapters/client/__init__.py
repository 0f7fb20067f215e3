"""The live client: the session API, and the answers to an agent's requests."""

from .agent import Agent, SessionPage
from .auth import AuthMethod, LoginCommand, run_login_here
from .mcp import McpServer, mcp_servers_from_config
from .session import (
    AgentNotFoundError,
    AuthenticationRequiredError,
    ItemChange,
    ProtocolVersionError,
    Session,
    SessionChange,
    StartTimeoutError,
    Turn,
    TurnStream,
    connect,
)
from .workspace import Workspace

__all__ = [
    "Agent",
    "AgentNotFoundError",
    "AuthMethod",
    "AuthenticationRequiredError",
    "ItemChange",
    "LoginCommand",
    "McpServer",
    "ProtocolVersionError",
    "Session",
    "SessionChange",
    "SessionPage",
    "StartTimeoutError",
    "Turn",
    "TurnStream",
    "Workspace",
    "connect",
    "mcp_servers_from_config",
    "run_login_here",
]
