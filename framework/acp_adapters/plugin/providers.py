"""Providers: the agents acp-adapters knows how to launch and how to read.

Each provider plugin registers its :class:`Provider` through the
``register_providers`` hook. :class:`ProviderRegistry` collects them, remembers
which plugin owns which id (two owners for one id is an error naming both),
and matches an agent's self-reported name (``agentInfo.name`` in v1,
``info.name`` in v2) to its provider. An agent no plugin claims gets the
built-in generic provider, :data:`GENERIC_PROVIDER_ID`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..errors import DuplicateProviderError, PluginError, UnknownProviderError

if TYPE_CHECKING:
    import pluggy

#: The provider of any agent no plugin claims: built-in behaviour only.
GENERIC_PROVIDER_ID = "acp"


# Plain frozen dataclasses, checked by hand: ``acp-adapters providers`` loads every plugin,
# and pydantic alone would take longer to import than the whole command may.


def _text(owner: str, name: str, value: Any, *, optional: bool = False) -> None:
    if not isinstance(value, str) and not (optional and value is None):
        expected = "a string or None" if optional else "a string"
        raise ValueError(f"{owner}.{name} must be {expected}, not {type(value).__name__}")


def _texts(owner: str, name: str, value: Any) -> tuple[str, ...]:
    """A tuple of strings from a tuple or a list of them (a string alone is not one)."""
    if not isinstance(value, tuple | list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{owner}.{name} must be a tuple of strings, not {value!r:.80}")
    return tuple(value)


def _strings(owner: str, name: str, value: Any) -> dict[str, str]:
    """A new dict of strings to strings (never the caller's own, which it may change)."""
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ValueError(f"{owner}.{name} must map strings to strings, not {value!r:.80}")
    return dict(value)


@dataclass(frozen=True, kw_only=True)
class LaunchSpec:
    """How to start an agent: a command, its arguments and environment.

    ``inherit_env``: whether the agent starts with this process's whole environment under
    ``env``; False gives it only a minimal base (``PATH``, ``HOME``, the locale, the
    temporary folder, the npm and uv caches and proxies:
    :func:`acp_adapters.transport.environment.base_environment`), so that no secret of this
    process reaches an agent the application did not hand it to (``connect(env=...)``).

    Frozen; ``args`` may be given as a list (it is kept as a tuple); a field of the wrong
    type is a ``ValueError`` naming it.
    """

    command: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    inherit_env: bool = True

    def __post_init__(self) -> None:
        _text("LaunchSpec", "command", self.command)
        object.__setattr__(self, "args", _texts("LaunchSpec", "args", self.args))
        object.__setattr__(self, "env", _strings("LaunchSpec", "env", self.env))
        if not isinstance(self.inherit_env, bool):
            raise ValueError(f"LaunchSpec.inherit_env must be a bool, not {self.inherit_env!r}")


@dataclass(frozen=True, kw_only=True)
class Provider:
    """An agent acp-adapters knows.

    ``agent_names`` are the ``agentInfo``/``info`` names it claims;
    ``protocol_version`` is the version to ask for first; ``env_needs`` names
    environment variables it needs (credentials, sandbox flags);
    ``client_capabilities`` are the capabilities to offer it. ``plugin`` is
    filled in by the registry: the plugin that registered it.

    Frozen, keyword arguments only; a field of the wrong type is a ``ValueError``
    naming it (an unknown field, a ``TypeError``).
    """

    id: str
    name: str
    launch: LaunchSpec | None = None
    agent_names: tuple[str, ...] = ()
    protocol_version: Literal[1, 2] = 2
    client_capabilities: dict[str, Any] = field(default_factory=dict)
    env_needs: tuple[str, ...] = ()
    description: str | None = None
    plugin: str | None = None

    def __post_init__(self) -> None:
        _text("Provider", "id", self.id)
        _text("Provider", "name", self.name)
        if self.launch is not None and not isinstance(self.launch, LaunchSpec):
            raise ValueError(
                f"Provider.launch must be a LaunchSpec or None, not {type(self.launch).__name__}"
            )
        object.__setattr__(self, "agent_names", _texts("Provider", "agent_names", self.agent_names))
        version = self.protocol_version
        if isinstance(version, bool) or version not in (1, 2):
            raise ValueError(f"Provider.protocol_version must be 1 or 2, not {version!r}")
        capabilities = self.client_capabilities
        if not isinstance(capabilities, Mapping) or not all(
            isinstance(key, str) for key in capabilities
        ):
            raise ValueError("Provider.client_capabilities must be a mapping of strings")
        object.__setattr__(self, "client_capabilities", dict(capabilities))
        object.__setattr__(self, "env_needs", _texts("Provider", "env_needs", self.env_needs))
        _text("Provider", "description", self.description, optional=True)
        _text("Provider", "plugin", self.plugin, optional=True)


#: What ``register_providers`` hands each plugin: call it with each provider.
ProviderRegistrar = Callable[[Provider], None]


class ProviderRegistry:
    """The providers of the loaded plugins, by id."""

    def __init__(self) -> None:
        self._providers: dict[str, Provider] = {}

    @classmethod
    def collect(cls, pm: pluggy.PluginManager) -> ProviderRegistry:
        """Call every plugin's ``register_providers``, each with a registrar of its own.

        Each call goes through the plugin manager's hook calling (a hook caller of that
        plugin alone), so tracing and any hook-call monitor see it; the plugins are
        called in the order they were registered, the built-in one first.
        """
        registry = cls()
        impls = pm.hook.register_providers.get_hookimpls()
        for impl in impls:
            plugin = impl.plugin_name
            others = [other.plugin for other in impls if other is not impl]
            caller = pm.subset_hook_caller("register_providers", remove_plugins=others)

            def register(provider: Provider, plugin: str = plugin) -> None:
                registry.add(provider, plugin)

            try:
                caller(register=register)
            except (DuplicateProviderError, PluginError):
                raise
            except Exception as exc:
                raise PluginError(
                    f"plugin {plugin!r} failed in register_providers: {exc}",
                    hook="register_providers",
                    plugin=plugin,
                ) from exc
        return registry

    def add(self, provider: Any, plugin: str) -> None:
        if not isinstance(provider, Provider):
            raise PluginError(
                f"plugin {plugin!r} registered {type(provider).__name__}, not a Provider",
                hook="register_providers",
                plugin=plugin,
            )
        existing = self._providers.get(provider.id)
        if existing is not None:
            raise DuplicateProviderError(provider.id, existing.plugin or "?", plugin)
        self._providers[provider.id] = dataclasses.replace(provider, plugin=plugin)

    def get(self, provider_id: str) -> Provider:
        try:
            return self._providers[provider_id]
        except KeyError:
            known = ", ".join(sorted(self._providers)) or "none"
            raise UnknownProviderError(
                f"no loaded plugin provides {provider_id!r} (loaded: {known})"
            ) from None

    def for_agent(self, agent_name: str | None, identified: str | None = None) -> Provider:
        """The provider that claims an agent's self-reported name, else the generic one.

        ``identified`` is the provider id a plugin named for an agent no provider
        claims by its name (the ``identify_agent`` hook); an id not registered is
        ignored.
        """
        if agent_name:
            for provider in self._providers.values():
                if agent_name in provider.agent_names:
                    return provider
        if identified is not None and identified in self._providers:
            return self._providers[identified]
        return self.get(GENERIC_PROVIDER_ID)

    def __iter__(self) -> Iterator[Provider]:
        return iter(self._providers.values())

    def __len__(self) -> int:
        return len(self._providers)

    def __contains__(self, provider_id: object) -> bool:
        return provider_id in self._providers
