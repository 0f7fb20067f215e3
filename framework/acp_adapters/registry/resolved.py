"""What the agents of a registry resolve to on this machine, remembered per document.

The registry plugin registers a provider per agent of the registry it reads, and
``acp-adapters providers`` lists them: the document validated in full (its JSON schema,
each entry's schema, then the models), each agent's launch resolved for this platform.
That loads jsonschema and pydantic, which take longer than the whole command may.
:func:`resolved_registry` does it once per document and remembers the outcome on disk,
in the registry cache folder (``resolved-<source>.json``, one per source named), under a
key of all that the outcome depends on:

* the bytes of the document read (their sha256): another byte is another document,
  validated anew in full;
* which document that is (the source named; the cached copy or the bundled snapshot read
  for it) and the platform;
* the code that validates and resolves (this package's modules, schemas and snapshot, and
  the versions of pydantic and jsonschema): an upgrade validates anew;
* each binary agent's install for this platform, looked up again on every read
  (:func:`~.install.installed_binary`): an install or a removal resolves anew.

No check is skipped: what is remembered is the verdict of the full validation of those
very bytes by that very code. A memo that is missing, of another key, or that does not
read as one is replaced after a full read; one that cannot be written is not an error.
The memo is trusted as the cache folder it is written in (0600) is: that folder also
holds the registry's cached copy and the binaries of the installed agents.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from .errors import RegistryError
from .install import installed_binary
from .platforms import current_platform
from .source import (
    BUNDLED_REGISTRY,
    DEFAULT_REGISTRY_URL,
    MAX_REGISTRY_BYTES,
    _atomic_write,
    _Cache,
    _read_file,
    check_url,
    default_cache_dir,
    is_url,
)

if TYPE_CHECKING:
    from .launch import ResolvedLaunch
    from .models import Registry, RegistryAgent

#: The shape of the memo file; another number is not read.
FORMAT = 1
_HERE = Path(__file__).parent
#: What the outcome is computed by: a change to any of them validates anew.
_CODE = (
    "errors.py",
    "install.py",
    "launch.py",
    "models.py",
    "platforms.py",
    "resolved.py",
    "source.py",
    "bundled.json",
    "schemas/agent.schema.json",
    "schemas/registry.schema.json",
)
_VALIDATORS = ("pydantic", "pydantic_core", "jsonschema")
#: One binary agent's install as the memo saw it: agent id, version, platform, cmd, and the
#: path :func:`installed_binary` found (None: not installed).
_Check = tuple[str, str, str, str, str | None]


@dataclass(frozen=True)
class ResolvedAgent:
    """One registry agent as it launches here.

    ``kind`` is the distribution chosen (``binary``, ``npx``, ``uvx``) and ``platform`` the
    platform resolved; ``argv`` the whole command line, None for a binary not installed yet
    (``acp-adapters registry install ID``) or an agent that cannot be launched here, whose
    ``error`` says why (no distribution for this platform, a version that is not exact).
    ``env`` holds the entry's own variables only.
    """

    id: str
    name: str
    description: str
    kind: str | None = None
    platform: str | None = None
    argv: tuple[str, ...] | None = None
    env: dict[str, str] = field(default_factory=dict)
    error: str | None = None

    @classmethod
    def of(
        cls, agent: RegistryAgent, launch: ResolvedLaunch | None, error: str | None = None
    ) -> ResolvedAgent:
        """From the models: an agent and its launch (None, with the ``error`` that refused it)."""
        if launch is None:
            return cls(id=agent.id, name=agent.name, description=agent.description, error=error)
        return cls(
            id=agent.id,
            name=agent.name,
            description=agent.description,
            kind=launch.kind,
            platform=launch.platform,
            argv=launch.argv if launch.installed else None,
            env=dict(launch.env),
        )


@dataclass(frozen=True)
class ResolvedRegistry:
    """The agents of one registry as they launch here, with the notes its reading gave:
    ``warnings`` (agents beyond the cap, an offline fallback) and ``skipped`` (a line per
    entry that was not loaded), as on :class:`~.models.Registry`."""

    agents: tuple[ResolvedAgent, ...]
    warnings: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()

    def get(self, agent_id: str) -> ResolvedAgent | None:
        return next((agent for agent in self.agents if agent.id == agent_id), None)


def resolved_registry(
    source: str | None = None,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    allow_loopback_http: bool = False,
) -> ResolvedRegistry:
    """The agents of the registry ``source`` names, resolved for this machine.

    ``source`` is read as the registry plugin reads it, without the network: a file; a
    URL's cached copy (in ``cache_dir``, default :func:`~.source.default_cache_dir`);
    None, the cached copy of the official registry, else the snapshot bundled with
    acp-adapters. Each agent's launch is :func:`~.launch.resolve_launch` with the binary's
    install found, over an empty base environment.

    :raises RegistryError: as :func:`~.source.load_registry` does for that source.
    """
    folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    platform = current_platform()
    memo = folder / f"resolved-{_sha256(json.dumps(source).encode())[:16]}.json"
    document = _document(source, folder, allow_loopback_http)
    key = _key(source, document, platform) if document is not None else None
    if key is not None:
        found = _recall(memo, key)
        if found is not None:
            return found
    registry = _load(source, folder, allow_loopback_http)
    checks = _checks(registry, platform)  # before resolving: an install meanwhile misses
    resolved = resolve_agents(registry, platform)
    # Remembered only when the document read for the key is still the one there: the
    # outcome is then that document's.
    if key is not None and _document(source, folder, allow_loopback_http) == document:
        _remember(memo, key, checks, resolved)
    return resolved


def resolve_agents(registry: Registry, platform: str | None) -> ResolvedRegistry:
    """Every agent of ``registry`` as it launches on ``platform`` (the full, slow way)."""
    return ResolvedRegistry(
        agents=tuple(_resolve(agent, platform) for agent in registry.agents),
        warnings=tuple(registry.warnings),
        skipped=tuple(registry.skipped),
    )


def _resolve(agent: RegistryAgent, platform: str | None) -> ResolvedAgent:
    from .launch import installed_dir, resolve_launch

    try:
        launch = resolve_launch(
            agent, platform=platform, base_env={}, install_dir=installed_dir(agent, platform)
        )
    except RegistryError as exc:
        return ResolvedAgent.of(agent, None, str(exc))
    return ResolvedAgent.of(agent, launch)


# -- the document and its key --------------------------------------------------------------


def _document(
    source: str | None, folder: Path, allow_loopback_http: bool
) -> tuple[str, str] | None:
    """What the full read of ``source`` starts from: (what it is, the sha256 of its bytes);
    None when that read does something else (an error, a fallback): no memo for it."""
    try:
        if source is None:
            cached = _Cache(folder, DEFAULT_REGISTRY_URL).read(MAX_REGISTRY_BYTES)
            if cached is not None:
                return "cache", _sha256(cached.body)
            return "bundled", _sha256(_read_file(BUNDLED_REGISTRY, MAX_REGISTRY_BYTES))
        if is_url(source):
            check_url(source, allow_loopback_http=allow_loopback_http)
            cached = _Cache(folder, source).read(MAX_REGISTRY_BYTES)
            return ("cache", _sha256(cached.body)) if cached is not None else None
        return "file", _sha256(_read_file(Path(source), MAX_REGISTRY_BYTES))
    except RegistryError:
        return None


def _load(source: str | None, folder: Path, allow_loopback_http: bool) -> Registry:
    """The registry itself, validated in full: what the registry plugin reads."""
    from .source import bundled_registry, cached_registry, load_registry

    if source is not None:
        return load_registry(
            source, cache_dir=folder, offline=True, allow_loopback_http=allow_loopback_http
        )
    cached = cached_registry(DEFAULT_REGISTRY_URL, cache_dir=folder)
    return cached if cached is not None else bundled_registry()


def _key(source: str | None, document: tuple[str, str], platform: str | None) -> str:
    return _sha256(json.dumps([FORMAT, _code(), source, *document, platform]).encode())


@cache
def _code() -> str:
    """The fingerprint of what validates and resolves: the files, the validators' versions."""
    digest = hashlib.sha256()
    for name in _CODE:
        try:
            content = (_HERE / name).read_bytes()
        except OSError:
            content = b"(none)"  # as the code that runs finds it
        digest.update(name.encode() + b"\0" + content + b"\0")
    for release in _validators():
        digest.update(release.encode() + b"\0")
    return digest.hexdigest()


