"""Resolving how to launch a registry agent: platform, distribution, exact version, environment.

:func:`resolve_launch` picks a distribution (``auto``: the binary for this platform, then
``npx``, then ``uvx``; or the one asked for), pins the package to an exact version, and builds
the environment: a minimal base taken from the parent (``PATH``, ``HOME``, the locale, the
temporary folder, the npm/uv cache, offline and proxy settings, what Windows needs), then the
entry's ``env``, then the application's ``extra_env``. No other variable of the parent (an API
key, a token) reaches the agent unless the application passes it in ``extra_env``.

Versions: a package with an exact version (``pkg@1.2.3``, ``pkg==1.2.3``) runs that version;
a package with no version is pinned to the entry's ``version``; a dist-tag or a range
(``@latest``, ``@^1.2``, ``>=1.0``) is refused: what it names changes under the registry's feet,
and the entry's ``version`` is not always the package's (the registry's ``gemini`` entry is
0.37.0 and runs ``@google/gemini-cli@0.37.1``), so it cannot stand in for it.
"""

from __future__ import annotations

import os

# Still reachable as ``launch._platform``, as before ``current_platform`` moved to
# platforms.py: patching its ``system`` patches what platforms.py reads (one module).
import platform as _platform  # noqa: F401
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..plugin.providers import LaunchSpec
from ..transport.environment import BASE_PREFIXES as BASE_PREFIXES
from ..transport.environment import BASE_VARIABLES as BASE_VARIABLES
from ..transport.environment import base_environment as base_environment
from .errors import RegistryError
from .models import BinaryTarget, PackageDistribution, RegistryAgent, cmd_path
from .platforms import current_platform as current_platform

#: What ``resolve_launch`` was asked for: ``auto`` (binary, then npx, then uvx) or one kind.
DistributionChoice = Literal["auto", "binary", "npx", "uvx"]
#: The kind of a resolved launch.
LaunchKind = Literal["binary", "npx", "uvx"]


