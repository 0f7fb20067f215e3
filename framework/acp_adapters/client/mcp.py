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


#: ``env`` and ``headers`` as the application may give them: a mapping of names to values,
#: or the ACP schema's own shape, a list of ``{"name": ..., "value": ...}`` objects.
NamedValues = Mapping[str, str] | Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class McpServer:
    """One MCP server the agent may connect to.

    ``stdio``: the agent starts ``command`` with ``args`` and ``env`` (a command that is
    not an absolute path is looked up on the agent's ``PATH`` when the session sends
    it: ACP wants an absolute path). ``http`` and ``sse``: the agent connects to ``url``
    with ``headers``. ``env`` and ``headers`` are a mapping of names to values, or a list
    of ``{"name", "value"}`` objects as the ACP schema writes them (an entry's ``_meta``
    is not kept); either way they are kept as a mapping, in their order.

    :raises McpServerError: a field of the wrong type, a name or value that is not a
        string (or that a process or an HTTP request cannot carry), a variable or header
        named twice: never an ``AttributeError`` or ``TypeError``.
    """

    name: str
    transport: Transport = "stdio"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: NamedValues = field(default_factory=dict)
    url: str | None = None
    headers: NamedValues = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise McpServerError(f"an MCP server needs a name (a string), not {self.name!r}"[:200])
        where = f"MCP server {self.name!r}"
        if self.transport not in ("stdio", "http", "sse"):
            raise McpServerError(f"{where}: no transport {self.transport!r}"[:300])
        for key in ("command", "url"):
            value = getattr(self, key)
            if value is not None and not isinstance(value, str):
                raise McpServerError(f"{where}: {key} is not a string")
        if self.transport == "stdio" and not self.command:
            raise McpServerError(f"{where}: a stdio server needs a command")
        if self.transport != "stdio" and not self.url:
            raise McpServerError(f"{where}: an {self.transport} server needs a url")
        if isinstance(self.args, str) or not (
            isinstance(self.args, Sequence) and all(isinstance(a, str) for a in self.args)
        ):
            raise McpServerError(f"{where}: args is not a list of strings")
        # Frozen: the fields are set once, here, to the one shape the rest reads.
        object.__setattr__(self, "args", tuple(self.args))
        object.__setattr__(self, "env", _named_values(where, "env", self.env))
        object.__setattr__(self, "headers", _named_values(where, "headers", self.headers))

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
                "env": [{"name": k, "value": v} for k, v in _pairs(self.env)],
            }
            if version == 2:
                wire = {"type": "stdio", **wire}
        else:
            wire = {
                "type": self.transport,
                "name": self.name,
                "url": self.url,
                "headers": [{"name": k, "value": v} for k, v in _pairs(self.headers)],
            }
        try:
            _WIRE[2 if version == 2 else 1].validate_python(wire)
        except ValidationError as error:
            raise McpServerError(f"MCP server {self.name!r}: {error.errors()[0]['msg']}") from None
        return wire


def _pairs(values: NamedValues) -> list[tuple[str, str]]:
    """The (name, value) pairs of a field :meth:`McpServer.__post_init__` made a mapping."""
    assert isinstance(values, Mapping)
    return list(values.items())


#: What a process's environment cannot carry in a variable's name (``=`` ends the name).
_BAD_ENV_NAME = frozenset("=\x00")
#: What an HTTP header's name is not made of: it is a token (RFC 9110), so no separators,
#: spaces or controls.
_HEADER_NAME = frozenset(
    "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)


def _named_values(where: str, key: str, values: Any) -> dict[str, str]:
    """``env`` or ``headers`` as a mapping of names to values, from a mapping or from the
    schema's list of ``{"name", "value"}`` objects; checked that the agent can use each.

    :raises McpServerError: naming the server, the field and what is wrong.
    """
    pairs: list[tuple[Any, Any]]
    if isinstance(values, Mapping):
        pairs = list(values.items())
    elif isinstance(values, Sequence) and not isinstance(values, str | bytes):
        pairs = []
        for number, entry in enumerate(values, 1):
            if not isinstance(entry, Mapping):
                raise McpServerError(
                    f'{where}: {key} entry {number} is not an object {{"name", "value"}}'
                )
            unknown = sorted(str(k) for k in entry if k not in ("name", "value", "_meta"))
            if unknown or "name" not in entry or "value" not in entry:
                raise McpServerError(
                    f'{where}: {key} entry {number} is not {{"name", "value"}}'
                    + (f" (unknown key {unknown[0]!r})" if unknown else "")
                )
            pairs.append((entry["name"], entry["value"]))
    else:
        raise McpServerError(
            f'{where}: {key} is an object of strings or a list of {{"name", "value"}}, '
            f"not {type(values).__name__}"
        )
    found: dict[str, str] = {}
    for name, value in pairs:
        if not isinstance(name, str):
            raise McpServerError(f"{where}: a name in {key} is not a string: {name!r}"[:300])
        if not isinstance(value, str):
            raise McpServerError(
                f"{where}: {key} {name!r}: its value is not a string ({type(value).__name__})"[:300]
            )
        if key == "env" and (not name or _BAD_ENV_NAME & set(name) or "\x00" in value):
            raise McpServerError(
                f"{where}: {name!r} cannot be an environment variable (empty, '=' or NUL)"[:300]
            )
        if key == "headers" and (
            not name or not set(name) <= _HEADER_NAME or set(value) & set("\r\n\x00")
        ):
            raise McpServerError(
                f"{where}: {name!r} cannot be an HTTP header (a name is a token; "
                "no line break or NUL in a value)"[:300]
            )
        if name in found:
            raise McpServerError(f"{where}: {key} names {name!r} twice"[:300])
        found[name] = value
    return found


def mcp_servers_from_config(config: Mapping[str, Any]) -> list[McpServer]:
    """The servers of an ``mcpServers`` JSON object, the format Claude Desktop, Claude Code,
    Cursor and Zed read: ``{"mcpServers": {NAME: {"command", "args", "env"} | {"type":
    "http" | "sse", "url", "headers"}}}`` (the object under ``mcpServers`` is also taken
    alone). ``env`` and ``headers`` are objects of strings, or lists of ``{"name",
    "value"}`` as the ACP schema writes them.

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
                # An object of strings, or the ACP schema's list of {"name", "value"}.
                env=entry.get("env", {}),
                url=_text(name, entry, "url"),
                headers=entry.get("headers", {}),
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
    ``name``): also a server as the ACP schema writes it (``{"name", "command", "args",
    "env": [{"name", "value"}]}``, ``{"type": "http", "name", "url", "headers": [...]}``)."""
    if isinstance(servers, str | bytes | Mapping) or not isinstance(servers, Iterable):
        raise McpServerError(f"MCP servers are a list of servers, not {type(servers).__name__}")
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
