"""Helpers the live-session tests share: a turn cancelled while permission is being asked."""

from __future__ import annotations

from typing import Any

import anyio

from acp_adapters import PermissionDecision, PermissionQuery
from acp_adapters.client import Session, Turn


def ask_forever() -> tuple[anyio.Event, Any]:
    """An ``ask`` callback that never answers, and the event it sets when it is asked."""
    asked = anyio.Event()

    async def ask(query: PermissionQuery) -> PermissionDecision:
        asked.set()
        await anyio.sleep_forever()
        raise AssertionError("not reached")

    return asked, ask


async def prompt_cancelled_when_asked(session: Session, prompt: str, asked: anyio.Event) -> Turn:
    """Send ``prompt``; once the application is asked permission, cancel. The turn."""
    turns: list[Turn] = []
    async with anyio.create_task_group() as task_group:

        async def run() -> None:
            turns.append(await session.prompt(prompt))

        task_group.start_soon(run)
        await asked.wait()
        await session.cancel()
    (turn,) = turns
    return turn
