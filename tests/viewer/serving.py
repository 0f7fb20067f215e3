"""What the viewer's tests share: a store filled by the fake agent or with hostile text, and
``acp-adapters serve`` started on it."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio

import acp_adapters
from acp_adapters.store.base import Commit, Turn
from acp_adapters.store.open import open_store

ROOT = Path(__file__).resolve().parents[2]
FAKE = ROOT / "tests" / "agents" / "fake_agent.py"
ASSETS = ROOT / "framework" / "acp_adapters" / "viewer" / "assets"

#: Texts that would run script where put in a page as markup (each sets ``window.pwned``).
HOSTILE = [
    "<script>window.pwned=1</script>",
    '"><img src=x onerror="window.pwned=2">',
    "javascript:window.pwned=3",
]


def edit_turn(path: Path, workspace: Path, prompt: str) -> None:
    async def turn() -> None:
        async with acp_adapters.connect(
            command=[sys.executable, str(FAKE), "edit", str(workspace)],
            cwd=workspace,
            policy="full-access",
            store=path,
            thread="t",
        ) as session:
            await session.prompt(prompt)

    anyio.run(turn)


def stored(path: Path, name: str = "t") -> tuple[str, list[dict[str, Any]]]:
    async def read() -> tuple[str, list[dict[str, Any]]]:
        async with await open_store(path, create=False) as store:
            thread = await store.thread_named(name)
            assert thread is not None
            return thread.id, await store.items(thread.id)

    return anyio.run(read)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def command(store: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "acp_adapters", "serve", "--store", str(store), *args]


@contextmanager
def served(store: Path) -> Iterator[int]:
    port = free_port()
    process = subprocess.Popen(
        command(store, "--port", str(port)),
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, f"the server exited with {process.returncode}"
            assert time.monotonic() < deadline, "the server did not listen"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def hostile_store(path: Path) -> str:
    async def fill() -> str:
        async with await open_store(path) as store:
            thread = await store.create_thread(
                provider=HOSTILE[0], cwd="/work/" + HOSTILE[1], name="h", title=HOSTILE[0]
            )
            patch = (
                f"--- {HOSTILE[1]}\n+++ {HOSTILE[1]}\n@@ -1,1 +1,1 @@\n"
                f"-{HOSTILE[2]}\n+{HOSTILE[0]}\n"
            )
            await store.commit(
                thread.id,
                Commit(
                    items=[
                        {"id": "u", "ordinal": 1, "kind": "user_message", "text": HOSTILE[0]},
                        {
                            "id": "a",
                            "ordinal": 2,
                            "kind": "assistant_message",
                            "text": " ".join(HOSTILE),
                        },
                        {
                            "id": "f",
                            "ordinal": 3,
                            "kind": "file_change",
                            "title": HOSTILE[2],
                            "paths": [HOSTILE[1]],
                            "operations": {HOSTILE[1]: "modify"},
                            "diff_str": patch,
                            "additions": 1,
                            "deletions": 1,
                        },
                    ],
                    turns=[Turn(thread.id, 1, status="completed")],
                ),
            )
            return thread.id

    return anyio.run(fill)


@contextmanager
def served_with_prompts(store: Path) -> Iterator[tuple[int, str]]:
    """``acp-adapters serve --allow-prompts`` on ``store``: its port and the token it printed."""
    port = free_port()
    process = subprocess.Popen(
        command(store, "--port", str(port), "--allow-prompts"),
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    try:
        lines = [process.stderr.readline(), process.stderr.readline()]
        assert lines[0].startswith(f"Serving the threads at http://127.0.0.1:{port}/"), lines
        said = "Prompts are allowed with this run's token: "
        assert lines[1].startswith(said), lines
        yield port, lines[1][len(said) :].strip()
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stderr.close()
