"""``run --mcp-config FILE`` and ``run --mcp-server NAME=VALUE``: the MCP servers for the agent.

A ``--mcp-config`` file is the ``mcpServers`` JSON object that Claude Code, Claude
Desktop, Cursor and Zed read (or the object of servers alone); a ``--mcp-server``
is one server: ``NAME=COMMAND ARGS`` (a stdio server, split as a shell would) or
``NAME=http://...`` / ``NAME=https://...`` (an HTTP server). What cannot be read,
or is not of that shape, is a usage error naming the file or the option; whether
the agent takes each server's transport is known only once it answered
``initialize`` (an :class:`~acp_adapters.errors.McpServerError` then).
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from ..client import McpServer, mcp_servers_from_config
from ..errors import McpServerError
from .errors import EXIT_USAGE, Failure

#: The largest --mcp-config file read (a configuration is a few kilobytes; ~/.claude.json,
#: which holds other things too, may be a few megabytes). Past it, the file is refused:
#: /dev/zero is not read forever.
MAX_CONFIG_BYTES = 16 * 1024 * 1024

_URL_SCHEMES = ("http://", "https://")


def servers_of_options(configs: Sequence[str], servers: Sequence[str]) -> list[McpServer]:
    """The servers of the ``--mcp-config`` files, in order, then of the ``--mcp-server`` options.

    :raises Failure: (exit 2) a file that cannot be read, is not JSON or not an
        ``mcpServers`` object; a ``--mcp-server`` that is not ``NAME=VALUE``; two
        servers of one name.
    """
    found: list[tuple[McpServer, str]] = []
    for path in configs:
        source = f"--mcp-config {shlex.quote(path)}"
        found.extend((server, source) for server in read_config(path))
    found.extend((parse_server(value), f"--mcp-server {shlex.quote(value)}") for value in servers)
    where: dict[str, str] = {}
    for server, source in found:
        if server.name in where:
            raise Failure(
                f"two MCP servers are named {server.name!r} ({where[server.name]}; {source}): "
                "give each a name of its own",
                EXIT_USAGE,
            )
        where[server.name] = source
    return [server for server, _ in found]


def read_config(path: str) -> list[McpServer]:
    """The servers of one ``--mcp-config`` file.

    :raises Failure: (exit 2) naming the file and what is wrong with it.
    """
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_CONFIG_BYTES + 1)
    except OSError as error:
        raise _config_error(path, f"cannot be read ({error.strerror or error})") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise _config_error(path, f"is larger than {MAX_CONFIG_BYTES // (1024 * 1024)} MiB")
    try:
        config = json.loads(data)
    except UnicodeDecodeError:
        raise _config_error(path, "is not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise _config_error(
            path, f"is not valid JSON ({error.msg}: line {error.lineno} column {error.colno})"
        ) from None
    except (ValueError, RecursionError):
        raise _config_error(path, "is not valid JSON") from None
    try:
        return mcp_servers_from_config(config)
    except McpServerError as error:
        raise _config_error(
            path,
            f"is not an mcpServers configuration: {error} (expected "
            '{"mcpServers": {NAME: {"command", "args", "env"} | {"type": "http", "url"}}})',
        ) from None


def _config_error(path: str, what: str) -> Failure:
    return Failure(f"--mcp-config {shlex.quote(path)} {what}", EXIT_USAGE)


def parse_server(value: str) -> McpServer:
    """One ``--mcp-server``: ``NAME=COMMAND ARGS`` or ``NAME=http(s)://...``.

    :raises Failure: (exit 2) it is not of that form.
    """
    name, equals, rest = value.partition("=")
    name, rest = name.strip(), rest.strip()
    if not equals or not name:
        raise _server_error(value, "is not NAME=COMMAND ARGS or NAME=URL")
    if rest.lower().startswith(_URL_SCHEMES):
        try:
            host = urlsplit(rest).netloc
        except ValueError:  # an IPv6 address without its closing bracket
            host = ""
        if not host or any(c.isspace() for c in rest):
            raise _server_error(value, "is not NAME=URL of a server (http://HOST/...)")
        return McpServer(name=name, transport="http", url=rest)
    try:
        words = shlex.split(rest)
    except ValueError as error:  # an unterminated quote, a trailing backslash
        raise _server_error(
            value, f"is not a command line ({error}); quote it as a shell would"
        ) from None
    if not words:
        raise _server_error(value, "has no command: give NAME=COMMAND ARGS or NAME=URL")
    return McpServer(name=name, command=words[0], args=tuple(words[1:]))


def _server_error(value: str, what: str) -> Failure:
    return Failure(f"--mcp-server {shlex.quote(value)} {what}", EXIT_USAGE)


def recorded_servers(servers: Any) -> list[McpServer]:
    """The MCP servers a capture's ``session/new`` (``load``, ``resume``) carried, as
    ``mcpServers`` on the wire, to send again in a replay.

    Only what this client would send the same way: servers of a known transport, a
    stdio server's command an absolute path (it is sent as it is, not looked up on
    the PATH). Anything else (a capture is untrusted) gives no servers at all: the
    replay agent then reports that this client went otherwise than the capture.
    """
    if not isinstance(servers, list):
        return []
    found: list[McpServer] = []
    try:
        for server in servers:
            if not isinstance(server, dict) or not isinstance(server.get("name"), str):
                return []
            kind = server.get("type", "stdio")
            if kind == "stdio":
                command = server.get("command")
                args = server.get("args", [])
                if not isinstance(command, str) or not os.path.isabs(command):
                    return []
                if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
                    return []
                found.append(
                    McpServer(
                        name=server["name"],
                        command=command,
                        args=tuple(args),
                        env=_pairs(server.get("env", [])),
                    )
                )
            elif kind in ("http", "sse") and isinstance(server.get("url"), str):
                found.append(
                    McpServer(
                        name=server["name"],
                        transport=kind,
                        url=server["url"],
                        headers=_pairs(server.get("headers", [])),
                    )
                )
            else:
                return []
    except (McpServerError, ValueError):
        return []
    return found


def _pairs(values: Any) -> dict[str, str]:
    """``[{"name", "value"}, ...]`` (an env or headers on the wire) as a mapping.

    :raises ValueError: not of that shape, or a name twice (it would not be sent again
        the same way).
    """
    if not isinstance(values, list):
        raise ValueError("not a list")
    found: dict[str, str] = {}
    for pair in values:
        name = pair.get("name") if isinstance(pair, dict) else None
        value = pair.get("value") if isinstance(pair, dict) else None
        if not isinstance(name, str) or not isinstance(value, str) or name in found:
            raise ValueError("not a name and a value")
        found[name] = value
    return found
