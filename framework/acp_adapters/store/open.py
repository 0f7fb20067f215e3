"""Opening a store: a path is a SQLite file, a ``postgresql://`` URL a PostgreSQL database."""

from __future__ import annotations

import importlib
import os
import re
import urllib.parse
from pathlib import Path

from .base import Store, StoreError

#: The environment variable naming the default store (a path or a URL).
STORE_ENV = "ACP_ADAPTERS_STORE"

_POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def default_store_path() -> Path:
    """The SQLite file of the user's data folder (``platformdirs``): e.g.
    ``~/.local/share/acp-adapters/store.db`` on Linux."""
    import platformdirs

    return platformdirs.user_data_path("acp-adapters", appauthor=False) / "store.db"


def default_store() -> str:
    """The store opened when none is named: ``$ACP_ADAPTERS_STORE`` (a path or a URL), else
    :func:`default_store_path`."""
    return os.environ.get(STORE_ENV) or os.fspath(default_store_path())


def redact(url: str) -> str:
    """The URL without its password (in its user part or a ``password=`` parameter)."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return re.sub(r"//[^@/]*@", "//***@", url)
    netloc = parts.netloc
    if "@" in netloc:
        user, _, hosts = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}@{hosts}"
    query = "&".join(
        part
        for part in parts.query.split("&")
        if part and part.partition("=")[0].lower() != "password"
    )
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


async def open_store(target: str | os.PathLike[str] | None = None) -> Store:
    """Open a store (creating it, or migrating an older one to this library's schema).

    :param target: a SQLite file's path; a ``postgresql://`` (or ``postgres://``) URL; None
        for ``$ACP_ADAPTERS_STORE``, else a SQLite file in the user's data folder (created
        with its folder when missing).
    :raises StoreError: it cannot be opened or written (the path or URL, and why), or its
        schema is newer than this library's.
    """
    chosen = os.fspath(target) if target is not None else default_store()
    if chosen.startswith(_POSTGRES_SCHEMES):
        try:
            # Imported only here: psycopg is needed for PostgreSQL alone.
            postgres = importlib.import_module(".postgres", __package__)
        except ImportError as exc:
            raise StoreError(
                f"cannot open a PostgreSQL store: {exc} (install psycopg: "
                "pip install 'psycopg[binary]')"
            ) from exc
        opened: Store = await postgres.PostgresStore.open(chosen)
        return opened

    from .sqlite import SqliteStore

    if Path(chosen) == default_store_path():
        folder = Path(chosen).parent  # the user's data folder: made on first use
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot open the store {chosen}: {exc.strerror or exc}") from exc
    return await SqliteStore.open(chosen)
