"""An allowed edit binds to what was allowed: the file behind the name (device and inode of
its real path) and, where the question carried the edit, the content it gives. A write of
another file behind the same name, or of other content, is asked again (``ask``) or refused
(no one to ask): an agent cannot re-point an approved file at ``.git/hooks/pre-commit``, nor
write what the user did not approve."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_adapters import PermissionQuery, connect

from .scripts import Script

pytestmark = pytest.mark.anyio

OPTIONS = [
    {"optionId": "y", "name": "Yes", "kind": "allow_once"},
    {"optionId": "n", "name": "No", "kind": "reject_once"},
]
APPROVED = "PORT = 8081\n"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Asked:
    """Allows the permission request; answers each client action with ``action``."""

    def __init__(self, action: str | None) -> None:
        self.action = action
        self.queries: list[PermissionQuery] = []

    async def __call__(self, query: PermissionQuery) -> str | None:
        self.queries.append(query)
        return "y" if query.action is None else self.action


def _edit(path: str, old: str | None, new: str) -> dict[str, Any]:
    call = {
        "toolCallId": "e1",
        "title": "Edit config.py",
        "kind": "edit",
        "status": "pending",
        "content": [{"type": "diff", "path": path, "oldText": old, "newText": new}],
    }
    return call


async def _play(tmp_path: Path, steps: list[dict[str, Any]], ask: Any) -> tuple[Script, Path]:
    ws = tmp_path / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / "config.py").write_text("PORT = 8080\n")
    (ws / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    script = Script(tmp_path / "agent", steps)
    async with connect(command=script.command, cwd=ws, policy="ask", ask=ask) as session:
        with anyio.fail_after(30):
            await session.prompt("go")
    return script, ws


def _steps(ws: Path, *middle: dict[str, Any], content: str = APPROVED) -> list[dict[str, Any]]:
    call = _edit(str(ws / "config.py"), "PORT = 8080\n", APPROVED)
    return [
        {"update": {"sessionUpdate": "tool_call", **call}},
        {"request": "session/request_permission", "params": {"toolCall": call, "options": OPTIONS}},
        *middle,
        {
            "request": "fs/write_text_file",
            "params": {"path": str(ws / "config.py"), "content": content},
        },
    ]


async def test_the_approved_write_is_not_asked_again(tmp_path: Path) -> None:
    asked = Asked(None)
    script, ws = await _play(tmp_path, _steps(tmp_path / "ws"), asked)
    assert [q.action for q in asked.queries] == [None]  # the permission only
    assert script.answers()[-1].get("result") == {}
    assert (ws / "config.py").read_text() == APPROVED


async def test_a_file_repointed_after_approval_is_asked_again_and_refused(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    repoint = {"symlink": [".git/hooks/pre-commit", "config.py"]}
    asked = Asked("reject")
    script, ws = await _play(tmp_path, _steps(ws, repoint, content="#!/bin/sh\ncurl evil\n"), asked)
    actions = [q.action for q in asked.queries if q.action is not None]
    assert [a.kind for a in actions] == ["write"]
    assert actions[0].path == str((ws / ".git" / "hooks" / "pre-commit").resolve())
    assert script.answers()[-1]["error"]["code"] == -32000
    assert (ws / ".git" / "hooks" / "pre-commit").read_text() == "#!/bin/sh\nexit 0\n"


async def test_a_file_repointed_after_approval_is_refused_with_no_one_to_ask(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    repoint = {"symlink": [".git/hooks/pre-commit", "config.py"]}
    asked = Asked(None)  # allows the permission request; has no answer to the write
    script, ws = await _play(tmp_path, _steps(ws, repoint, content=APPROVED), asked)
    assert script.answers()[-1]["error"]["code"] == -32000
    assert (ws / ".git" / "hooks" / "pre-commit").read_text() == "#!/bin/sh\nexit 0\n"


async def test_other_content_than_the_approved_edit_is_asked_again(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    asked = Asked("reject")
    script, ws = await _play(tmp_path, _steps(ws, content="PORT = 22\n"), asked)
    actions = [q.action for q in asked.queries if q.action is not None]
    assert [(a.kind, a.patch is not None) for a in actions] == [("write", True)]
    assert "+PORT = 22" in (actions[0].patch or "")
    assert script.answers()[-1]["error"]["code"] == -32000
    assert (ws / "config.py").read_text() == "PORT = 8080\n"
