"""The store: threads, turns, the event log and the timeline items of sessions, kept on disk
(SQLite, the embedded default) or in PostgreSQL (see :mod:`.base`)."""

from __future__ import annotations

from .base import (
    LEASE_SECONDS,
    OWNER_LOST,
    SCHEMA_VERSION,
    Commit,
    EncodedEvent,
    Lease,
    Owner,
    PromptState,
    QueuedPrompt,
    Store,
    StoredEvent,
    StoreError,
    Thread,
    ThreadBusy,
    ThreadNotFound,
    Turn,
    TurnStatus,
    encoded_event,
)
from .open import STORE_ENV, default_store, default_store_path, open_store
from .rebuild import check_thread, rebuild_items
from .sqlite import SqliteStore

__all__ = [
    "LEASE_SECONDS",
    "OWNER_LOST",
    "SCHEMA_VERSION",
    "STORE_ENV",
    "Commit",
    "EncodedEvent",
    "Lease",
    "Owner",
    "PromptState",
    "QueuedPrompt",
    "SqliteStore",
    "Store",
    "StoreError",
    "StoredEvent",
    "Thread",
    "ThreadBusy",
    "ThreadNotFound",
    "Turn",
    "TurnStatus",
    "check_thread",
    "default_store",
    "default_store_path",
    "encoded_event",
    "open_store",
    "rebuild_items",
]
