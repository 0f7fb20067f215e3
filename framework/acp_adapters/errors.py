"""The errors acp-adapters raises. Each says who raises it and what the user sees.

Every public error of the package is importable from here: those defined with the layer
that raises them (the store's, the connection's, the registry's, ...) are found in their
modules when first asked for (:data:`_ELSEWHERE`), so that this module, which every layer
imports, imports none of them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .client.guest import QueuedTurnFailed
    from .client.ownership import LeaseLost
    from .history.turn_patches import MissingEvidence, RevertConflict
    from .plugin.rules import RulesError
    from .registry.download import DownloadError
    from .registry.errors import RegistryError
    from .registry.install import InstallError
    from .store.base import (
        InvalidThreadName,
        StoreError,
        StoreNotFound,
        ThreadBusy,
        ThreadMoved,
        ThreadNotFound,
    )
    from .transport.jsonrpc import ConnectionClosed, RpcError

#: The public errors defined in the modules of the layer that raises them.
_ELSEWHERE = {
    "ConnectionClosed": ".transport.jsonrpc",
    "DownloadError": ".registry.download",
    "InstallError": ".registry.install",
    "InvalidThreadName": ".store.base",
    "LeaseLost": ".client.ownership",
    "MissingEvidence": ".history.turn_patches",
    "QueuedTurnFailed": ".client.guest",
    "RegistryError": ".registry.errors",
    "RevertConflict": ".history.turn_patches",
    "RpcError": ".transport.jsonrpc",
    "RulesError": ".plugin.rules",
    "StoreError": ".store.base",
    "StoreNotFound": ".store.base",
    "ThreadBusy": ".store.base",
    "ThreadMoved": ".store.base",
    "ThreadNotFound": ".store.base",
}


def __getattr__(name: str) -> Any:
    module = _ELSEWHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __package__), name)
    globals()[name] = value
    return value


class AcpAdaptersError(Exception):
    """Base of every error of this package."""


class PluginLoadError(AcpAdaptersError):
    """Raised by the plugin manager when a plugin's entry point fails to import.

    The message names the entry point and the distribution that declares it.
    """


class PluginError(AcpAdaptersError):
    """Raised by a hook call when a plugin raised, or returned a value of the wrong type.

    ``plugin`` names the misbehaving plugin (as the plugin manager registered
    it), ``hook`` the hook, ``provider_id`` the provider it was called for.
    """

    def __init__(
        self, message: str, *, hook: str, plugin: str | None, provider_id: str | None = None
    ) -> None:
        super().__init__(message)
        self.hook = hook
        self.plugin = plugin
        self.provider_id = provider_id


class DuplicateProviderError(AcpAdaptersError):
    """Raised when two plugins register the same provider id; the message names both."""

    def __init__(self, provider_id: str, first: str, second: str) -> None:
        super().__init__(
            f"provider {provider_id!r} is registered by plugin {first!r} and by plugin {second!r}"
        )
        self.provider_id = provider_id
        self.plugins = (first, second)


class UnknownProviderError(AcpAdaptersError):
    """Raised when a provider id is asked for that no loaded plugin registered."""


class CaptureError(AcpAdaptersError):
    """Raised by ``project_capture`` when a capture cannot be read at all (not for a bad line)."""


class AgentNotFoundError(AcpAdaptersError):
    """Raised by ``connect`` when the agent's command does not exist (install it, or pass
    ``command=``), or cannot be executed (a folder, no execute permission): the message
    names the command, ``reason`` says which (``"not found"``, ``"not executable"``)."""

    def __init__(self, message: str, *, reason: str = "not found") -> None:
        super().__init__(message)
        self.reason = reason


class StartTimeoutError(AcpAdaptersError):
    """Raised by ``connect`` when the agent did not start, answer ``initialize`` and open
    the session within ``start_timeout`` seconds; the agent was stopped. ``phase`` names
    what it was waiting for (``initialize``, ``session/new``, ...)."""

    def __init__(self, message: str, phase: str) -> None:
        super().__init__(message)
        self.phase = phase


class ProtocolVersionError(AcpAdaptersError):
    """Raised by ``connect`` when the agent answers ``initialize`` with a protocol version
    this client does not speak."""


class AuthenticationRequiredError(AcpAdaptersError):
    """Raised by a session when the agent needs authentication first (JSON-RPC -32000);
    ``methods`` lists its ways, and the message names them."""

    def __init__(self, message: str, methods: list[dict[str, Any]]) -> None:
        names = ", ".join(str(m.get("id", m.get("methodId"))) for m in methods) or "none offered"
        super().__init__(f"{message}; authenticate with one of: {names}")
        self.methods = methods


class McpServerError(AcpAdaptersError):
    """An MCP server that cannot be given to the agent: malformed, or of a transport the agent
    does not take (its ``initialize`` answer says which it takes)."""


class CapabilityError(AcpAdaptersError):
    """A method the agent did not say it takes (its ``initialize`` answer lists them), or an
    unstable one the application did not opt in to: refused before anything is sent.
    ``method`` names it."""

    def __init__(self, message: str, method: str = "") -> None:
        super().__init__(message)
        self.method = method


class PromptCancelled(AcpAdaptersError):
    """A prompt that waited for the running turn to end was dropped by ``cancel()``: it
    was never sent."""


class PromptCapabilityError(AcpAdaptersError):
    """Prompt content the agent did not say it takes (an image, audio or an embedded resource
    beyond its ``promptCapabilities``): refused before the prompt is sent."""


class CheckpointError(AcpAdaptersError):
    """A workspace's checkpoint store that cannot be opened or written, or a checkpoint it
    does not hold (``session.checkpoint()`` on a session that takes none, too)."""


class ListenError(AcpAdaptersError):
    """A server of the library (``acp-adapters mcp --transport http``) cannot listen on its
    port: another program holds it, or it is not allowed. ``port`` is the one asked for."""

    def __init__(self, message: str, *, port: int) -> None:
        super().__init__(message)
        self.port = port


__all__ = [
    "AcpAdaptersError",
    "AgentNotFoundError",
    "AuthenticationRequiredError",
    "CapabilityError",
    "CaptureError",
    "CheckpointError",
    "ConnectionClosed",
    "DownloadError",
    "DuplicateProviderError",
    "InstallError",
    "InvalidThreadName",
    "LeaseLost",
    "ListenError",
    "McpServerError",
    "MissingEvidence",
    "PluginError",
    "PluginLoadError",
    "PromptCancelled",
    "PromptCapabilityError",
    "ProtocolVersionError",
    "QueuedTurnFailed",
    "RegistryError",
    "RevertConflict",
    "RpcError",
    "RulesError",
    "StartTimeoutError",
    "StoreError",
    "StoreNotFound",
    "ThreadBusy",
    "ThreadMoved",
    "ThreadNotFound",
    "UnknownProviderError",
]