class ResolvedLaunch(BaseModel):
    """How to start one registry agent.

    ``command`` is the program and what precedes the entry's arguments (``("npx", "-y",
    "pkg@1.2.3")``, ``("uvx", "--from", "pkg==1.2.3", "pkg")``, or the installed binary's
    path), or None for a binary that is not installed yet (install it, then resolve again with
    ``install_dir``); ``args`` are the entry's arguments; ``env`` is the whole environment to
    start it with (not to be merged over the parent's). ``target`` is the binary target
    (its archive, sha256 and ``cmd``) for a binary, and ``platform`` the platform resolved.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent_id: str
    kind: LaunchKind
    command: tuple[str, ...] | None
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    target: BinaryTarget | None = None
    platform: str | None = None
    version: str

    @property
    def installed(self) -> bool:
        """Whether it can start now (False only for a binary not installed yet)."""
        return self.command is not None

    @property
    def argv(self) -> tuple[str, ...]:
        """The whole command line; a :class:`RegistryError` for a binary not installed yet."""
        if self.command is None:
            raise RegistryError(
                f"agent {self.agent_id!r}: its binary for {self.platform} is not installed "
                f"(acp-adapters registry install {self.agent_id})"
            )
        return (*self.command, *self.args)

    def launch_spec(self, *, env: Mapping[str, str] | None = None) -> LaunchSpec:
        """As a provider's :class:`LaunchSpec` (``env``: the variables to put in it; default
        the whole resolved environment)."""
        argv = self.argv
        return LaunchSpec(
            command=argv[0], args=argv[1:], env=dict(self.env if env is None else env)
        )


def resolve_launch(
    agent: RegistryAgent,
    *,
    distribution: DistributionChoice = "auto",
    platform: str | None = None,
    base_env: Mapping[str, str] | None = None,
    extra_env: Mapping[str, str] | None = None,
    install_dir: str | os.PathLike[str] | None = None,
) -> ResolvedLaunch:
    """How to start ``agent``.

    :param distribution: ``auto`` (the binary for ``platform`` if there is one, then npx,
        then uvx) or the kind to use.
    :param platform: the registry platform (default :func:`current_platform`).
    :param base_env: where the minimal base environment is taken from (default
        ``os.environ``); only the variables :func:`base_environment` keeps are.
    :param extra_env: the application's variables, over the base and the entry's.
    :param install_dir: for a binary, the folder its archive was extracted into (the
        entry's ``cmd`` is found there); None: not installed, ``command`` is None.
    :raises RegistryError: the agent has no such distribution (or no binary for this
        platform), its package version is not exact, or its ``cmd`` leaves the folder.
    """
    platform = platform if platform is not None else current_platform()
    offered = agent.distribution
    binary = offered.binary.get(platform) if offered.binary and platform else None
    if distribution == "auto":
        if binary is not None:
            kind: LaunchKind = "binary"
        elif offered.npx is not None:
            kind = "npx"
        elif offered.uvx is not None:
            kind = "uvx"
        else:
            targets = ", ".join(sorted(offered.binary or ())) or "none"
            raise RegistryError(
                f"agent {agent.id!r} has no distribution for this platform "
                f"({platform or 'unknown'}): binaries for {targets}, no npx or uvx package"
            )
    else:
        kind = distribution
    base = base_environment(os.environ if base_env is None else base_env)

    if kind == "binary":
        if not offered.binary:
            raise RegistryError(
                f"agent {agent.id!r} has no binary distribution "
                f"(it offers: {', '.join(offered.kinds)})"
            )
        if binary is None:
            raise RegistryError(
                f"agent {agent.id!r} has no binary for this platform ({platform or 'unknown'}): "
                f"binaries for {', '.join(sorted(offered.binary))}"
            )
        command = None
        if install_dir is not None:
            command = (str(binary_path(agent, binary, install_dir)),)
        return ResolvedLaunch(
            agent_id=agent.id,
            kind="binary",
            command=command,
            args=binary.args,
            env=_merge(base, binary.env, extra_env),
            target=binary,
            platform=platform,
            version=agent.version,
        )

    package = offered.npx if kind == "npx" else offered.uvx
    if package is None:
        raise RegistryError(
            f"agent {agent.id!r} has no {kind} distribution (it offers: {', '.join(offered.kinds)})"
        )
    if kind == "npx":
        spec, version = npm_spec(agent, package)
        command_line: tuple[str, ...] = ("npx", "-y", spec)
    else:
        spec, version = pypi_spec(agent, package)
        command_line = ("uvx", "--from", spec, _pypi_name(spec))
    return ResolvedLaunch(
        agent_id=agent.id,
        kind=kind,
        command=command_line,
        args=package.args,
        env=_merge(base, package.env, extra_env),
        platform=platform,
        version=version,
    )


def binary_path(
    agent: RegistryAgent, target: BinaryTarget, install_dir: str | os.PathLike[str]
) -> Path:
    """Where a binary target's ``cmd`` is inside its install folder; a
    :class:`RegistryError` if it would lead out of it."""
    root = Path(install_dir)
    relative = cmd_path(target.cmd)
    if relative.is_absolute() or ".." in relative.parts or not target.cmd_parts:
        raise RegistryError(f"agent {agent.id!r}: cmd {target.cmd!r} is not inside its archive")
    path = root.joinpath(*target.cmd_parts)
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        raise RegistryError(f"agent {agent.id!r}: cmd {target.cmd!r} leads out of {root}") from None
    return path


def installed_dir(
    agent: RegistryAgent,
    platform: str | None = None,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
) -> Path | None:
    """The folder a binary agent's archive is installed in for ``platform`` (default: this
    machine's), or None when it is not installed (completely: ``install_binary`` marks a
    finished install)."""
    from .install import installed_binary  # the installer loads only when used

    platform = platform if platform is not None else current_platform()
    target = (agent.distribution.binary or {}).get(platform) if platform else None
    if platform is None or target is None:
        return None
    root = Path(cache_dir) if cache_dir is not None else None
    found = installed_binary(agent.id, agent.version, platform, target.cmd, root)
    if found is None:
        return None
    folder = Path(found)
    for _ in target.cmd_parts:
        folder = folder.parent
    return folder


# -- versions ----------------------------------------------------------------------------------

_SEMVER = re.compile(r"^v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)$")
_NPM_NAME = re.compile(r"^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$", re.IGNORECASE)
_PEP440_EXACT = re.compile(
    r"^\d+(?:\.\d+)*(?:(?:a|b|rc)\d+)?(?:\.post\d+)?(?:\.dev\d+)?(?:\+[a-z0-9]+(?:\.[a-z0-9]+)*)?$",
    re.IGNORECASE,
)
_PYPI = re.compile(
    r"^(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)"
    r"(?P<extras>\[\s*[A-Za-z0-9._-]+(?:\s*,\s*[A-Za-z0-9._-]+)*\s*\])?"
    r"(?:\s*(?P<op>==|@)\s*(?P<version>[^\s;]+))?$"
)


def npm_spec(agent: RegistryAgent, package: PackageDistribution) -> tuple[str, str]:
    """The npm package of ``package`` at an exact version (``name@1.2.3``), and the version.

    No version: the entry's; an exact one: kept; a tag or a range: a :class:`RegistryError`.
    """
    raw = package.package.strip()
    at = raw.rfind("@")
    name, version = (raw[:at], raw[at + 1 :]) if at > 0 else (raw, None)
    if not _NPM_NAME.match(name):
        raise RegistryError(f"agent {agent.id!r}: npm package {raw!r} is not a package name")
    if version is None:
        exact = _SEMVER.match(agent.version)
        if exact is None:
            raise RegistryError(
                f"agent {agent.id!r}: npm package {raw!r} has no version, and the entry's "
                f"version {agent.version!r} is not an exact one"
            )
        return f"{name}@{exact.group(1)}", exact.group(1)
    exact = _SEMVER.match(version)
    if exact is None:
        raise RegistryError(
            f"agent {agent.id!r}: npm package {raw!r} is not pinned to an exact version "
            f"({version!r} is a tag or a range): refused"
        )
    return f"{name}@{exact.group(1)}", exact.group(1)


def pypi_spec(agent: RegistryAgent, package: PackageDistribution) -> tuple[str, str]:
    """The PyPI requirement of ``package`` at an exact version (``name[extras]==1.2.3``), and
    the version. ``name@1.2.3`` (uvx's own form) reads as ``==1.2.3``; no version: the
    entry's; ``@latest``, ranges, markers and URLs: a :class:`RegistryError`."""
    raw = package.package.strip()
    match = _PYPI.match(raw)
    if match is None:
        raise RegistryError(
            f"agent {agent.id!r}: uvx package {raw!r} is not a package pinned to an exact "
            "version (name==1.2.3): refused"
        )
    name, extras, version = match["name"], match["extras"] or "", match["version"]
    extras = re.sub(r"\s+", "", extras)
    if version is None:
        version = agent.version
        if not _PEP440_EXACT.match(version):
            raise RegistryError(
                f"agent {agent.id!r}: uvx package {raw!r} has no version, and the entry's "
                f"version {agent.version!r} is not an exact one"
            )
    elif not _PEP440_EXACT.match(version):
        raise RegistryError(
            f"agent {agent.id!r}: uvx package {raw!r} is not pinned to an exact version "
            f"({version!r}): refused"
        )
    return f"{name}{extras}=={version}", version


def _pypi_name(spec: str) -> str:
    """The executable uvx runs for a requirement: the package's name (as ``uvx pkg==1.2.3``)."""
    return re.split(r"[\[=]", spec, maxsplit=1)[0]


def _merge(
    base: dict[str, str], entry: Mapping[str, str], extra: Mapping[str, str] | None
) -> dict[str, str]:
    return {**base, **entry, **(extra or {})}
