"""acp-adapters provider plugin for every agent of the ACP agent registry.

Registers one provider per registry agent, with id ``registry:<agent-id>``, launched as
:func:`acp_adapters.registry.resolve_launch` resolves it for this machine: the binary for
this platform when there is one, else the ``npx`` package, else the ``uvx`` package, each
pinned to an exact version. A binary that is not installed yet has no launch (``launch`` is
None; its description says ``acp-adapters registry install ID``): :func:`launch_for` is what
an installer calls again once it is. These providers behave purely generically: the plugin
overrides no projection.

The registry read is the file or URL ``ACP_ADAPTERS_REGISTRY`` names (a URL: its cached
copy), else the cached copy of the official registry, else the snapshot bundled with
acp-adapters: loading the plugin never touches the network (``acp-adapters registry update``
refreshes the cache). ``register_providers`` reads it through
:func:`acp_adapters.registry.resolved_registry`: a document is validated in full the first
time, and what its agents resolve to here is remembered for the same bytes (and platform,
code and installs), so that collecting the providers, as every command does, loads neither
jsonschema nor pydantic.

An agent started by its own command is known by its ``initialize`` name
(:func:`acp_adapters.registry.match_agent`: case, npm scope, suffixes, aliases) through
``identify_agent``, which runs only when no provider claims the name and after every other
plugin's: the dedicated providers (claude, codex, grok) keep their own agents.
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

from acp_adapters import LaunchSpec, Provider, ProviderRegistrar, hookimpl
from acp_adapters import registry as acp_registry

PREFIX = "registry:"
#: The environment variable naming the registry the plugin reads (a file, or a URL).
REGISTRY_ENV = "ACP_ADAPTERS_REGISTRY"

__all__ = [
    "PREFIX",
    "REGISTRY_ENV",
    "agent_of",
    "identify_agent",
    "installed_dir",
    "launch_for",
    "plugin_registry",
    "provider_for",
    "register_providers",
]


def plugin_registry() -> acp_registry.Registry:
    """The registry the plugin reads, without the network.

    ``ACP_ADAPTERS_REGISTRY`` (a file; a URL's cached copy), else the cached copy of the
    official registry, else the bundled snapshot. Read again when the file changes.

    :raises RegistryError: the registry ``ACP_ADAPTERS_REGISTRY`` names cannot be read.
    """
    source = os.environ.get(REGISTRY_ENV) or None
    cache_dir = acp_registry.registry_cache_dir()
    return _read(source, str(cache_dir), _stamp(source, cache_dir))


def _stamp(source: str | None, cache_dir: Path) -> tuple[int, int] | None:
    """What changes when the registry to read changes: its file's mtime and size."""
    if source is not None and not acp_registry.is_url(source):
        path = Path(source)
    else:
        import hashlib

        url = source or acp_registry.DEFAULT_REGISTRY_URL
        path = cache_dir / f"{hashlib.sha256(url.encode('utf-8')).hexdigest()[:32]}.json"
    try:
        status = path.stat()
    except OSError:
        return None
    return status.st_mtime_ns, status.st_size


@lru_cache(maxsize=8)
def _read(
    source: str | None, cache_dir: str, stamp: tuple[int, int] | None
) -> acp_registry.Registry:
    if source is not None:
        return acp_registry.load_registry(source, cache_dir=cache_dir, offline=True)
    cached = acp_registry.cached_registry(acp_registry.DEFAULT_REGISTRY_URL, cache_dir=cache_dir)
    return cached if cached is not None else acp_registry.bundled_registry()


def agent_of(provider: Provider | str) -> acp_registry.RegistryAgent | None:
    """The registry agent of a ``registry:<id>`` provider (or provider id), or None."""
    provider_id = provider if isinstance(provider, str) else provider.id
    if not provider_id.startswith(PREFIX):
        return None
    try:
        return plugin_registry().get(provider_id[len(PREFIX) :])
    except acp_registry.RegistryError:
        return None


def installed_dir(
    agent: acp_registry.RegistryAgent,
    platform: str | None = None,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
) -> Path | None:
    """The folder a binary agent is installed in (:func:`acp_adapters.registry.installed_dir`)."""
    return acp_registry.installed_dir(agent, platform, cache_dir=cache_dir)


def launch_for(
    agent: acp_registry.RegistryAgent,
    *,
    distribution: acp_registry.DistributionChoice = "auto",
    platform: str | None = None,
    base_env: dict[str, str] | None = None,
    extra_env: dict[str, str] | None = None,
    install_dir: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> acp_registry.ResolvedLaunch:
    """How to start a registry agent here: :func:`resolve_launch`, with the binary's install
    folder found (``install_dir``, else the installer's, under ``cache_dir``) for a binary
    agent.

    ``command`` is None for a binary that is not installed: install it (``install_binary``),
    then call this again. ``env`` is the whole environment (a minimal base, the entry's
    variables, ``extra_env``): start the agent with it, not merged over ``os.environ``.
    """
    platform = platform if platform is not None else acp_registry.current_platform()
    if install_dir is None:
        offered = agent.distribution.binary or {}
        wants_binary = distribution == "binary" or (
            distribution == "auto" and platform is not None and platform in offered
        )
        if wants_binary:
            install_dir = installed_dir(agent, platform, cache_dir=cache_dir)
    return acp_registry.resolve_launch(
        agent,
        distribution=distribution,
        platform=platform,
        base_env=base_env,
        extra_env=extra_env,
        install_dir=install_dir,
    )


def provider_for(
    agent: acp_registry.RegistryAgent,
    *,
    platform: str | None = None,
    install_dir: str | os.PathLike[str] | None = None,
) -> Provider:
    """The provider of one registry agent on ``platform`` (default: this machine's).

    Its launch has the entry's own variables only (``connect`` adds the parent's
    environment); a binary not installed yet, or an agent with nothing for this platform,
    has no launch, and its description says why.
    """
    try:
        resolved = launch_for(agent, platform=platform, base_env={}, install_dir=install_dir)
    except acp_registry.RegistryError as exc:
        return _provider(acp_registry.ResolvedAgent.of(agent, None, str(exc)))
    return _provider(acp_registry.ResolvedAgent.of(agent, resolved))


def _provider(agent: acp_registry.ResolvedAgent) -> Provider:
    """The provider of a registry agent as it launches here."""
    provider_id = f"{PREFIX}{agent.id}"
    if agent.error is not None:
        return Provider(
            id=provider_id,
            name=agent.name,
            description=f"{agent.description} (cannot be launched here: {agent.error})",
        )
    if agent.argv is None:
        description = (
            f"{agent.description} (binary for {agent.platform}, not installed: "
            f"acp-adapters registry install {agent.id})"
        )
        return Provider(id=provider_id, name=agent.name, description=description)
    # Only the entry's variables, over a minimal base: a registry agent is a stranger,
    # and gets none of this process's secrets unless the application passes them.
    launch = LaunchSpec(
        command=agent.argv[0], args=agent.argv[1:], env=agent.env, inherit_env=False
    )
    return Provider(id=provider_id, name=agent.name, description=agent.description, launch=launch)


@hookimpl
def register_providers(register: ProviderRegistrar) -> None:
    # What the registry resolved to, remembered per document (validated in full once):
    # collecting the providers, as every command does, loads neither jsonschema nor pydantic.
    try:
        registry = acp_registry.resolved_registry(
            os.environ.get(REGISTRY_ENV) or None, cache_dir=acp_registry.registry_cache_dir()
        )
    except acp_registry.RegistryError as exc:
        print(f"[acp_adapters_registry] {exc}", file=sys.stderr)
        return
    for line in (*registry.warnings, *(f"skipped {line}" for line in registry.skipped)):
        print(f"[acp_adapters_registry] {line}", file=sys.stderr)
    for agent in registry.agents:
        register(_provider(agent))


@hookimpl(trylast=True)
def identify_agent(initialize_result: dict[str, Any]) -> str | None:
    """The ``registry:<id>`` provider of an agent no provider claims by its name: its
    ``agentInfo``/``info`` name (then its title) matched to a registry entry."""
    try:
        agents = plugin_registry().agents
    except acp_registry.RegistryError:
        return None
    for name in _names(initialize_result):
        agent = acp_registry.match_agent(name, agents)
        if agent is not None:
            return f"{PREFIX}{agent.id}"
    return None


def _names(result: Any) -> list[str]:
    """The agent's name, then its title, from an ``initialize`` answer (untrusted)."""
    if not isinstance(result, dict):
        return []
    found: list[str] = []
    for field in ("name", "title"):
        for key in ("agentInfo", "info"):
            info = result.get(key)
            if isinstance(info, dict) and isinstance(info.get(field), str):
                found.append(info[field])
                break
    return found
