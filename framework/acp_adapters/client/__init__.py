"""The live client: the session API, and the answers to an agent's requests."""

from .agent import Agent, SessionPage
from .auth import AuthMethod, LoginCommand, run_login_here
from .connecting import Limits, Persistence, Timeouts, connect, enqueue
from .mcp import McpServer, mcp_servers_from_config
from .session import (
    AgentNotFoundError,
    AuthenticationRequiredError,
    ProtocolVersionError,
    Session,
    StartTimeoutError,
)
from .turns import ItemChange, SessionChange, Turn, TurnStream
from .workspace import Workspace

__all__ = [
    "Agent",
    "AgentNotFoundError",
    "AuthMethod",
    "AuthenticationRequiredError",
    "ItemChange",
    "Limits",
    "LoginCommand",
    "McpServer",
    "Persistence",
    "ProtocolVersionError",
    "Session",
    "SessionChange",
    "SessionPage",
    "StartTimeoutError",
    "Timeouts",
    "Turn",
    "TurnStream",
    "Workspace",
    "connect",
    "enqueue",
    "mcp_servers_from_config",
    "run_login_here",
]
