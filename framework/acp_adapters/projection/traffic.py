"""Captures: recorded ACP traffic, one JSON-RPC message a line, turned into a timeline.

A capture line is ``{"dir": "client->agent" | "agent->client", "t": seconds,
"msg": {...}}``; ``{"dir": "agent->client(raw)", "t": seconds, "raw": text}``
is a line the agent printed that was not JSON, ``{"dir": "exit", "code": 3,
"stderr": text}`` the agent exiting on its own, ``{"dir": "disk", ...}`` a file
the recording client read around an edit (the format's words are in
:mod:`acp_adapters.capture_format`). :func:`project_capture` reads one,
follows the requests of both sides to their answers, and feeds a
:class:`~.projector.Projector`:

* the ``initialize`` answer gives the protocol version, judged by the body's
  shape (an agent that answers 2 with a v1 body speaks v1), and the agent's
  name, which picks the provider (unless one is given);
* prompts start turns; their answers end them (v1) or acknowledge them (v2);
* ``session/update`` notifications go through the reducer and the plugins;
* permission requests and answers, the client's ``fs/read_text_file`` answers
  and the agent's ``fs/write_text_file`` requests are recorded, so file edits
  can show their true patch.

Every line is untrusted: one that is not JSON, or not a message, is skipped
and listed in the timeline's ``problems``; nothing in a capture raises.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import pluggy

from ..capture.format import (
    AGENT_EXIT,
    AGENT_TO_CLIENT,
    CLIENT_TO_AGENT,
    DISK_READ,
    Unreadable,
    capture_values,
    disk_read,
    request_key,
)
from ..plugin.hooks import Hooks
from ..plugin.manager import get_plugin_manager
from ..plugin.providers import ProviderRegistry
from ..runtime.commands import command_line
from .negotiation import negotiated_version, provider_of
from .projector import Projector
from .timeline import Timeline

CaptureSource = str | os.PathLike[str] | Iterable[str] | Iterable[dict[str, Any]]


def _entries(source: CaptureSource, problems: list[str]) -> Iterable[dict[str, Any]]:
    """The projectable entries of a capture, as its one line reader reads them (a file as it
    goes, cut at ``\\n`` only, with the live connection's limits); what is left out goes to
    ``problems``."""
    for number, entry in capture_values(source):
        if isinstance(entry, Unreadable):
            problems.append(f"line {number}: {entry.why}")
            continue
        if isinstance(entry, dict) and isinstance(entry.get("raw"), str):
            continue  # a line the agent printed that was not JSON: nothing to project
        if isinstance(entry, dict) and entry.get("dir") == AGENT_EXIT:
            yield entry
            continue
        if isinstance(entry, dict) and entry.get("dir") == DISK_READ:
            if disk_read(entry) is None:
                problems.append(f"line {number}: not a disk entry")
            else:
                yield entry
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("msg"), dict | list):
            problems.append(f"line {number}: not a capture entry")
            continue
        yield entry


class CaptureReader:
    """Follows a capture's messages and reports them to a projector."""

    def __init__(self, projector: Projector, registry: ProviderRegistry) -> None:
        self.projector = projector
        self.registry = registry
        # Requests waiting for an answer, per side: id -> (method, params).
        self.client_requests: dict[Any, tuple[str, Any]] = {}
        self.agent_requests: dict[Any, tuple[str, Any]] = {}

    def feed_entry(self, entry: dict[str, Any]) -> None:
        """One line of a capture: a message either way, or the agent's exit."""
        direction, at = entry.get("dir"), entry.get("t")
        seconds = float(at) if isinstance(at, int | float) and not isinstance(at, bool) else 0.0
        if direction == AGENT_EXIT:
            code, stderr = entry.get("code"), entry.get("stderr")
            self.projector.agent_exited(
                code if isinstance(code, int) and not isinstance(code, bool) else None,
                stderr if isinstance(stderr, str) else "",
                seconds,
            )
        elif direction == DISK_READ:
            read = disk_read(entry)
            if read is not None:
                call, path, phase, content = read
                self.projector.disk_observed(
                    call, path, content, after=phase == "after", at=seconds
                )
        elif "msg" in entry:
            self.feed(direction if isinstance(direction, str) else "", entry["msg"], seconds)

    def feed(self, direction: str, message: Any, at: float) -> None:
        if isinstance(message, list):  # a batch
            for part in message:
                self.feed(direction, part, at)
            return
        if not isinstance(message, dict):
            return
        method = message.get("method")
        has_id = "id" in message
        if direction == CLIENT_TO_AGENT:
            if isinstance(method, str):
                if has_id:
                    self.client_requests[request_key(message["id"])] = (
                        method,
                        message.get("params"),
                    )
                self._client_sent(method, message.get("params"), at)
            elif has_id:
                self._client_answered(message, at)
        elif direction == AGENT_TO_CLIENT:
            if isinstance(method, str):
                if has_id:
                    self.agent_requests[request_key(message["id"])] = (
                        method,
                        message.get("params"),
                    )
                self._agent_sent(message, method, at)
            elif has_id:
                self._agent_answered(message, at)

    def _client_sent(self, method: str, params: Any, at: float) -> None:
        if method == "session/prompt" and isinstance(params, dict):
            self.projector.prompt_sent(params.get("prompt"), at)

    def _agent_answered(self, message: dict[str, Any], at: float) -> None:
        request = self.client_requests.pop(request_key(message["id"]), None)
        if request is None:
            return
        method, _ = request
        result, error = message.get("result"), message.get("error")
        if method == "initialize" and error is None:
            provider = provider_of(result, self.registry, self.projector.hooks)
            self.projector.initialized(negotiated_version(result), provider)
        elif method in ("session/new", "session/load") and isinstance(result, dict):
            self.projector.session_created(result)
        elif method == "session/prompt":
            self.projector.prompt_answered(result, error, at)

    def _agent_sent(self, message: dict[str, Any], method: str, at: float) -> None:
        params = message.get("params")
        if method == "session/update":
            self.projector.notification(params, at)
        elif method == "session/request_permission" and "id" in message:
            self.projector.permission_requested(str(message["id"]), params, at)

    def _client_answered(self, message: dict[str, Any], at: float) -> None:
        request = self.agent_requests.pop(request_key(message["id"]), None)
        if request is None:
            return
        method, params = request
        result, error = message.get("result"), message.get("error")
        if method == "session/request_permission":
            self.projector.permission_answered(str(message["id"]), result, at)
        elif method == "fs/write_text_file" and isinstance(params, dict):
            # Written when the client said it wrote it: a refused write changed nothing.
            path, content = params.get("path"), params.get("content")
            if error is None and isinstance(path, str) and isinstance(content, str):
                self.projector.file_written(path, content, at)
        elif method == "terminal/create":
            self._terminal_created(params, result, error, at)
        elif method in ("terminal/output", "terminal/wait_for_exit") and isinstance(params, dict):
            terminal_id = params.get("terminalId")
            if isinstance(terminal_id, str) and error is None:
                self.projector.command_answered(terminal_id, result, at)
        elif method == "fs/read_text_file" and isinstance(params, dict):
            path = params.get("path")
            if not isinstance(path, str):
                return
            if isinstance(result, dict) and isinstance(result.get("content"), str):
                self.projector.file_read(path, result["content"], at)
            elif isinstance(error, dict) and error.get("code") == -32002:
                self.projector.file_read(path, None, at)  # "resource not found": no such file

    def _terminal_created(self, params: Any, result: Any, error: Any, at: float) -> None:
        """The client ran a command for the agent, or refused to (the live session's
        command items, read back)."""
        line = command_line(params)
        cwd = params.get("cwd") if isinstance(params, dict) else None
        cwd = cwd if isinstance(cwd, str) else None
        terminal_id = result.get("terminalId") if isinstance(result, dict) else None
        if isinstance(terminal_id, str):
            self.projector.command_started(terminal_id, line, cwd, at)
        elif isinstance(error, dict):
            self.projector.command_refused(line, cwd, str(error.get("message"))[:500], at)


def project_capture(
    source: CaptureSource,
    *,
    provider: str | None = None,
    pm: pluggy.PluginManager | None = None,
) -> Timeline:
    """The timeline of a capture.

    :param source: a path to a capture file, or its lines (strings or parsed dicts).
    :param provider: a provider id to use whatever the agent says it is; by default the
        provider is the one that claims the agent's name in the ``initialize`` answer,
        else the generic one.
    :param pm: the plugin manager to use; by default a new one with the installed plugins.
    :raises CaptureError: when a capture file cannot be read.
    :raises UnknownProviderError: when ``provider`` names no loaded provider.
    """
    pm = pm or get_plugin_manager()
    registry = ProviderRegistry.collect(pm)
    fixed = registry.get(provider) if provider is not None else None
    projector = Projector(
        Hooks(pm), fixed or registry.for_agent(None), fixed_provider=fixed is not None
    )
    reader = CaptureReader(projector, registry)
    problems: list[str] = []
    for entry in _entries(source, problems):
        reader.feed_entry(entry)
    timeline = projector.timeline()
    timeline.problems = problems
    return timeline