def _validators() -> list[str]:
    """The installed releases of the validators: their ``.dist-info`` folders, whose names
    carry the versions (found beside each package without importing it, and without
    reading its metadata, which is longer to parse than the memo is to read)."""
    import importlib.util

    releases: list[str] = []
    for module in _VALIDATORS:
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            continue
        folder = Path(spec.origin).parent.parent
        with contextlib.suppress(OSError):
            releases += sorted(
                name
                for name in os.listdir(folder)
                if name.lower().startswith(f"{module}-") and name.endswith(".dist-info")
            )
    return releases


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -- installs ------------------------------------------------------------------------------


def _checks(registry: Registry, platform: str | None) -> list[_Check]:
    """Each binary agent's install for ``platform``, as :func:`installed_binary` finds it."""
    checks: list[_Check] = []
    for agent in registry.agents:
        target = (agent.distribution.binary or {}).get(platform) if platform else None
        if platform is not None and target is not None:
            found = installed_binary(agent.id, agent.version, platform, target.cmd)
            checks.append(
                (
                    agent.id,
                    agent.version,
                    platform,
                    target.cmd,
                    None if found is None else str(found),
                )
            )
    return checks


def _installs_unchanged(checks: Any) -> bool:
    if not isinstance(checks, list):
        return False
    for check in checks:
        if not (
            isinstance(check, list)
            and len(check) == 5
            and all(isinstance(part, str) for part in check[:4])
            and (check[4] is None or isinstance(check[4], str))
        ):
            return False
        agent_id, version, platform, cmd, seen = check
        found = installed_binary(agent_id, version, platform, cmd)
        if (None if found is None else str(found)) != seen:
            return False
    return True


