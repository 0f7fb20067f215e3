"""``acp-adapters worker``: run the threads of a shared store (:mod:`acp_adapters.worker`)."""

from __future__ import annotations

import signal

import anyio
import click

from ..store.base import LEASE_SECONDS
from ..store.open import default_store, redact
from ..worker import DEFAULT_CONCURRENCY, DEFAULT_GRACE, DEFAULT_IDLE, run_worker
from .options import store_option

_SECONDS = click.FloatRange(0, 86400)


@click.command()
@store_option(
    "The store: a postgresql:// URL (workers on several machines) or a SQLite file "
    "(default: the one `run -s` uses)."
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 1000),
    default=DEFAULT_CONCURRENCY,
    show_default=True,
    help="How many threads it drives at once.",
)
@click.option(
    "--idle",
    type=_SECONDS,
    default=DEFAULT_IDLE,
    show_default=True,
    metavar="SECONDS",
    help="How long a thread's agent is kept once its queue is empty.",
)
@click.option(
    "--grace",
    type=_SECONDS,
    default=DEFAULT_GRACE,
    show_default=True,
    metavar="SECONDS",
    help="On SIGTERM or Ctrl-C: how long running turns may take to finish before they are "
    "cancelled.",
)
@click.option(
    "--root",
    type=click.Path(exists=True, file_okay=False),
    default=None,
    help="Drive only the threads whose folder is under this one.",
)
@click.option(
    "--lease",
    "lease_seconds",
    type=click.FloatRange(0.05, 86400),
    default=LEASE_SECONDS,
    show_default=True,
    metavar="SECONDS",
    help="How long a thread stays this worker's unless renewed (a worker that dies loses "
    "its threads this long after).",
)
def worker(
    store: str | None,
    concurrency: int,
    idle: float,
    grace: float,
    root: str | None,
    lease_seconds: float,
) -> None:
    """Run the threads of a store: take each thread that has queued prompts and no live
    owner, start its agent as the thread records it, run its queue in order, keep the agent
    --idle seconds for more, then let the thread go. SIGTERM (or Ctrl-C) takes no new
    work, lets running turns finish within --grace, and lets every thread go.

    \b
    acp-adapters worker --store postgresql://host/db --concurrency 8
    acp-adapters sessions send fix --provider claude --cwd ~/project "fix the tests"
    """
    target = store if store is not None else default_store()

    async def work() -> None:
        stop = anyio.Event()
        async with anyio.create_task_group() as group:

            async def on_signals() -> None:
                with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                    async for signum in signals:
                        click.echo(
                            f"worker: {signal.Signals(signum).name}: no new work; the running "
                            f"turns end within {grace:g} s",
                            err=True,
                        )
                        stop.set()

            group.start_soon(on_signals)
            click.echo(
                f"worker: driving the threads of {redact(target)}, {concurrency} at once",
                err=True,
            )
            counts = await run_worker(
                target,
                concurrency=concurrency,
                idle=idle,
                grace=grace,
                root=root,
                lease_seconds=lease_seconds,
                stop=stop,
            )
            group.cancel_scope.cancel()
        click.echo(
            f"worker: {counts.threads} threads taken, {counts.prompts} prompts run, "
            f"{counts.refused} refused, {counts.lost_turns} lost turns ended",
            err=True,
        )

    anyio.run(work)
