"""The content-addressed object store that holds a workspace's checkpoints.

One SQLite file per workspace, in the library's own data folder (never in the workspace,
never the user's ``.git``): ``$ACP_ADAPTERS_CHECKPOINTS``, else ``checkpoints/`` of the
user's data folder (``platformdirs``: ``~/.local/share/acp-adapters/checkpoints`` on
Linux), the folder made ``0700`` and the files ``0600``: they hold what the workspace held.

* **blobs**: a file's bytes (or a link's target), named by their SHA-256 (hex): the name a
  user can check with ``sha256sum``. Kept zlib-compressed when that makes them smaller.
* **trees**: one folder of a checkpoint, its entries sorted by name (a file, a link or a
  folder, with its mode, size and object), named by the SHA-256 of their encoding. A folder
  that did not change between two checkpoints is the same tree: a checkpoint costs the
  folders that changed, not the workspace.
* **checkpoints**: the trees of the workspace's roots at one moment, with what was left out
  and why (the caps), named by their SHA-256 too.

SQLite (the standard library's ``sqlite3``) makes it atomic and shared: a checkpoint's
objects are written in one transaction, in WAL mode, so several processes that check the
same workspace share one store, and a process killed mid-write leaves it whole.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
import zlib
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..errors import CheckpointError

#: The environment variable naming the folder of the checkpoint stores.
CHECKPOINTS_ENV = "ACP_ADAPTERS_CHECKPOINTS"
#: The store's schema version.
SCHEMA_VERSION = 1
#: zlib's level for blobs: the fastest, as git's loose objects use by default.
_LEVEL = 1
#: How many trees are kept decoded in memory.
_TREE_CACHE = 4096

EntryKind = Literal["file", "link", "dir"]


def checkpoints_folder() -> Path:
    """Where the checkpoint stores are: ``$ACP_ADAPTERS_CHECKPOINTS``, else ``checkpoints``
    in the user's data folder."""
    named = os.environ.get(CHECKPOINTS_ENV)
    if named:
        return Path(named)
    import platformdirs

    return platformdirs.user_data_path("acp-adapters", appauthor=False) / "checkpoints"


def store_path(cwd: str | os.PathLike[str], folder: Path | None = None) -> Path:
    """The store file of the workspace whose folder is ``cwd`` (its real path names it)."""
    real = os.path.realpath(cwd)
    key = hashlib.sha256(os.fsencode(real)).hexdigest()[:20]
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in os.path.basename(real))
    return (folder or checkpoints_folder()) / f"{stem[:40] or 'root'}-{key}.db"


