"""``acp-adapters providers``: the providers of the installed plugins.

Fast: loading the plugins and collecting their providers loads neither the protocol's
models nor pydantic nor jsonschema (the registry plugin's providers come from what the
registry resolved to, remembered per document:
:func:`acp_adapters.registry.resolved_registry`), and this module imports nothing of a
session.
"""

from __future__ import annotations

import os
import shlex
from typing import TYPE_CHECKING

import click

from ..plugin.manager import get_plugin_manager
from ..plugin.providers import ProviderRegistry
from ..registry.errors import RegistryError
from .options import FORMAT, debug_option
from .render import escaped_json

if TYPE_CHECKING:
    from ..registry.resolved import ResolvedRegistry

#: The registry plugin's providers: ``registry:<agent id>``.
_REGISTRY_PREFIX = "registry:"
#: The registry the registry plugin reads (a file, or a URL's cached copy).
_REGISTRY_ENV = "ACP_ADAPTERS_REGISTRY"


class _LaunchNotes:
    """Why a registry provider has no launch command, in a few words (a binary installed on
    first use, none for this platform): the registry read once, and only if one asks."""

    def __init__(self) -> None:
        self._registry: ResolvedRegistry | None = None
        self._read = False

    def of(self, provider_id: str) -> str | None:
        """The note of one provider without a launch; None for another plugin's."""
        if not provider_id.startswith(_REGISTRY_PREFIX):
            return None
        if not self._read:
            from ..registry.resolved import resolved_registry

            self._read = True
            try:
                self._registry = resolved_registry(os.environ.get(_REGISTRY_ENV) or None)
            except RegistryError:
                self._registry = None
        agent_id = provider_id.removeprefix(_REGISTRY_PREFIX)
        agent = self._registry.get(agent_id) if self._registry is not None else None
        if agent is None or agent.error is not None:
            return "(none for this platform)"
        if agent.argv is None:
            return f"(a binary for {agent.platform}: installed by its first run)"
        return None


@click.command()
@click.option(
    "--format", "output", type=FORMAT, default="text", show_default=True, help="Output format."
)
@debug_option
def providers(output: str) -> None:
    """List the providers of the installed plugins: id, name, plugin, launch command.

    ACP_ADAPTERS_PLUGINS and ACP_ADAPTERS_DISABLE_PLUGINS choose the plugins loaded.
    """
    registry = ProviderRegistry.collect(get_plugin_manager())
    found = sorted(registry, key=lambda p: p.id)
    if output == "json":
        click.echo(
            escaped_json(
                [
                    {
                        "id": p.id,
                        "name": p.name,
                        "plugin": p.plugin,
                        "command": [p.launch.command, *p.launch.args] if p.launch else None,
                        "env": dict(p.launch.env) if p.launch else {},
                        "agent_names": list(p.agent_names),
                        "protocol_version": p.protocol_version,
                        "env_needs": list(p.env_needs),
                        "description": p.description,
                    }
                    for p in found
                ],
                indent=2,
            )
        )
        return
    notes = _LaunchNotes()
    table = [("ID", "NAME", "PLUGIN", "COMMAND")]
    for p in found:
        launch = (
            shlex.join([p.launch.command, *p.launch.args])
            if p.launch
            else notes.of(p.id) or "(use --command)"
        )
        table.append((p.id, p.name, p.plugin or "?", launch))
    widths = [max(len(row[column]) for row in table) for column in range(3)]
    for number, row in enumerate(table):
        line = "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
        line += "  " + row[3]
        click.echo(click.style(line, bold=True) if number == 0 else line)


__all__ = ["providers"]
