"""The registry's models, now in :mod:`acp_adapters.registry` (kept here for older imports).

:func:`read_registry` reads a registry file as the plugin did before
:func:`acp_adapters.registry.load_registry`: the agents, and a line per entry skipped (or
one line when the file is not a registry at all).
"""

from __future__ import annotations

from pathlib import Path

from acp_adapters import registry as acp_registry

BinaryTarget = acp_registry.BinaryTarget
Distribution = acp_registry.Distribution
PackageDistribution = acp_registry.PackageDistribution
RegistryAgent = acp_registry.RegistryAgent

#: The registry snapshot shipped with acp-adapters.
BUNDLED = acp_registry.BUNDLED_REGISTRY

__all__ = [
    "BUNDLED",
    "BinaryTarget",
    "Distribution",
    "PackageDistribution",
    "RegistryAgent",
    "read_registry",
]


def read_registry(path: Path = BUNDLED) -> tuple[list[acp_registry.RegistryAgent], list[str]]:
    """The agents of a registry file, and a line for each entry that was skipped."""
    try:
        registry = acp_registry.load_registry(path)
    except acp_registry.RegistryError as exc:
        return [], [str(exc)]
    return list(registry.agents), list(registry.skipped)
