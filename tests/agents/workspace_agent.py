"""A scripted agent that changes the workspace itself, as real agents do: with its own file
tools, shell commands, renames and links, not through the client's ``fs/*`` (standard
library only).

    python workspace_agent.py

It speaks ACP v1 as the official Python SDK's agents do (it was one, and writes the same
messages, through ``stdio_rpc.py`` beside it), and loads a session of its earlier process
(with no history to replay). A prompt's first word names what it does
(``PATTERNS``), every turn ends ``end_turn``; paths are under the session's folder:

- ``self-write``: writes new.txt and rewrites existing.txt on the disk itself, and only
  then sends its tool call (pending, then completed) with diffs that report the edit (a
  whole new file, a fragment of the other);
- ``shell-change``: runs a shell line itself (``sh -c``) that creates made.txt and rewrites
  existing.txt, and reports no tool call at all;
- ``kinds``: deletes gone.txt (and reports that one as a ``delete`` tool call), renames
  a.txt to b.txt, makes tool.sh executable, writes the binary logo.bin and the large
  big.log (200 KiB), makes the link ``link`` to existing.txt; the rest reported by no tool
  call;
- ``edit-top``: rewrites the first line of notes.txt itself, and reports it as an edit
  tool call with the fragment;
- ``make-sub``: writes sub/made.txt itself and existing.txt through the client
  (``fs/write_text_file``), one edit tool call for both;
- ``swap-links OUTSIDE``: replaces the folder sub with a link to the folder OUTSIDE, and
  existing.txt with a link to OUTSIDE/secret.txt (what a hostile agent does after a turn);
- anything else: says hi.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stdio_rpc import (
    Connection,
    Params,
    answer_initialize,
    diff,
    prompt_text,
    string,
    text_chunk,
    tool_call,
    tool_call_update,
)

SESSION = "workspace-session"
PATTERNS = ("self-write", "shell-change", "kinds", "edit-top", "make-sub", "swap-links")
EXISTING_AFTER = "alpha\nBETA\n"
NOTES_TOP = "the first line, rewritten\n"
BIG_LINE = "a long line of a large log file, written by the agent\n"
LOGO = bytes(range(256)) * 4
#: What the agent waits before it reports what it did itself: a real agent's file tool
#: returns before the agent sends its tool call.
SLOW = 0.2


class WorkspaceAgent:
    """An agent that changes the files itself (see the module's docstring)."""

    def __init__(self) -> None:
        self.client = Connection()
        self.cwd = "."

    async def initialize(self, params: Params) -> dict[str, Any]:
        return answer_initialize("workspace-agent", "0.12.1", {"loadSession": True})

    async def new_session(self, params: Params) -> dict[str, Any]:
        self.cwd = string(params, "cwd")
        return {"sessionId": SESSION}

    async def load_session(self, params: Params) -> dict[str, Any]:
        """A session of an earlier process of this agent: it keeps no history to replay."""
        string(params, "sessionId")
        self.cwd = string(params, "cwd")
        return {}

    async def cancel(self, params: Params) -> None:
        pass

    async def prompt(self, params: Params) -> dict[str, Any]:
        words = prompt_text(params).split()
        if words and words[0] in PATTERNS:
            await getattr(self, words[0].replace("-", "_"))(*words[1:])
        await self.say("done" if words and words[0] in PATTERNS else "hi")
        return {"stopReason": "end_turn"}

    def serve(self) -> None:
        self.client.serve(
            {
                "initialize": self.initialize,
                "session/new": self.new_session,
                "session/load": self.load_session,
                "session/prompt": self.prompt,
            },
            {"session/cancel": self.cancel},
        )

    # --- helpers ------------------------------------------------------------------------------

    def path(self, name: str) -> str:
        return f"{self.cwd}/{name}"

    async def update(self, update: dict[str, Any]) -> None:
        await self.client.update(SESSION, update)

    async def say(self, words: str) -> None:
        await self.update(text_chunk(words))

    # --- the patterns -------------------------------------------------------------------------

    async def self_write(self) -> None:
        new, existing = self.path("new.txt"), self.path("existing.txt")
        Path(new).write_text("brand new\n", encoding="utf-8")
        Path(existing).write_text(EXISTING_AFTER, encoding="utf-8")
        await asyncio.sleep(SLOW)
        diffs = [diff(new, "brand new\n"), diff(existing, "BETA", "beta")]
        await self.update(
            tool_call("write-1", "Write files", kind="edit", status="pending", content=diffs)
        )
        await self.update(tool_call_update("write-1", status="completed", content=diffs))

    async def shell_change(self) -> None:
        script = (
            "printf 'made by a shell\\n' > made.txt && "
            "printf 'alpha\\nbeta\\ngamma\\n' > existing.txt"
        )
        subprocess.run(["sh", "-c", script], cwd=self.cwd, check=True)

    async def kinds(self) -> None:
        folder = Path(self.cwd)
        (folder / "gone.txt").unlink()
        (folder / "a.txt").rename(folder / "b.txt")
        os.chmod(folder / "tool.sh", 0o755)
        (folder / "logo.bin").write_bytes(LOGO)
        (folder / "big.log").write_text(BIG_LINE * 4000, encoding="utf-8")
        os.symlink("existing.txt", folder / "link")
        await asyncio.sleep(SLOW)
        await self.update(
            tool_call(
                "delete-1",
                "Delete gone.txt",
                kind="delete",
                status="completed",
                locations=[{"path": self.path("gone.txt")}],
            )
        )

    async def edit_top(self) -> None:
        notes = Path(self.path("notes.txt"))
        lines = notes.read_text(encoding="utf-8").splitlines(keepends=True)
        old = lines[0]
        notes.write_text(NOTES_TOP + "".join(lines[1:]), encoding="utf-8")
        await asyncio.sleep(SLOW)
        await self.update(
            tool_call(
                "top-1",
                "Edit notes.txt",
                kind="edit",
                status="completed",
                content=[diff(str(notes), NOTES_TOP, old)],
            )
        )

    async def make_sub(self) -> None:
        made, existing = self.path("sub/made.txt"), self.path("existing.txt")
        diffs = [diff(made, "made in sub\n"), diff(existing, "BETA", "beta")]
        await self.update(
            tool_call("sub-1", "Make sub", kind="edit", status="in_progress", content=diffs)
        )
        Path(made).parent.mkdir(exist_ok=True)
        Path(made).write_text("made in sub\n", encoding="utf-8")
        await self.client.request(
            "fs/write_text_file",
            {"sessionId": SESSION, "path": existing, "content": EXISTING_AFTER},
        )
        await self.update(tool_call_update("sub-1", status="completed", content=diffs))

    async def swap_links(self, outside: str) -> None:
        folder = Path(self.cwd)
        shutil.rmtree(folder / "sub")
        os.symlink(outside, folder / "sub")
        (folder / "existing.txt").unlink()
        os.symlink(os.path.join(outside, "secret.txt"), folder / "existing.txt")


if __name__ == "__main__":
    WorkspaceAgent().serve()
