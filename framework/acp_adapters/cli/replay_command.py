"""``acp-adapters replay CAPTURE``: the timeline of a capture, replayed live or projected."""

from __future__ import annotations

from functools import partial

import anyio
import click

from ..capture.format import WORKSPACE_MARK
from ..replay import DEFAULT_TIMEOUT
from .live import Format
from .options import FORMAT, SECONDS, debug_option, print_outcome
from .render import Renderer
from .replaying import Match, replay_live, replay_offline


@click.command()
@click.argument("capture", type=click.Path(dir_okay=True, path_type=str))
@click.option(
    "--provider",
    metavar="ID",
    help="Read the traffic as this provider's (default: the one claiming the agent's name).",
)
@click.option(
    "--format", "output", type=FORMAT, default="text", show_default=True, help="Output format."
)
@click.option(
    "--offline",
    is_flag=True,
    help="Project the capture without any process (no replay agent, no folder).",
)
@click.option(
    "--match",
    type=click.Choice(["exact", "methods"]),
    default="exact",
    show_default=True,
    help="How the replay agent checks this client's messages against the capture's: "
    "whole messages, or methods only.",
)
@click.option(
    "--timeout",
    type=SECONDS,
    default=DEFAULT_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="How long the replay agent waits for a message the capture says comes next.",
)
@debug_option
def replay(
    capture: str,
    provider: str | None,
    output: Format,
    offline: bool,
    match: Match,
    timeout: float,
) -> None:
    """Print the timeline of a capture (a recorded session, one JSON message a line).

    By default the capture is replayed live: the replay agent plays the agent's
    side as a subprocess, and this client plays the client's side, in a
    temporary folder seeded with the files the session started from, with
    permission requests answered as they were. --offline projects the capture
    without any process instead. `run --record FILE` writes captures.
    """
    if offline:
        outcome = replay_offline(capture, provider=provider)
    else:
        outcome = anyio.run(
            partial(replay_live, capture, provider=provider, match=match, timeout=timeout)
        )
    print_outcome(outcome, output, Renderer(roots=(WORKSPACE_MARK,)), body=True)


__all__ = ["replay"]
