"""acp-adapters provider plugin for every agent of the ACP agent registry.

Registers one provider per registry agent, with id ``registry:<agent-id>``,
launched as its distribution says (``npx`` or ``uvx`` package; binary
distributions have no launch yet). The registry is the bundled snapshot, or the
file ``ACP_ADAPTERS_REGISTRY`` names. These providers behave purely
generically: the plugin overrides no projection.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from acp_adapters import LaunchSpec, Provider, ProviderRegistrar, hookimpl

from .registry import BUNDLED, RegistryAgent, read_registry

PREFIX = "registry:"


def provider_for(agent: RegistryAgent) -> Provider:
    """The provider of one registry agent."""
    launch = None
    for command, package in (("npx", agent.distribution.npx), ("uvx", agent.distribution.uvx)):
        if package is not None:
            launch = LaunchSpec(
                command=command, args=(package.package, *package.args), env=package.env
            )
            break
    return Provider(
        id=f"{PREFIX}{agent.id}",
        name=agent.name,
        description=agent.description,
        launch=launch,
    )


@hookimpl
def register_providers(register: ProviderRegistrar) -> None:
    source = os.environ.get("ACP_ADAPTERS_REGISTRY")
    agents, skipped = read_registry(Path(source) if source else BUNDLED)
    for line in skipped:
        print(f"[acp_adapters_registry] skipped {line}", file=sys.stderr)
    for agent in agents:
        register(provider_for(agent))
