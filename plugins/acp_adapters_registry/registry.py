"""The ACP agent registry: its agent entries, read defensively.

A registry is a JSON document ``{"version": "1.0.0", "agents": [...],
"extensions": [...]}`` whose agents follow the registry's ``agent.schema.json``:
an ``id`` (lowercase, hyphens), a ``name``, a ``version``, a ``description`` and
a ``distribution`` (``npx`` or ``uvx`` package with ``args`` and ``env``, or
``binary`` archives per platform). A registry comes from the network or from a
file, so it is untrusted: an entry that does not fit the schema is skipped and
reported, the others are kept.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

#: The registry bundled with this plugin: the entries of the pinned registry snapshot.
BUNDLED = Path(__file__).parent / "registry.json"


class PackageDistribution(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    package: str = Field(min_length=1)
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)


class BinaryTarget(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    archive: str
    cmd: str
    sha256: str | None = Field(default=None, pattern=r"^[a-fA-F0-9]{64}$")
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)


class Distribution(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    npx: PackageDistribution | None = None
    uvx: PackageDistribution | None = None
    binary: dict[str, BinaryTarget] | None = None


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


def read_registry(path: Path = BUNDLED) -> tuple[list[RegistryAgent], list[str]]:
    """The agents of a registry file, and a line for each entry that was skipped."""
    try:
        document: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return [], [f"{path}: cannot read the registry: {exc}"]
    entries = document.get("agents") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        return [], [f"{path}: no agents list"]
    agents: list[RegistryAgent] = []
    skipped: list[str] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        try:
            agent = RegistryAgent.model_validate(entry)
        except ValidationError as exc:
            skipped.append(f"agent #{index}: {exc.errors()[0]['msg']}")
            continue
        if agent.id in seen:
            skipped.append(f"agent #{index}: id {agent.id!r} appears twice")
            continue
        seen.add(agent.id)
        agents.append(agent)
    return agents, skipped
