"""MCP servers for the agent: what the application gives, as each protocol version sends it.

An application names its MCP servers once (:class:`McpServer`, or the ``mcpServers``
JSON format most agents and editors read, :func:`mcp_servers_from_config`); the session
sends them with ``session/new``, ``session/load`` and ``session/resume`` in the shape of
the negotiated version, and only those the agent said it takes: every agent takes stdio
servers in v1 (v2: when it offers ``session.mcp.stdio``), HTTP and SSE servers only when
its capabilities say so (v2 has no SSE). A server the agent cannot take is a
:class:`~acp_adapters.errors.McpServerError` naming it, before anything is sent: never
dropped without a word.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from ..errors import McpServerError
from ..protocol import v1, v2

Transport = Literal["stdio", "http", "sse"]

_WIRE: dict[int, TypeAdapter[Any]] = {1: TypeAdapter(v1.McpServer), 2: TypeAdapter(v2.McpServer)}


@dataclass(frozen=True)
class McpServer:
    """One MCP server the agent may connect to.

    ``stdio``: the agent starts ``command`` with ``args`` and ``env`` (a command that is
    not an absolute path is looked up on the agent's ``PATH`` when the session sends
    it: ACP wants an absolute path). ``http`` and ``sse``: the agent connects to ``url``
    with ``headers``.
    """

    name: str
    transport: Transport = "stdio"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.name:
            raise McpServerError("an MCP server needs a name")
        if self.transport not in ("stdio", "http", "sse"):
            raise McpServerError(f"MCP server {self.name!r}: no transport {self.transport!r}")
        if self.transport == "stdio" and not self.command:
            raise McpServerError(f"MCP server {self.name!r}: a stdio server needs a command")
        if self.transport != "stdio" and not self.url:
            raise McpServerError(
                f"MCP server {self.name!r}: an {self.transport} server needs a url"
            )

    def to_wire(self, version: int, *, path: str | None = None) -> dict[str, Any]:
        """The server as ``session/new`` of protocol ``version`` carries it (``path``: the
        agent's ``PATH``, to find a command given by name)."""
        if self.transport == "stdio":
            assert self.command is not None
            command = self.command
            if not os.path.isabs(command):
                found = shutil.which(command, path=path)
                if found is None:
                    raise McpServerError(
                        f"MCP server {self.name!r}: {command!r} is not on the agent's PATH"
                    )
                command = os.path.abspath(found)
            wire: dict[str, Any] = {
                "name": self.name,
                "command": command,
                "args": list(self.args),
                "env": [{"name": k, "value": v} for k, v in self.env.items()],
            }
            if version == 2:
                wire = {"type": "stdio", **wire}
        else:
            wire = {
                "type": self.transport,
                "name": self.name,
                "url": self.url,
                "headers": [{"name": k, "value": v} for k, v in self.headers.items()],
            }
        try:
            _WIRE[2 if version == 2 else 1].validate_python(wire)
        except ValidationError as error:
            raise McpServerError(f"MCP server {self.name!r}: {error.errors()[0]['msg']}") from None
        return wire


def mcp_servers_from_config(config: Mapping[str, Any]) -> list[McpServer]:
    """The servers of an ``mcpServers`` JSON object, the format Claude Desktop, Claude Code,
    Cursor and Zed read: ``{"mcpServers": {NAME: {"command", "args", "env"} | {"type":
    "http" | "sse", "url", "headers"}}}`` (the object under ``mcpServers`` is also taken
    alone).

    :raises McpServerError: the object is not of that shape, naming what is wrong.
    """
    servers = config.get("mcpServers", config) if isinstance(config, Mapping) else None
    if not isinstance(servers, Mapping):
        raise McpServerError("an MCP configuration is an object of servers by name")
    found: list[McpServer] = []
    for name, entry in servers.items():
        if not isinstance(entry, Mapping):
            raise McpServerError(f"MCP server {name!r}: not an object")
        kind = entry.get("type", entry.get("transport"))
        if kind is None:
            kind = "stdio" if "command" in entry else "http" if "url" in entry else None
        if kind in ("streamable-http", "streamableHttp"):
            kind = "http"
        if kind not in ("stdio", "http", "sse"):
            raise McpServerError(f"MCP server {name!r}: no transport {kind!r}")
        found.append(
            McpServer(
                name=str(name),
                transport=kind,
                command=_text(name, entry, "command"),
                args=tuple(_texts(name, entry.get("args", ()), "args")),
                env=_mapping(name, entry.get("env", {}), "env"),
                url=_text(name, entry, "url"),
                headers=_mapping(name, entry.get("headers", {}), "headers"),
            )
        )
    return found


def _text(name: Any, entry: Mapping[str, Any], key: str) -> str | None:
    value = entry.get(key)
    if value is not None and not isinstance(value, str):
        raise McpServerError(f"MCP server {name!r}: {key} is not a string")
    return value


def _texts(name: Any, values: Any, key: str) -> list[str]:
    if not isinstance(values, list | tuple) or not all(isinstance(v, str) for v in values):
        raise McpServerError(f"MCP server {name!r}: {key} is not a list of strings")
    return list(values)


def _mapping(name: Any, values: Any, key: str) -> dict[str, str]:
    if not isinstance(values, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in values.items()
    ):
        raise McpServerError(f"MCP server {name!r}: {key} is not an object of strings")
    return dict(values)


def accepted_transports(version: int, agent_capabilities: Mapping[str, Any]) -> set[Transport]:
    """The MCP transports the agent said it takes, in its ``initialize`` answer."""
    if version == 2:
        caps = v2.AgentCapabilities.model_validate(agent_capabilities)
        mcp = caps.session.mcp if caps.session is not None else None
        taken: set[Transport] = set()
        if mcp is not None and mcp.stdio is not None:
            taken.add("stdio")
        if mcp is not None and mcp.http is not None:
            taken.add("http")
        return taken
    caps1 = v1.AgentCapabilities.model_validate(agent_capabilities)
    taken = {"stdio"}  # every v1 agent must take stdio servers
    if caps1.mcp_capabilities.http:
        taken.add("http")
    if caps1.mcp_capabilities.sse:
        taken.add("sse")
    return taken


def wire_servers(
    servers: Iterable[McpServer],
    version: int,
    agent_capabilities: Mapping[str, Any],
    *,
    path: str | None = None,
) -> list[dict[str, Any]]:
    """The servers as the session sends them to this agent.

    :raises McpServerError: a server of a transport the agent does not take, or two
        servers of one name.
    """
    taken = accepted_transports(version, agent_capabilities)
    wire: list[dict[str, Any]] = []
    names: set[str] = set()
    for server in servers:
        if server.name in names:
            raise McpServerError(f"two MCP servers are named {server.name!r}")
        names.add(server.name)
        if server.transport not in taken:
            offered = ", ".join(sorted(taken)) or "none"
            raise McpServerError(
                f"MCP server {server.name!r}: the agent does not take {server.transport} "
                f"servers (it takes: {offered})"
            )
        wire.append(server.to_wire(version, path=path))
    return wire


def as_servers(servers: Sequence[McpServer | Mapping[str, Any]]) -> list[McpServer]:
    """Servers given as :class:`McpServer` or as one ``mcpServers`` entry each (with its
    ``name``)."""
    found: list[McpServer] = []
    for server in servers:
        if isinstance(server, McpServer):
            found.append(server)
        elif isinstance(server, Mapping) and isinstance(server.get("name"), str):
            entry = {k: v for k, v in server.items() if k != "name"}
            found.extend(mcp_servers_from_config({server["name"]: entry}))
        else:
            raise McpServerError(f"not an MCP server: {server!r}"[:200])
    return found
