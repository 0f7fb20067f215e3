"""Opening a store: a path is a SQLite file, a ``postgresql://`` URL a PostgreSQL database."""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import urllib.parse
from pathlib import Path

from .base import Store, StoreError, StoreNotFound

#: The environment variable naming the default store (a path or a URL).
STORE_ENV = "ACP_ADAPTERS_STORE"

_POSTGRES_SCHEMES = ("postgresql://", "postgres://")
#: What starts a URL (``mysql://``): a scheme of two characters at least, so that a
#: Windows drive (``C:/``) is a path.
_URL = re.compile(r"([A-Za-z][A-Za-z0-9+.-]+)://")


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


async def open_store(target: str | os.PathLike[str] | None = None, *, create: bool = True) -> Store:
    """Open a store (creating it, or migrating an older one to this library's schema).

    :param target: a SQLite file's path (or a SQLite ``file:`` URI); a ``postgresql://`` (or
        ``postgres://``) URL; None for ``$ACP_ADAPTERS_STORE``, else a SQLite file in the
        user's data folder (created with its folder when missing; the folder is kept
        private to its user, 0700). A new SQLite file is created 0600.
    :param create: make the store when there is none; ``False`` (what reads and changes no
        store's existence: listing, showing, exporting) raises :class:`StoreNotFound`
        instead, and creates nothing, not even the default folder.
    :raises StoreError: it cannot be opened or written (the path or URL, and why), its URL
        is of a scheme no backend takes, or its schema is newer than this library's.
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
        opened: Store = await postgres.PostgresStore.open(chosen, create=create)
        return opened
    scheme = _URL.match(chosen)
    if scheme is not None and scheme.group(1).lower() != "file":
        # Not a path with "://" in it: what was meant is a database this library has no
        # backend for, and SQLite would say only that a folder does not exist.
        raise StoreError(
            f"cannot open the store {redact(chosen)}: {scheme.group(1)}:// is not a store "
            "this library opens; a store is a SQLite file (its path) or a PostgreSQL "
            "database (postgresql://...)"
        )

    from .sqlite import SqliteStore

    if Path(chosen) == default_store_path():
        folder = Path(chosen).parent  # the user's data folder: made on first use
        if not create and not folder.is_dir():
            raise StoreNotFound(f"no store at {chosen}: none was made yet")
        try:
            _private_folder(folder, create)
        except OSError as exc:
            raise StoreError(f"cannot open the store {chosen}: {exc.strerror or exc}") from exc
    return await SqliteStore.open(chosen, create=create)


def _private_folder(folder: Path, create: bool) -> None:
    """The default store's folder, made when missing, private to its user (0700): the
    sessions it holds are the user's alone. It is this library's folder, so an older one
    (made 0755) is made private too; a folder the user names is never changed."""
    if create:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    # Only its own user may change it; another's (a shared data folder) is left as it is.
    with contextlib.suppress(PermissionError):
        if folder.stat().st_mode & 0o077:
            folder.chmod(0o700)
