"""``acp-adapters registry``: the agents of the ACP agent registry, and their installs.

``list``, ``show ID``, ``install ID``, ``path ID`` and ``update`` read the registry that
``--registry URL_OR_FILE`` names, else the one the registry plugin reads (the file or URL
``ACP_ADAPTERS_REGISTRY`` names, else the cached copy of the official registry, else the
snapshot bundled with acp-adapters); ``update`` fetches it anew into the cache. A binary
agent is installed into the cache (``ACP_ADAPTERS_CACHE``) with a progress bar on a
terminal; ``run --provider registry:ID`` installs it on first use the same way.

Plain HTTP is refused, except for a loopback address when ``ACP_ADAPTERS_LOOPBACK_HTTP=1``
(a mirror on this machine, the tests' server).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from .. import registry as acp_registry
from ..registry import Registry, RegistryAgent, RegistryError
from .errors import EXIT_USAGE, Failure
from .render import escaped_json, printable

#: Set to 1, plain HTTP is allowed from a loopback address (127.0.0.1, localhost, ::1).
LOOPBACK_ENV = "ACP_ADAPTERS_LOOPBACK_HTTP"
#: What the registry plugin reads (a file, or a URL's cached copy).
REGISTRY_ENV = "ACP_ADAPTERS_REGISTRY"
_FORMAT = click.Choice(["text", "json"])
PREFIX = "registry:"


def loopback_http() -> bool:
    return os.environ.get(LOOPBACK_ENV) == "1"


def configured_registry(source: str | None = None, *, network: bool = False) -> Registry:
    """The registry ``source`` names, else the plugin's; from the network only with
    ``network`` (else a URL's cached copy)."""
    source = source or os.environ.get(REGISTRY_ENV) or None
    if source is not None:
        return acp_registry.load_registry(
            source, offline=not network, allow_loopback_http=loopback_http()
        )
    if network:
        return acp_registry.load_registry(None, allow_loopback_http=loopback_http())
    cached = acp_registry.cached_registry(acp_registry.DEFAULT_REGISTRY_URL)
    return cached if cached is not None else acp_registry.bundled_registry()


def _agent(registry: Registry, agent_id: str) -> RegistryAgent:
    agent_id = agent_id.removeprefix(PREFIX)
    if agent_id not in registry:
        raise Failure(
            f"the registry ({registry.source}) has no agent {agent_id!r}: "
            "`acp-adapters registry list` lists them",
            EXIT_USAGE,
        )
    return registry.get(agent_id)


def _installed(agent: RegistryAgent, platform: str | None) -> Path | None:
    target = (agent.distribution.binary or {}).get(platform) if platform else None
    if platform is None or target is None:
        return None
    return acp_registry.installed_binary(agent.id, agent.version, platform, target.cmd)


def launch_of(agent: RegistryAgent) -> acp_registry.ResolvedLaunch:
    """How ``agent`` starts here (the binary's install folder found, if installed)."""
    platform = acp_registry.current_platform()
    return acp_registry.resolve_launch(
        agent,
        platform=platform,
        base_env={},
        install_dir=acp_registry.installed_dir(agent, platform),
    )


def _progress(label: str) -> tuple[Callable[[int, int | None], None], Callable[[], None]]:
    """A progress bar for a download on stderr (a terminal only: quiet otherwise)."""
    if not sys.stderr.isatty():
        return (lambda done, total: None), (lambda: None)
    state: dict[str, Any] = {"bar": None, "done": 0}

    def update(done: int, total: int | None) -> None:
        if state["bar"] is None:
            if not total:
                return
            bar = click.progressbar(
                length=total, label=label, file=sys.stderr, show_eta=True, show_percent=True
            )
            bar.__enter__()
            state["bar"] = bar
        state["bar"].update(done - state["done"])
        state["done"] = done

    def end() -> None:
        if state["bar"] is not None:
            state["bar"].__exit__(None, None, None)

    return update, end


def install(agent: RegistryAgent) -> Path:
    """Install a binary agent's archive for this platform (once); the executable's path.

    :raises Failure: the agent has no binary for this platform (npx and uvx agents need no
        install), or the install failed (the error names the agent and why).
    """
    platform = acp_registry.current_platform()
    target = (agent.distribution.binary or {}).get(platform) if platform else None
    if target is None or platform is None:
        raise Failure(
            f"agent {agent.id!r} has no binary for {platform or 'this platform'}"
            + (
                f" (it runs with {', '.join(k for k in agent.distribution.kinds)}: nothing to "
                "install)"
                if agent.distribution.kinds
                else ""
            ),
            EXIT_USAGE,
        )
    update, end = _progress(f"Installing {agent.id} {agent.version}")
    try:
        return acp_registry.install_binary(
            agent.id,
            agent.version,
            platform,
            archive_url=target.archive,
            sha256=target.sha256,
            cmd=target.cmd,
            allow_loopback_http=loopback_http(),
            progress=update,
        )
    except (acp_registry.InstallError, acp_registry.DownloadError) as error:
        raise Failure(printable(str(error))) from error
    finally:
        end()


def ensure_installed(provider_id: str) -> bool:
    """For ``run --provider registry:ID``: install the agent's binary if it needs one and
    has none yet; whether it installed anything."""
    agent_id = provider_id.removeprefix(PREFIX)
    try:
        known = configured_registry()
        if agent_id not in known:
            return False
        agent = known.get(agent_id)
        resolved = launch_of(agent)
    except RegistryError:
        return False  # the provider's own description says why it cannot launch
    if resolved.installed:
        return False
    install(agent)
    return True


def _kinds(agent: RegistryAgent) -> str:
    return ",".join(agent.distribution.kinds)


def _row(agent: RegistryAgent) -> dict[str, Any]:
    installed = _installed(agent, acp_registry.current_platform())
    try:
        resolved: acp_registry.ResolvedLaunch | None = launch_of(agent)
        why = None
    except RegistryError as error:
        resolved, why = None, str(error)
    return {
        "id": agent.id,
        "provider": f"{PREFIX}{agent.id}",
        "name": agent.name,
        "version": agent.version,
        "description": agent.description,
        "distributions": list(agent.distribution.kinds),
        "platforms": sorted(agent.distribution.binary or {}),
        "launch": resolved.kind if resolved else None,
        "installed": str(installed) if installed else None,
        "command": list(resolved.argv) if resolved and resolved.installed else None,
        "env": dict(resolved.env) if resolved else {},
        "cannot_launch": why,
        "website": agent.website,
        "repository": agent.repository,
    }


def _warn(registry: Registry) -> None:
    for line in (*registry.warnings, *(f"skipped {s}" for s in registry.skipped)):
        click.echo(f"Note: {printable(line)}", err=True)


@click.group()
def registry() -> None:
    """The agents of the ACP agent registry: list, show, install, path, update.

    Each reads --registry URL_OR_FILE, else what the registry plugin reads
    (ACP_ADAPTERS_REGISTRY, else the cached official registry, else the bundled
    snapshot). `run --provider registry:ID` runs one, installing it first if it
    is a binary not installed yet.
    """


def _source_option(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--registry",
        "source",
        metavar="URL_OR_FILE",
        help="The registry to read (default: what the registry plugin reads).",
    )(function)


def _format_option(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--format", "output", type=_FORMAT, default="text", show_default=True, help="Output format."
    )(function)


@registry.command("list")
@_source_option
@_format_option
def list_agents(source: str | None, output: str) -> None:
    """The registry's agents: id, version, how each runs here, whether it is installed."""
    read = _read(source)
    _warn(read)
    rows = [_row(agent) for agent in read.agents]
    if output == "json":
        click.echo(escaped_json(rows, indent=2))
        return
    table = [("ID", "VERSION", "RUNS WITH", "NAME")]
    for row in rows:
        runs = row["launch"] or "-"
        if row["launch"] == "binary":
            runs += " (installed)" if row["installed"] else " (not installed)"
        table.append((row["id"], row["version"], runs, printable(row["name"])))
    widths = [max(len(r[c]) for r in table) for c in range(3)]
    for number, cells in enumerate(table):
        line = "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=False))
        line += "  " + cells[3]
        click.echo(click.style(line, bold=True) if number == 0 else line)


@registry.command()
@click.argument("agent_id", metavar="ID")
@_source_option
@_format_option
def show(agent_id: str, source: str | None, output: str) -> None:
    """One agent of the registry: what it is, and how it would be launched here."""
    row = _row(_agent(_read(source), agent_id))
    if output == "json":
        click.echo(escaped_json(row, indent=2))
        return
    lines = [
        f"{printable(row['name'])} ({row['provider']}) {row['version']}",
        f"  {printable(row['description'])}",
        f"  distributions: {', '.join(row['distributions'])}",
    ]
    if row["platforms"]:
        lines.append(f"  binaries for: {', '.join(row['platforms'])}")
    if row["cannot_launch"]:
        lines.append(f"  cannot be launched here: {printable(row['cannot_launch'])}")
    elif row["command"]:
        lines.append(f"  launched with: {printable(' '.join(row['command']))}")
    else:
        lines.append(f"  a binary, not installed: acp-adapters registry install {row['id']}")
    lines.extend(f"  {key}: {printable(row[key])}" for key in ("website", "repository") if row[key])
    click.echo("\n".join(lines))


@registry.command("install")
@click.argument("agent_id", metavar="ID")
@_source_option
def install_agent(agent_id: str, source: str | None) -> None:
    """Install a binary agent for this platform: downloaded, its sha256 checked, unpacked
    with every entry checked, into the cache. Prints the executable's path."""
    agent = _agent(_read(source), agent_id)
    click.echo(str(install(agent)))


@registry.command()
@click.argument("agent_id", metavar="ID")
@_source_option
def path(agent_id: str, source: str | None) -> None:
    """The installed executable of a binary agent (exit 1 when it is not installed)."""
    agent = _agent(_read(source), agent_id)
    found = _installed(agent, acp_registry.current_platform())
    if found is None:
        raise Failure(
            f"agent {agent.id!r} is not installed here: acp-adapters registry install {agent.id}"
        )
    click.echo(str(found))


@registry.command()
@_source_option
def update(source: str | None) -> None:
    """Fetch the registry anew (conditionally: unchanged, the cached copy is kept) into the
    cache, for the registry plugin and the other commands to read offline."""
    read = configured_registry(source, network=True)
    _warn(read)
    click.echo(f"{len(read.agents)} agents from {printable(read.source)} ({read.origin})")


def _read(source: str | None) -> Registry:
    """The registry ``--registry`` names (a URL asked for by name is fetched, through the
    cache), else the plugin's (never the network)."""
    try:
        return configured_registry(
            source, network=source is not None and acp_registry.is_url(source)
        )
    except RegistryError as error:
        raise Failure(printable(str(error))) from error
