"""The store: threads, turns, the event log and the timeline items of sessions, kept on disk
(SQLite, the embedded default) or in PostgreSQL (see :mod:`.base`)."""

from __future__ import annotations

from .base import (
    SCHEMA_VERSION,
    Commit,
    QueuedPrompt,
    Store,
    StoredEvent,
    StoreError,
    Thread,
    ThreadNotFound,
    Turn,
    TurnStatus,
)

__all__ = [
    "SCHEMA_VERSION",
    "Commit",
    "QueuedPrompt",
    "Store",
    "StoreError",
    "StoredEvent",
    "Thread",
    "ThreadNotFound",
    "Turn",
    "TurnStatus",
]
