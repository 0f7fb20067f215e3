"""The registry's error, in a module of its own: the registry's light modules (reading a
file, the cache, what a registry resolved to) raise it without loading the models."""

from __future__ import annotations

from ..errors import AcpAdaptersError


class RegistryError(AcpAdaptersError):
    """A registry that cannot be loaded (too big, not a registry, unreachable with no copy),
    or an agent that cannot be launched as asked (no such distribution, a version that is
    not exact); the message names the registry or the agent and the reason."""


__all__ = ["RegistryError"]
