"""What the commands that serve a store share (``serve``, ``mcp``): the store opened to be
read only, and a port that is taken said in one line."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio

from ..errors import ListenError
from ..store.base import Store, StoreNotFound
from ..store.open import default_store, open_store
from .errors import EXIT_LISTEN, EXIT_USAGE, Failure


def missing_extra(what: str, extra: str, error: ImportError) -> Failure:
    """The failure of a command whose optional dependencies are not installed."""
    return Failure(
        f"{what} is not installed ({error}): pip install 'acp-adapters[{extra}]'", EXIT_USAGE
    )


def serve_store(store: str | None, serve: Callable[[Store], Awaitable[None]]) -> None:
    """Open ``store`` (default: the one ``run -s`` uses) without making it, and run ``serve``
    on it until it ends; a store that does not exist, or a port that is taken, is a
    :class:`~.errors.Failure` of one line."""

    async def run() -> None:
        from .sessions import missing_store

        try:
            # A server only reads: it makes no store (a typo must not serve an empty one).
            found = await open_store(store if store is not None else default_store(), create=False)
        except StoreNotFound as error:
            raise missing_store(error, store, None) from None
        async with found as opened:
            try:
                await serve(opened)
            except ListenError as error:
                raise Failure(
                    f"{error}: stop what holds it, or pass another --port", EXIT_LISTEN
                ) from None

    anyio.run(run)
