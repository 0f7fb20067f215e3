"""Permission rules in live sessions: which requests of scripted agents the rules allow,
reject or ask about, by their true patches, their real paths and their command lines."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_adapters import ApprovalRequestItem, PermissionQuery, Policy

from .conftest import fake_agent

pytestmark = pytest.mark.anyio

AGENTS = Path(__file__).parent.parent / "agents"
SDK_AGENT = [sys.executable, str(AGENTS / "sdk_agent.py")]
OPTIONS = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "deny", "name": "Deny", "kind": "reject_once"},
]
SMALL_TEXT_EDITS = {"decision": "allow", "kinds": ["edit"], "paths": ["*.txt"], "max_lines": 20}


class Asker:
    """The application: it writes down each question and allows, or refuses, all of them."""

    def __init__(self, allow: bool = False) -> None:
        self.asked: list[PermissionQuery] = []
        self.allow = allow

    async def __call__(self, query: PermissionQuery) -> str:
        self.asked.append(query)
        kind = "allow_once" if self.allow else "reject_once"
        return next(str(o["optionId"]) for o in query.options if o["kind"] == kind)


def terminal_agent(workspace: Path, *steps: dict[str, Any]) -> list[str]:
    return [
        sys.executable,
        str(AGENTS / "terminal_agent.py"),
        json.dumps(list(steps)),
        str(workspace),
    ]


def answers(workspace: Path) -> dict[str, Any]:
    lines = (workspace / "answers.jsonl").read_text().splitlines()
    return {r["name"]: r["answer"] for r in map(json.loads, lines)}


def approvals(items: Any) -> list[str | None]:
    return [i.option_kind for i in items if isinstance(i, ApprovalRequestItem)]


async def test_a_small_edit_is_allowed_and_a_rewrite_asked(connect: Any, workspace: Path) -> None:
    ask = Asker()
    policy = Policy(name="ask", rules=[SMALL_TEXT_EDITS])
    async with connect(command=SDK_AGENT, cwd=workspace, policy=policy, ask=ask) as session:
        small = await session.prompt("change")
        assert ask.asked == []  # the permission and the write: both by the rule
        assert (workspace / "existing.txt").read_text() == "alpha\nBETA changed\n"
        assert approvals(small.items) == ["allow_once"]
        await session.prompt("rewrite")
    (question,) = ask.asked
    assert question.action is None
    assert (question.additions, question.deletions) == (600, 0)
    assert not (workspace / "big.txt").exists()  # refused when asked


async def test_a_rewrite_past_the_cap_has_no_size_and_is_asked(
    connect: Any, workspace: Path
) -> None:
    before = "".join(f"row {n} of the old file\n" for n in range(600))
    (workspace / "big.txt").write_text(before)
    ask = Asker()
    policy = Policy(name="ask", rules=[{**SMALL_TEXT_EDITS, "max_lines": 10**6}])
    async with connect(command=SDK_AGENT, cwd=workspace, policy=policy, ask=ask) as session:
        await session.prompt("rewrite")
    (question,) = ask.asked
    assert question.patch is None  # 1200 line edits: no patch, so no size to match
    assert (workspace / "big.txt").read_text() == before


@pytest.mark.parametrize(
    ("globs", "prompt", "allowed"),
    [
        (["src/**"], "write", False),
        (["*.txt"], "write", True),
        (["new.txt"], "patch", False),  # existing.txt is not in the globs
        (["new.txt", "existing.txt"], "patch", True),
        (["**"], "patch", True),
    ],
)
async def test_every_path_must_match_a_glob(
    connect: Any, workspace: Path, globs: list[str], prompt: str, allowed: bool
) -> None:
    ask = Asker()
    policy = Policy(name="ask", rules=[{"decision": "allow", "kinds": ["edit"], "paths": globs}])
    async with connect(command=SDK_AGENT, cwd=workspace, policy=policy, ask=ask) as session:
        turn = await session.prompt(prompt)
    assert (workspace / "new.txt").exists() is allowed
    assert len(ask.asked) == (0 if allowed else 1)
    assert approvals(turn.items) == ["allow_once" if allowed else "reject_once"]


@pytest.mark.parametrize(
    ("rules", "changed"),
    [
        (
            [
                {"decision": "reject", "paths": ["existing.txt"]},
                {"decision": "allow", "paths": ["*.txt"]},
            ],
            False,
        ),
        (
            [
                {"decision": "allow", "paths": ["*.txt"]},
                {"decision": "reject", "paths": ["existing.txt"]},
            ],
            True,
        ),
    ],
)
async def test_the_first_matching_rule_wins(
    connect: Any, workspace: Path, rules: list[dict[str, Any]], changed: bool
) -> None:
    ask = Asker(allow=True)
    policy = Policy(name="ask", rules=rules)
    async with connect(command=SDK_AGENT, cwd=workspace, policy=policy, ask=ask) as session:
        turn = await session.prompt("change")
    assert ask.asked == []
    assert ((workspace / "existing.txt").read_text() == "alpha\nBETA changed\n") is changed
    assert approvals(turn.items) == ["allow_once" if changed else "reject_once"]


def _permission(name: str, call_id: str, command: str) -> dict[str, Any]:
    call = {"toolCallId": call_id, "title": command, "kind": "execute", "status": "pending"}
    return {
        "name": name,
        "method": "session/request_permission",
        "params": {"toolCall": {**call, "rawInput": {"command": command}}, "options": OPTIONS},
    }


def _create(name: str, command: str, *args: str) -> dict[str, Any]:
    params: dict[str, Any] = {"command": command, **({"args": list(args)} if args else {})}
    return {"name": name, "method": "terminal/create", "params": params}


async def test_a_command_glob_allows_echo_and_nothing_else(connect: Any, workspace: Path) -> None:
    agent = terminal_agent(
        workspace,
        _permission("echo-asked", "run-1", "echo from the tool"),
        _permission("rm-asked", "run-2", "rm -rf build"),
        _create("echo", "echo", "hi"),
        _create("ls", "ls"),
        _create("chained", f"echo hi; touch {workspace}/pwned"),
    )
    ask = Asker()
    policy = Policy(name="ask", rules=[{"decision": "allow", "command": ["echo *"]}])
    async with connect(command=agent, cwd=workspace, policy=policy, ask=ask) as session:
        await session.prompt("go")
    said = answers(workspace)
    assert said["echo-asked"]["result"]["outcome"] == {"outcome": "selected", "optionId": "allow"}
    assert said["rm-asked"]["result"]["outcome"] == {"outcome": "selected", "optionId": "deny"}
    assert "terminalId" in said["echo"]["result"]
    assert "error" in said["ls"]
    assert "error" in said["chained"]
    assert not (workspace / "pwned").exists()
    questions = [
        q.action.command_line if q.action else q.tool_call.raw_input["command"]  # type: ignore[union-attr]
        for q in ask.asked
    ]
    assert questions == ["rm -rf build", "ls", f"echo hi; touch {workspace}/pwned"]


async def test_rules_come_before_every_policy(connect: Any, workspace: Path) -> None:
    # read-only refuses every edit; the rule allows this one, without any ask callback.
    policy = Policy(name="read-only", rules=[SMALL_TEXT_EDITS])
    async with connect(command=SDK_AGENT, cwd=workspace, policy=policy) as session:
        await session.prompt("change")
        await session.prompt("rewrite")  # no rule matches: read-only refuses it
    assert (workspace / "existing.txt").read_text() == "alpha\nBETA changed\n"
    assert not (workspace / "big.txt").exists()
    # full-access runs every command; the rule asks about them.
    ask = Asker(allow=True)
    asking = Policy(name="full-access", rules=[{"decision": "ask", "kinds": ["execute"]}])
    async with connect(command=SDK_AGENT, cwd=workspace, policy=asking, ask=ask) as session:
        await session.prompt("shell")
    (question,) = ask.asked
    assert question.action is not None
    assert question.action.command_line == "echo hello from the shell && cat existing.txt"


async def test_an_edit_allowed_when_asked_is_not_asked_again_for_its_write(
    connect: Any, workspace: Path
) -> None:
    ask = Asker(allow=True)
    policy = Policy(name="full-access", rules=[{"decision": "ask", "kinds": ["edit"]}])
    async with connect(command=SDK_AGENT, cwd=workspace, policy=policy, ask=ask) as session:
        await session.prompt("change")
    (question,) = ask.asked
    assert question.action is None  # the permission request; its write was not asked
    assert (workspace / "existing.txt").read_text() == "alpha\nBETA changed\n"


async def test_no_rule_lets_a_write_out_of_the_folders(
    connect: Any, workspace: Path, tmp_path: Path
) -> None:
    # The fake agent writes existing.txt and new.txt, then ../escaped.txt.
    policy = Policy(name="ask", rules=[{"decision": "allow"}])
    async with connect(
        command=fake_agent("edit", str(workspace)), cwd=workspace, policy=policy
    ) as session:
        turn = await session.prompt("edit")
    said = "".join(i.text for i in turn.items if i.kind == "assistant_message")  # type: ignore[union-attr]
    assert "escape refused" in said
    assert not (workspace.parent / "escaped.txt").exists()
    assert (workspace / "new.txt").read_text() == "brand new\n"
    # A symlink that leads out, and an edit of a file outside: not through "/**" either.
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "out").symlink_to(outside)
    agent = terminal_agent(
        workspace,
        {
            "name": "through-link",
            "method": "fs/write_text_file",
            "params": {"path": f"{workspace}/out/x.txt", "content": "x"},
        },
        {
            "name": "edit-outside",
            "method": "session/request_permission",
            "params": {
                "toolCall": {
                    "toolCallId": "edit-9",
                    "kind": "edit",
                    "locations": [{"path": f"{outside}/y.txt"}],
                },
                "options": OPTIONS,
            },
        },
    )
    everything = Policy(name="ask", rules=[{"decision": "allow", "paths": ["/**"]}])
    async with connect(command=agent, cwd=workspace, policy=everything) as session:
        await session.prompt("go")
    said_to = answers(workspace)
    assert "error" in said_to["through-link"]
    assert list(outside.iterdir()) == []
    # Not allowed by the rule: the policy asks, and with no one to ask it is refused.
    assert said_to["edit-outside"]["result"]["outcome"] == {"outcome": "cancelled"}
