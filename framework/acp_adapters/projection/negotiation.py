"""What ``initialize`` says: the version an agent really speaks, its name, its provider."""

from __future__ import annotations

from typing import Any

from ..plugin.hooks import Hooks
from ..plugin.providers import GENERIC_PROVIDER_ID, Provider, ProviderRegistry


def negotiated_version(result: Any) -> int:
    """The version an ``initialize`` answer really speaks: 2 only with a v2 body."""
    if (
        isinstance(result, dict)
        and result.get("protocolVersion") == 2
        and ("info" in result or "capabilities" in result)
    ):
        return 2
    return 1


def agent_name(result: Any) -> str | None:
    """The agent's own name from an ``initialize`` answer (``agentInfo`` in v1, ``info`` in v2)."""
    if not isinstance(result, dict):
        return None
    for key in ("agentInfo", "info"):
        info = result.get(key)
        if isinstance(info, dict) and isinstance(info.get("name"), str):
            return str(info["name"])
    return None


def provider_of(result: Any, registry: ProviderRegistry, hooks: Hooks) -> Provider:
    """The provider of an agent, from its ``initialize`` answer.

    The one that claims the agent's name, else the one a plugin identifies
    (``identify_agent``: some agents give no name), else the generic one.
    """
    name = agent_name(result)
    claimed = registry.for_agent(name)
    if claimed.id != GENERIC_PROVIDER_ID or not isinstance(result, dict):
        return claimed
    return registry.for_agent(name, hooks.identify_agent(result))
