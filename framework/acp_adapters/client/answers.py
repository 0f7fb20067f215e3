"""Moved: the answers to an agent's requests are :mod:`acp_adapters.client.agent_requests`;
its names are found here for one release, each with a :class:`DeprecationWarning`."""

from __future__ import annotations

from .._moved import homes, moved_names

#: The names of the module, as it was.
_NAMES = (
    "AgentRequests",
    "AskCallback",
    "DISK_PATHS",
    "DISK_READ_LIMIT",
    "LARGE_READ_CHARS",
    "DiskPhase",
    "DiskReader",
    "ElicitCallback",
    "TerminalBackend",
    "TerminalFactory",
)

__getattr__ = moved_names(__name__, homes("acp_adapters.client.agent_requests", _NAMES))
