"""The ACP agent registry: loading it, resolving how to launch an agent, knowing an agent.

* models: :class:`Registry`, :class:`RegistryAgent`, :class:`Distribution`,
  :class:`PackageDistribution`, :class:`BinaryTarget`, :class:`RegistryError`;
* loading: :func:`load_registry` (a file, a URL through the on-disk cache, the official
  :data:`DEFAULT_REGISTRY_URL`), :func:`cached_registry`, :func:`bundled_registry`;
* launching: :func:`current_platform`, :func:`resolve_launch` (a :class:`ResolvedLaunch`),
  :func:`base_environment`; :func:`resolved_registry` (a :class:`ResolvedRegistry` of
  :class:`ResolvedAgent`: every agent as it launches here, remembered per document);
* names: :func:`normalized`, :func:`match_agent`, :data:`ALIASES`;
* downloading and installing: :func:`fetch`,
  :class:`FetchResult`, :class:`DownloadError` (``download``); :func:`install_binary`,
  :func:`installed_binary`, :class:`InstallError`, :func:`install_cache_dir` (``install``).

``default_cache_dir`` of :mod:`.source` (the registry cache) is :func:`registry_cache_dir`
here, and that of :mod:`.install` (the installed agents) :func:`install_cache_dir`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .download import DownloadError, FetchResult, fetch
    from .errors import RegistryError
    from .install import InstallError, install_binary, installed_binary
    from .install import default_cache_dir as install_cache_dir
    from .launch import (
        DistributionChoice,
        LaunchKind,
        ResolvedLaunch,
        base_environment,
        binary_path,
        installed_dir,
        resolve_launch,
    )
    from .models import (
        PLATFORMS,
        BinaryTarget,
        Distribution,
        PackageDistribution,
        Registry,
        RegistryAgent,
    )
    from .names import ALIASES, agent_keys, match_agent, normalized
    from .platforms import current_platform
    from .resolved import ResolvedAgent, ResolvedRegistry, resolved_registry
    from .source import (
        BUNDLED_REGISTRY,
        DEFAULT_REGISTRY_URL,
        MAX_AGENTS,
        MAX_REGISTRY_BYTES,
        bundled_registry,
        cached_registry,
        is_url,
        load_registry,
        parse_registry,
    )
    from .source import default_cache_dir as registry_cache_dir

#: Each name, the module that defines it and its name there. Every name is imported when
#: first used: the models (pydantic), the schemas' validator (jsonschema) and the
#: downloader load only when something needs them, not with the package.
_LAZY = {
    "DistributionChoice": ("launch", "DistributionChoice"),
    "LaunchKind": ("launch", "LaunchKind"),
    "ResolvedLaunch": ("launch", "ResolvedLaunch"),
    "base_environment": ("launch", "base_environment"),
    "binary_path": ("launch", "binary_path"),
    "current_platform": ("platforms", "current_platform"),
    "installed_dir": ("launch", "installed_dir"),
    "resolve_launch": ("launch", "resolve_launch"),
    "PLATFORMS": ("models", "PLATFORMS"),
    "BinaryTarget": ("models", "BinaryTarget"),
    "Distribution": ("models", "Distribution"),
    "PackageDistribution": ("models", "PackageDistribution"),
    "Registry": ("models", "Registry"),
    "RegistryAgent": ("models", "RegistryAgent"),
    "RegistryError": ("errors", "RegistryError"),
    "ALIASES": ("names", "ALIASES"),
    "agent_keys": ("names", "agent_keys"),
    "match_agent": ("names", "match_agent"),
    "normalized": ("names", "normalized"),
    "BUNDLED_REGISTRY": ("source", "BUNDLED_REGISTRY"),
    "DEFAULT_REGISTRY_URL": ("source", "DEFAULT_REGISTRY_URL"),
    "MAX_AGENTS": ("source", "MAX_AGENTS"),
    "MAX_REGISTRY_BYTES": ("source", "MAX_REGISTRY_BYTES"),
    "bundled_registry": ("source", "bundled_registry"),
    "cached_registry": ("source", "cached_registry"),
    "is_url": ("source", "is_url"),
    "load_registry": ("source", "load_registry"),
    "parse_registry": ("source", "parse_registry"),
    "registry_cache_dir": ("source", "default_cache_dir"),
    "ResolvedAgent": ("resolved", "ResolvedAgent"),
    "ResolvedRegistry": ("resolved", "ResolvedRegistry"),
    "resolved_registry": ("resolved", "resolved_registry"),
    "DownloadError": ("download", "DownloadError"),
    "FetchResult": ("download", "FetchResult"),
    "fetch": ("download", "fetch"),
    "InstallError": ("install", "InstallError"),
    "install_binary": ("install", "install_binary"),
    "installed_binary": ("install", "installed_binary"),
    "install_cache_dir": ("install", "default_cache_dir"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module, attribute = _LAZY[name]
        value = getattr(importlib.import_module(f".{module}", __name__), attribute)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])


__all__ = [
    "ALIASES",
    "BUNDLED_REGISTRY",
    "DEFAULT_REGISTRY_URL",
    "MAX_AGENTS",
    "MAX_REGISTRY_BYTES",
    "PLATFORMS",
    "BinaryTarget",
    "Distribution",
    "DistributionChoice",
    "DownloadError",
    "FetchResult",
    "InstallError",
    "LaunchKind",
    "PackageDistribution",
    "Registry",
    "RegistryAgent",
    "RegistryError",
    "ResolvedAgent",
    "ResolvedLaunch",
    "ResolvedRegistry",
    "agent_keys",
    "base_environment",
    "binary_path",
    "bundled_registry",
    "cached_registry",
    "current_platform",
    "fetch",
    "install_binary",
    "install_cache_dir",
    "installed_binary",
    "installed_dir",
    "is_url",
    "load_registry",
    "match_agent",
    "normalized",
    "parse_registry",
    "registry_cache_dir",
    "resolve_launch",
    "resolved_registry",
]
