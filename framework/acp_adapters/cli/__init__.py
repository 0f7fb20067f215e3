"""The ``acp-adapters`` command line (``python -m acp_adapters`` runs it too).

* ``demo``: a bundled Grok Build session, replayed by the replay agent, its timeline printed;
* ``replay CAPTURE``: the timeline of a capture, replayed live or projected offline;
* ``run``: a live session with a provider's agent or any ACP agent's command;
* ``providers``: the providers of the installed plugins.

``--format json`` prints the timeline as rows of :mod:`.rows`; docs/cli.md
documents the commands, the rows field by field, and the exit codes.
"""

from .commands import main

__all__ = ["main"]
