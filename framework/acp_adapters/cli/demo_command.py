"""``acp-adapters demo``: a bundled Grok Build session, replayed by the replay agent."""

from __future__ import annotations

from functools import partial

import anyio
import click

from ..capture.format import WORKSPACE_MARK
from .live import Format
from .options import FORMAT, debug_option, print_outcome
from .render import Renderer
from .replaying import demo_capture, replay_live


@click.command()
@click.option(
    "--format", "output", type=FORMAT, default="text", show_default=True, help="Output format."
)
@debug_option
def demo(output: Format) -> None:
    """Replay a bundled Grok Build session and print its timeline with the patches.

    The session (one prompt: a new README written with permission, an edit of
    config.py, a patch over app.py that adds greeting.py) is played by the replay
    agent, a real subprocess speaking ACP, in a temporary folder seeded with the
    files the session started from; this client answers it as the session's
    client did. No network, no credentials, no agent to install.
    """
    with demo_capture() as capture:
        outcome = anyio.run(partial(replay_live, capture, provider=None, match="exact"))
    if output == "text":
        click.echo(
            click.style("Replaying a recorded Grok Build session", bold=True)
            + " (the replay agent, as a subprocess, in a temporary folder)\n"
        )
    print_outcome(outcome, output, Renderer(roots=(WORKSPACE_MARK,)), body=True)
    if output == "text":
        click.echo(
            "\nNext: a live session, with an agent of `acp-adapters providers`:\n"
            '  acp-adapters run --provider grok --approve ask "your prompt"'
        )


__all__ = ["demo"]
