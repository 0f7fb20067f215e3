"""``acp-adapters serve``: a store's threads in the browser, read-only, on 127.0.0.1."""

from __future__ import annotations

import secrets

import click

from ..store.base import Store
from .options import store_option
from .serving import missing_extra, serve_store


@click.command()
@store_option()
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="The port on 127.0.0.1 (0: one the system picks).",
)
@click.option(
    "--allow-prompts",
    is_flag=True,
    help="Let the page queue a prompt to a thread, behind a token printed here (new each run).",
)
def serve(store: str | None, port: int, allow_prompts: bool) -> None:
    """Show the threads of a store in the browser, live, on 127.0.0.1 (read-only)."""
    token = secrets.token_urlsafe(24) if allow_prompts else None
    try:
        from ..viewer import Stopping, create_app, serve_app
    except ImportError as error:
        raise missing_extra("the viewer's web server", "serve", error) from None

    def listening(url: str) -> None:
        click.echo(f"Serving the threads at {url} (on 127.0.0.1 only; Ctrl-C stops)", err=True)
        if token is not None:
            click.echo(f"Prompts are allowed with this run's token: {token}", err=True)

    async def run(opened: Store) -> None:
        stopping = Stopping()
        await serve_app(
            create_app(opened, stopping=stopping, prompt_token=token),
            port=port,
            on_listening=listening,
            stopping=stopping,
        )

    serve_store(store, run)
