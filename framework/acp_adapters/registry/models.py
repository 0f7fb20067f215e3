"""The ACP agent registry's entries, as validated models.

A registry is a JSON document ``{"version": "1.0.0", "agents": [...], "extensions": [...]}``
whose agents follow the registry's ``agent.schema.json``: an ``id`` (lowercase, hyphens), a
``name``, a ``version``, a ``description`` and a ``distribution`` (an ``npx`` or ``uvx``
package with ``args`` and ``env``, or ``binary`` archives per platform). Everything here
comes from the network: the models are frozen, and refuse what could escape an install
folder (an absolute or ``..`` ``cmd``) or a malformed environment variable.
"""

from __future__ import annotations

from pathlib import PurePosixPath, PureWindowsPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

# Defined beside the light modules that raise it too; kept importable from here.
from .errors import RegistryError as RegistryError

#: The platforms a binary distribution may name (``agent.schema.json``).
PLATFORMS = (
    "darwin-aarch64",
    "darwin-x86_64",
    "linux-aarch64",
    "linux-x86_64",
    "windows-aarch64",
    "windows-x86_64",
)

#: Where a loaded registry came from.
Origin = Literal["file", "url", "cache", "bundled"]


def _check_env(env: dict[str, str]) -> dict[str, str]:
    for key, value in env.items():
        if not key or "=" in key or "\0" in key or "\0" in value:
            raise ValueError(f"invalid environment variable {key!r}")
    return env


class PackageDistribution(BaseModel):
    """An ``npx`` or ``uvx`` distribution: a package (optionally with its version)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    package: str = Field(min_length=1)
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)

    @field_validator("env")
    @classmethod
    def _valid_env(cls, env: dict[str, str]) -> dict[str, str]:
        return _check_env(env)


class BinaryTarget(BaseModel):
    """One platform's archive of a binary distribution, and the command inside it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    archive: str = Field(min_length=1)
    cmd: str = Field(min_length=1)
    sha256: str | None = Field(default=None, pattern=r"^[a-fA-F0-9]{64}$")
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)

    @field_validator("env")
    @classmethod
    def _valid_env(cls, env: dict[str, str]) -> dict[str, str]:
        return _check_env(env)

    @field_validator("cmd")
    @classmethod
    def _relative_cmd(cls, cmd: str) -> str:
        """``cmd`` is a path inside the extracted archive: never absolute, never ``..``."""
        if "\0" in cmd:
            raise ValueError("cmd contains a NUL character")
        for pure in (PurePosixPath(cmd), PureWindowsPath(cmd)):
            if pure.is_absolute() or pure.anchor or ".." in pure.parts:
                raise ValueError(f"cmd {cmd!r} must be a relative path inside the archive")
        return cmd

    @property
    def cmd_parts(self) -> tuple[str, ...]:
        """``cmd`` as path components inside the install folder (``./bin/x`` -> ``bin``, ``x``)."""
        return tuple(part for part in cmd_path(self.cmd).parts if part not in ("", "."))


def cmd_path(cmd: str) -> PurePosixPath:
    """A registry ``cmd`` as a relative POSIX path (backslashes read as separators)."""
    return PurePosixPath(cmd.replace("\\", "/"))


class Distribution(BaseModel):
    """How an agent is distributed: at least one of ``binary``, ``npx``, ``uvx``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    npx: PackageDistribution | None = None
    uvx: PackageDistribution | None = None
    binary: dict[str, BinaryTarget] | None = None

    @field_validator("binary")
    @classmethod
    def _known_platforms(
        cls, binary: dict[str, BinaryTarget] | None
    ) -> dict[str, BinaryTarget] | None:
        if binary is not None:
            unknown = sorted(set(binary) - set(PLATFORMS))
            if unknown:
                raise ValueError(f"unknown binary platform(s): {', '.join(unknown)}")
            if not binary:
                raise ValueError("a binary distribution names no platform")
        return binary

    @property
    def kinds(self) -> tuple[str, ...]:
        """The kinds this distribution offers, in the order ``auto`` tries them."""
        return tuple(
            kind
            for kind, value in (("binary", self.binary), ("npx", self.npx), ("uvx", self.uvx))
            if value
        )


class RegistryAgent(BaseModel):
    """One agent entry of the registry."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str = Field(pattern=r"^[a-z][a-z0-9-]*$")
    name: str = Field(min_length=1)
    version: str = Field(pattern=r"^[0-9]+\.[0-9]+\.[0-9]+")
    description: str = Field(min_length=1)
    distribution: Distribution
    website: str | None = None
    repository: str | None = None
    authors: tuple[str, ...] = ()
    license: str | None = None

    @field_validator("distribution")
    @classmethod
    def _not_empty(cls, distribution: Distribution) -> Distribution:
        if not distribution.kinds:
            raise ValueError("the distribution names no binary, npx or uvx")
        return distribution


class Registry(BaseModel):
    """A loaded registry: its valid agents, what was skipped, and where it came from.

    ``skipped`` has a line per agent entry that was not loaded (``agent #3 'foo': reason``,
    ``#3`` being its index in the document's ``agents``); ``warnings`` has the other notes
    (agents beyond the cap dropped, an offline fallback to the cached copy or the bundled
    snapshot). ``source`` is the path or URL asked for; ``origin`` says what was read:
    ``file``, ``url`` (a fresh download, or a 304 confirming the cached copy), ``cache``
    (the cached copy, without asking the network) or ``bundled`` (the snapshot shipped with
    acp-adapters).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: str
    agents: tuple[RegistryAgent, ...] = ()
    skipped: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    source: str
    origin: Origin

    def get(self, agent_id: str) -> RegistryAgent:
        """The agent with this id; a :class:`RegistryError` naming the known ids if none."""
        for agent in self.agents:
            if agent.id == agent_id:
                return agent
        known = ", ".join(agent.id for agent in self.agents) or "none"
        raise RegistryError(f"no agent {agent_id!r} in the registry {self.source} (known: {known})")

    def __contains__(self, agent_id: object) -> bool:
        return any(agent.id == agent_id for agent in self.agents)