# -- the memo ------------------------------------------------------------------------------


def _remember(path: Path, key: str, checks: list[_Check], resolved: ResolvedRegistry) -> None:
    memo = {
        "format": FORMAT,
        "key": key,
        "checks": [list(check) for check in checks],
        "warnings": list(resolved.warnings),
        "skipped": list(resolved.skipped),
        "agents": [
            {
                "id": agent.id,
                "name": agent.name,
                "description": agent.description,
                "kind": agent.kind,
                "platform": agent.platform,
                "argv": list(agent.argv) if agent.argv is not None else None,
                "env": agent.env,
                "error": agent.error,
            }
            for agent in resolved.agents
        ],
    }
    with contextlib.suppress(OSError):  # a memo that cannot be written is no memo
        path.parent.mkdir(parents=True, exist_ok=True)
        _atomic_write(path, json.dumps(memo, ensure_ascii=False).encode("utf-8"))


def _recall(path: Path, key: str) -> ResolvedRegistry | None:
    """The memo at ``path`` when it is of ``key`` and every install it saw is unchanged."""
    try:
        memo = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(memo, dict) or memo.get("format") != FORMAT or memo.get("key") != key:
        return None
    warnings, skipped, entries = memo.get("warnings"), memo.get("skipped"), memo.get("agents")
    if not (_strings(warnings) and _strings(skipped) and isinstance(entries, list)):
        return None
    agents = []
    for entry in entries:
        agent = _agent(entry)
        if agent is None:
            return None
        agents.append(agent)
    if not _installs_unchanged(memo.get("checks")):
        return None
    return ResolvedRegistry(agents=tuple(agents), warnings=tuple(warnings), skipped=tuple(skipped))


def _agent(entry: Any) -> ResolvedAgent | None:
    """One agent of the memo, or None when it is not of the shape :func:`_remember` wrote."""
    if not isinstance(entry, dict):
        return None
    agent_id, name, description = entry.get("id"), entry.get("name"), entry.get("description")
    kind, platform, error = entry.get("kind"), entry.get("platform"), entry.get("error")
    argv, env = entry.get("argv"), entry.get("env")
    if not (isinstance(agent_id, str) and isinstance(name, str) and isinstance(description, str)):
        return None
    if not all(value is None or isinstance(value, str) for value in (kind, platform, error)):
        return None
    if not (argv is None or (_strings(argv) and argv)) or not isinstance(env, dict):
        return None
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        return None
    return ResolvedAgent(
        id=agent_id,
        name=name,
        description=description,
        kind=kind,
        platform=platform,
        argv=tuple(argv) if argv is not None else None,
        env=dict(env),
        error=error,
    )


def _strings(value: Any) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


__all__ = ["ResolvedAgent", "ResolvedRegistry", "resolve_agents", "resolved_registry"]
