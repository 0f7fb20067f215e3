"""Workers: processes, on one machine or several, that run the threads of a shared store.

A worker takes a thread that has queued prompts and no live owner
(:meth:`~acp_adapters.store.Store.claim_thread`), starts the thread's agent as the thread
records it, runs the thread's queue in order, keeps the agent for a while in case more
comes, then lets the thread go (see docs/workers.md and :mod:`.pool`).
"""

from __future__ import annotations

from .pool import (
    DEFAULT_CONCURRENCY,
    DEFAULT_GRACE,
    DEFAULT_IDLE,
    Worker,
    WorkerCounts,
    run_worker,
)

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_GRACE",
    "DEFAULT_IDLE",
    "Worker",
    "WorkerCounts",
    "run_worker",
]