def blob_id(data: bytes) -> str:
    """The name of a blob: the SHA-256 of its bytes, in hex."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class TreeEntry:
    """One entry of a folder in a checkpoint.

    ``oid`` is the blob of a file or a link's target, or the tree of a folder; None for a
    file that was not hashed (``omitted`` ``unhashed``: over the hash limit, judged by its
    size and times). ``stored``: the blob is in the store (a file over the size cap, or past
    the checkpoint's total cap, is recorded by size and hash only: ``omitted`` says which).
    """

    name: str
    kind: EntryKind
    mode: int
    oid: str | None
    size: int = 0
    stored: bool = True
    omitted: str | None = None

    def encoded(self) -> list[Any]:
        return [self.name, self.kind, self.mode, self.oid, self.size, self.stored, self.omitted]

    @classmethod
    def decoded(cls, value: Sequence[Any]) -> TreeEntry:
        name, kind, mode, oid, size, stored, omitted = value
        return cls(str(name), kind, int(mode), oid, int(size), bool(stored), omitted)


def tree_bytes(entries: Iterable[TreeEntry]) -> bytes:
    """A tree's encoding (its entries in name order), as its name is computed from."""
    ordered = sorted(entries, key=lambda entry: entry.name)
    return json.dumps([e.encoded() for e in ordered], separators=(",", ":")).encode("utf-8")


def tree_id(encoded: bytes) -> str:
    return hashlib.sha256(b"tree\n" + encoded).hexdigest()


@dataclass(frozen=True)
class CheckpointRecord:
    """A checkpoint as the store keeps it: its roots' trees, when, and what was left out."""

    id: str
    created_at: float
    roots: tuple[tuple[str, str], ...]
    files: int
    notes: tuple[str, ...] = ()

    def encoded(self) -> bytes:
        return json.dumps(
            {
                "roots": [list(root) for root in self.roots],
                "files": self.files,
                "notes": list(self.notes),
            },
            separators=(",", ":"),
            sort_keys=True,
        ).encode("utf-8")


def checkpoint_id(roots: Sequence[tuple[str, str]], files: int, notes: Sequence[str]) -> str:
    record = CheckpointRecord("", 0.0, tuple(roots), files, tuple(notes))
    return hashlib.sha256(b"checkpoint\n" + record.encoded()).hexdigest()


_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS objects (oid TEXT PRIMARY KEY, kind TEXT NOT NULL, "
    "size INTEGER NOT NULL, packed INTEGER NOT NULL, data BLOB NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS checkpoints (id TEXT PRIMARY KEY, created_at REAL NOT NULL, "
    "data TEXT NOT NULL)",
)


class ObjectStore:
    """One workspace's checkpoint store (see the module's docstring). Thread-safe: its one
    connection is used under a lock, from whatever worker thread calls it."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not self.path.exists():
                # Made 0600 before SQLite opens it: the store holds what the workspace held.
                os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600))
            self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30.0)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            with self._db:
                for statement in _SCHEMA:
                    self._db.execute(statement)
                self._db.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
                    (str(SCHEMA_VERSION),),
                )
        except (OSError, sqlite3.Error) as error:
            raise CheckpointError(
                f"cannot open the checkpoint store {self.path}: {error}"
            ) from error
        self._lock = threading.Lock()
        self._trees: OrderedDict[str, tuple[TreeEntry, ...]] = OrderedDict()
        self._pending: dict[str, tuple[str, int, int, bytes]] = {}
        self._known: set[str] = set()

    @classmethod
    def for_workspace(cls, cwd: str | os.PathLike[str], folder: Path | None = None) -> ObjectStore:
        return cls(store_path(cwd, folder))

    def close(self) -> None:
        with self._lock, contextlib.suppress(sqlite3.Error):
            self._db.close()

    # --- writing ------------------------------------------------------------------------

    def has(self, oid: str) -> bool:
        if oid in self._known or oid in self._pending:
            return True
        with self._lock:
            row = self._db.execute("SELECT 1 FROM objects WHERE oid = ?", (oid,)).fetchone()
        if row is not None:
            self._known.add(oid)
        return row is not None

    def add_blob(self, data: bytes, oid: str | None = None) -> str:
        """Keep ``data`` (written at the next :meth:`flush`); its name."""
        oid = oid or blob_id(data)
        if not self.has(oid):
            self._pending[oid] = self._packed("blob", data)
        return oid

    def add_tree(self, entries: Iterable[TreeEntry]) -> str:
        encoded = tree_bytes(entries)
        oid = tree_id(encoded)
        if not self.has(oid):
            self._pending[oid] = self._packed("tree", encoded)
        return oid

    @staticmethod
    def _packed(kind: str, data: bytes) -> tuple[str, int, int, bytes]:
        squeezed = zlib.compress(data, _LEVEL) if len(data) > 64 else data
        if len(squeezed) < len(data):
            return kind, len(data), 1, squeezed
        return kind, len(data), 0, data

    def flush(
        self, record: CheckpointRecord | None = None, meta: dict[str, str] | None = None
    ) -> None:
        """Write what was added (and a checkpoint record, and meta values) in one transaction."""
        if record is not None and record.id in self._known:
            record = None  # the same checkpoint as one written before: its first time stays
        if not self._pending and record is None and not meta:
            return
        rows = [(oid, *row) for oid, row in self._pending.items()]
        try:
            with self._lock, self._db:
                self._db.executemany(
                    "INSERT OR IGNORE INTO objects (oid, kind, size, packed, data) "
                    "VALUES (?, ?, ?, ?, ?)",
                    rows,
                )
                if record is not None:
                    self._db.execute(
                        "INSERT OR IGNORE INTO checkpoints (id, created_at, data) VALUES (?, ?, ?)",
                        (record.id, record.created_at, record.encoded().decode("utf-8")),
                    )
                for key, value in (meta or {}).items():
                    self._db.execute(
                        "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value)
                    )
        except sqlite3.Error as error:
            raise CheckpointError(
                f"cannot write the checkpoint store {self.path}: {error}"
            ) from error
        self._known.update(self._pending)
        if record is not None:
            self._known.add(record.id)
        self._pending.clear()

    # --- reading ------------------------------------------------------------------------

    def get(self, oid: str) -> bytes | None:
        """The bytes of an object; None when the store does not hold it."""
        pending = self._pending.get(oid)
        if pending is not None:
            _, _, packed, data = pending
            return zlib.decompress(data) if packed else data
        with self._lock:
            row = self._db.execute(
                "SELECT packed, data FROM objects WHERE oid = ?", (oid,)
            ).fetchone()
        if row is None:
            return None
        packed, data = row
        return zlib.decompress(data) if packed else bytes(data)

    def tree(self, oid: str) -> tuple[TreeEntry, ...]:
        """The entries of a tree, by name.

        :raises CheckpointError: the store does not hold it.
        """
        cached = self._trees.get(oid)
        if cached is not None:
            self._trees.move_to_end(oid)
            return cached
        data = self.get(oid)
        if data is None:
            raise CheckpointError(f"the checkpoint store {self.path} has no tree {oid}")
        entries = tuple(TreeEntry.decoded(value) for value in json.loads(data))
        self._trees[oid] = entries
        if len(self._trees) > _TREE_CACHE:
            self._trees.popitem(last=False)
        return entries

    def checkpoint(self, checkpoint_id: str) -> CheckpointRecord:
        """:raises CheckpointError: the store holds no such checkpoint."""
        with self._lock:
            row = self._db.execute(
                "SELECT created_at, data FROM checkpoints WHERE id = ?", (checkpoint_id,)
            ).fetchone()
        if row is None:
            raise CheckpointError(
                f"the checkpoint store {self.path} has no checkpoint {checkpoint_id}"
            )
        data = json.loads(row[1])
        return CheckpointRecord(
            checkpoint_id,
            float(row[0]),
            tuple((str(path), str(tree)) for path, tree in data["roots"]),
            int(data["files"]),
            tuple(str(note) for note in data["notes"]),
        )

    def checkpoints(self) -> list[CheckpointRecord]:
        """Every checkpoint the store holds, the newest first."""
        with self._lock:
            ids = [
                row[0]
                for row in self._db.execute("SELECT id FROM checkpoints ORDER BY created_at DESC")
            ]
        return [self.checkpoint(one) for one in ids]

    def meta(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])


__all__ = [
    "CHECKPOINTS_ENV",
    "CheckpointError",
    "CheckpointRecord",
    "ObjectStore",
    "TreeEntry",
    "blob_id",
    "checkpoint_id",
    "checkpoints_folder",
    "store_path",
    "tree_bytes",
    "tree_id",
]
