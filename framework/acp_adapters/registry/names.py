"""Knowing a registry agent by the name it gives itself.

An agent's ``initialize`` answer names it (``agentInfo.name`` in v1, ``info.name`` in v2),
and that name is seldom its registry id: ``@agentclientprotocol/claude-agent-acp`` is the
entry ``claude-acp``, ``codex-acp`` is ``codex-acp``, ``Kimi Code CLI`` is ``kimi``.
:func:`normalized` reduces a name to a comparable form (case, npm scope, separators, common
suffixes); :func:`match_agent` compares it with each entry's id, name, package names, binary
``cmd`` and the :data:`ALIASES` of the entries whose names say nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from .models import RegistryAgent, cmd_path

#: The suffixes :func:`normalized` strips (repeatedly: ``claude-agent-acp`` -> ``claude``).
SUFFIXES = ("-acp", "-cli", "-agent", "-adapter")

#: Names an agent gives itself that nothing in its registry entry says, by entry id: from the
#: real agents recorded in ``tests/data`` and the shared captures (their ``agentInfo`` names,
#: and the packages they were published under). The entries' ids, names, packages and binary
#: ``cmd`` need no alias: :func:`match_agent` reads them from the entry.
ALIASES: Mapping[str, tuple[str, ...]] = {
    # kimi-cli 1.51.0 answers "Kimi Code CLI" (capture kimi-cli-scripted-tools-v1), and is
    # the PyPI package kimi-cli
    "kimi": ("Kimi Code CLI", "kimi-cli"),
    # codex-acp 0.16.0 answers "codex-acp" and was published as @zed-industries/codex-acp
    # (captures codex-acp-*)
    "codex-acp": ("@zed-industries/codex-acp",),
}

_VERSION = re.compile(r"(?<=.)@[^/@]*$")  # pkg@1.2.3 (not the scope's leading @)


def normalized(name: str) -> str:
    """A name reduced to compare with others: lowercase, no npm scope (``@x/``) or version,
    spaces, underscores, dots and slashes as hyphens, no suffix ``-acp``, ``-cli``,
    ``-agent``, ``-adapter`` (each as often as it ends the name, never the whole name).

    ``@agentclientprotocol/claude-agent-acp`` -> ``claude``, ``Kimi Code CLI`` ->
    ``kimi-code``, ``Gemini CLI`` -> ``gemini``, ``codex-acp`` -> ``codex``.
    """
    text = name.strip().lower()
    text = _VERSION.sub("", text)
    if text.startswith("@") and "/" in text:
        text = text.split("/", 1)[1]
    text = re.sub(r"[\s_./\\:]+", "-", text)
    text = re.sub(r"[^a-z0-9-]", "", text)
    text = re.sub(r"-{2,}", "-", text).strip("-")
    changed = True
    while changed:
        changed = False
        for suffix in SUFFIXES:
            if text.endswith(suffix) and len(text) > len(suffix):
                text = text[: -len(suffix)].rstrip("-")
                changed = True
    return text


def _package_name(package: str) -> str:
    """A package without its version (npm ``@1.2.3``, PyPI ``==1.2.3`` and extras)."""
    package = package.strip()
    if "==" in package or "[" in package:
        return re.split(r"[\[=<>~!;\s]", package, maxsplit=1)[0]
    return _VERSION.sub("", package)


def exact_names(
    agent: RegistryAgent, aliases: Mapping[str, Iterable[str]] = ALIASES
) -> tuple[str, ...]:
    """The names an agent may give itself exactly: its id, its name, its packages (without
    version), its binary ``cmd`` (without ``./`` and ``.exe``) and its aliases."""
    names = [agent.id, agent.name]
    names.extend(
        _package_name(package.package)
        for package in (agent.distribution.npx, agent.distribution.uvx)
        if package is not None
    )
    for target in (agent.distribution.binary or {}).values():
        stem = cmd_path(target.cmd).name
        names.append(stem[:-4] if stem.lower().endswith(".exe") else stem)
    names.extend(aliases.get(agent.id, ()))
    unique: dict[str, None] = {}
    for name in names:
        if name:
            unique.setdefault(name, None)
    return tuple(unique)


def agent_keys(
    agent: RegistryAgent, aliases: Mapping[str, Iterable[str]] = ALIASES
) -> tuple[str, ...]:
    """The normalized forms of :func:`exact_names`: what :func:`match_agent` compares."""
    unique: dict[str, None] = {}
    for name in exact_names(agent, aliases):
        key = normalized(name)
        if key:
            unique.setdefault(key, None)
    return tuple(unique)


def match_agent(
    agent_info_name: str | None,
    agents: Iterable[RegistryAgent],
    aliases: Mapping[str, Iterable[str]] = ALIASES,
) -> RegistryAgent | None:
    """The registry agent that an agent calling itself ``agent_info_name`` is, or None.

    First an exact name (case aside: an id, a name, a package, a ``cmd``, an alias), then the
    normalized forms. A name two entries share at the first step that finds any is ambiguous:
    None (a wrong provider is worse than the generic one).
    """
    if not agent_info_name or not agent_info_name.strip() or len(agent_info_name) > 200:
        return None
    agents = tuple(agents)
    wanted = agent_info_name.strip().lower()
    exact = [a for a in agents if wanted in (n.lower() for n in exact_names(a, aliases))]
    if exact:
        return exact[0] if len(exact) == 1 else None
    key = normalized(agent_info_name)
    if not key:
        return None
    found = [a for a in agents if key in agent_keys(a, aliases)]
    return found[0] if len(found) == 1 else None
