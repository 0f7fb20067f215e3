"""Record the contract scenarios with the real agents, offline, as captures for the tests.

    python tests/peers/record_scenarios.py [--agents BIN] [--out DIR] [--only WORDS]

Runs each scenario (``RECORDINGS``) through ``acp_adapters.connect(record=...)``
against claude-agent-acp (as v1 and as v2), codex-acp and Grok Build, the model
played by the fake model server on 127.0.0.1, and against the scripted agent built
on the official Python SDK (``tests/agents/sdk_agent.py``, the generic provider).
Writes ``DIR/<agent>-<scenario>.jsonl`` and, beside it, ``.files.json``: the
workspace before and after, for the contract suite's patch checks. ``BIN`` is
the agents' ``node_modules/.bin`` (default: ``$ACP_ADAPTERS_PEER_AGENTS``, as
``tox -e peers`` installs them). ``tox -e record`` runs it into ``tests/data/recorded``.

``--only workspace`` records the scenarios of ``tests/agents/workspace_agent.py`` (an agent
that changes the workspace itself: ``tests/workspace_helpers.py``) into
``DIR/workspace-<scenario>.jsonl``, beside each its workspace before and after; no agent from
npm either.

``--only patterns`` records the traffic patterns of real agents that the scripted
``tests/agents/pattern_agent.py`` plays (``tests/pattern_helpers.py``), each answered
as its live test answers it, into ``DIR/patterns-<pattern>.jsonl``; they need no agent
from npm (``--agents`` may name any folder)::

    python tests/peers/record_scenarios.py --agents /nonexistent --only patterns
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import acp_adapters  # noqa: E402
from acp_adapters import PermissionQuery  # noqa: E402
from acp_adapters.transport import ConnectionClosed  # noqa: E402
from pattern_helpers import PATTERN_AGENT, PATTERNS  # noqa: E402
from peers import launch  # noqa: E402
from peers.fake_model_server import FakeModelServer, Step, Text, ToolCall, ToolCalls  # noqa: E402
from workspace_helpers import SCENARIOS, run_scenario, seed, snapshot  # noqa: E402

Agent = Literal["claude-v1", "claude-v2", "codex", "grok", "sdk", "patterns"]
Answer = Literal["allow", "reject", "wait", "crash"]
TURN_SECONDS = 90

EXISTING = "alpha\nbeta\n"
BIG = "".join(f"line {n} of the old file\n" for n in range(600))
REWRITTEN = "".join(f"row {n} of the new file\n" for n in range(600))
TODOS = [("Write the failing test", "completed"), ("Fix the parser", "in_progress")]


@dataclass(frozen=True)
class Recording:
    """One scenario as one agent plays it."""

    scenario: str
    agents: tuple[Agent, ...]
    prompts: tuple[str, ...]
    #: The model's steps for each prompt, given the workspace and the agent.
    turns: Callable[[Path, Agent], list[list[Step]]]
    files: dict[str, str] = field(default_factory=lambda: {"existing.txt": EXISTING})
    #: How the application answers permission requests; "crash" kills the agent instead.
    answer: Answer = "allow"
    #: The client's policy: "ask" puts every question to ``answer``.
    policy: Literal["ask", "full-access"] = "ask"
    #: Whether the client reads the files an edit names around it.
    disk_patches: bool = True


CLAUDE: tuple[Agent, ...] = ("claude-v1", "claude-v2")
ALL: tuple[Agent, ...] = (*CLAUDE, "codex", "grok", "sdk")
SDK_AGENT = HERE.parent / "agents" / "sdk_agent.py"
#: The scripted agent on the official Python SDK needs no model: its prompts are its script.
SDK_PROMPTS = {
    "write-approved": ("write",),
    "edit-existing": ("change",),
    "multi-file-patch": ("patch",),
    "capped-rewrite": ("rewrite",),
    "rejected-permission": ("write",),
    "cancelled-turn": ("wait",),
    "shell-command": ("shell",),
    "plan": ("plan",),
    "multi-turn": ("write", "change"),
    "crash-mid-turn": ("write",),
}


def _call(name: str, **arguments: Any) -> ToolCalls:
    """The model calls one tool (Claude's and Grok's take their arguments as they are)."""
    return ToolCalls([ToolCall(name, arguments)])


def _patch(body: str) -> ToolCalls:
    """Codex runs apply_patch when the model calls it through exec_command."""
    return _exec(f"apply_patch <<'EOF'\n*** Begin Patch\n{body}*** End Patch\nEOF\n")


def _exec(command: str) -> ToolCalls:
    return ToolCalls([ToolCall("exec_command", {"cmd": command})])


def _plus(text: str) -> str:
    return "".join(f"+{line}\n" for line in text.splitlines())


def write(ws: Path, agent: Agent) -> list[list[Step]]:
    if agent == "codex":
        return [[_patch(f"*** Add File: new.txt\n{_plus('brand new')}"), Text("wrote new.txt")]]
    tool = "write" if agent == "grok" else "Write"
    return [[_call(tool, file_path=f"{ws}/new.txt", content="brand new\n"), Text("wrote new.txt")]]


def edit(ws: Path, agent: Agent) -> list[list[Step]]:
    if agent == "codex":
        body = "*** Update File: existing.txt\n@@\n alpha\n-beta\n+BETA changed\n"
        return [[_patch(body), Text("edited existing.txt")]]
    path = f"{ws}/existing.txt"
    if agent == "grok":
        change = _call(
            "search_replace", file_path=path, old_string="beta", new_string="BETA changed"
        )
        return [[change, Text("edited existing.txt")]]
    return [
        [
            _call("Read", file_path=path),  # Claude edits only what it read
            _call("Edit", file_path=path, old_string="beta", new_string="BETA changed"),
            Text("edited existing.txt"),
        ]
    ]


def multi_file(ws: Path, agent: Agent) -> list[list[Step]]:
    body = (
        "*** Add File: new.txt\n+brand new\n"
        "*** Update File: existing.txt\n@@\n alpha\n-beta\n+BETA changed\n"
    )
    return [[_patch(body), Text("patched two files")]]


def rewrite(ws: Path, agent: Agent) -> list[list[Step]]:
    if agent == "codex":
        body = (
            f"*** Update File: big.txt\n@@\n{''.join('-' + x + chr(10) for x in BIG.splitlines())}"
        )
        body += _plus(REWRITTEN)
        return [[_patch(body), Text("rewrote big.txt")]]
    path = f"{ws}/big.txt"
    if agent == "grok":
        return [
            [
                _call("read_file", target_file=path),  # it overwrites only what it read
                _call("write", file_path=path, content=REWRITTEN),
                Text("rewrote big.txt"),
            ]
        ]
    return [
        [
            _call("Read", file_path=path),
            _call("Write", file_path=path, content=REWRITTEN),
            Text("rewrote big.txt"),
        ]
    ]


def rejected(ws: Path, agent: Agent) -> list[list[Step]]:
    turns = write(ws, agent)
    turns[0][-1] = Text("understood: new.txt was not written")
    return turns


def shell(ws: Path, agent: Agent) -> list[list[Step]]:
    line = "echo hello from the shell && cat existing.txt"
    if agent == "codex":
        return [[_exec(line), Text("ran it")]]
    tool = "run_terminal_command" if agent == "grok" else "Bash"
    return [[_call(tool, command=line, description="print things"), Text("ran it")]]


def plan(ws: Path, agent: Agent) -> list[list[Step]]:
    if agent == "codex":
        steps = [{"step": step, "status": status} for step, status in TODOS]
        call = ToolCall("update_plan", {"explanation": "two steps", "plan": steps})
        return [[ToolCalls([call]), Text("planned")]]
    if agent == "grok":
        items = [
            {"id": str(n), "content": step, "status": status}
            for n, (step, status) in enumerate(TODOS, 1)
        ]
        return [[_call("todo_write", todos=items, merge=False), Text("planned")]]
    todos = [
        {"content": step, "status": status, "activeForm": f"{step}ing"} for step, status in TODOS
    ]
    return [[_call("TodoWrite", todos=todos), Text("planned")]]


def multi_turn(ws: Path, agent: Agent) -> list[list[Step]]:
    return [write(ws, agent)[0], edit(ws, agent)[0]]


def scripted(ws: Path, agent: Agent) -> list[list[Step]]:
    """The pattern agent's prompt is its script: the model is never called."""
    return [[Text("unused")]]


def _pattern(name: str) -> Recording:
    """One traffic pattern of real agents, answered as its live test answers it."""
    pattern = PATTERNS[name]
    return Recording(
        name,
        ("patterns",),
        (name,),
        scripted,
        answer="reject" if pattern.answer == "reject_once" else "allow",
        policy=pattern.policy,
        disk_patches=pattern.disk_patches,
    )


RECORDINGS = (
    Recording("write-approved", ALL, ("create new.txt",), write),
    Recording("edit-existing", ALL, ("change beta in existing.txt",), edit),
    Recording(
        "multi-file-patch", ("codex", "sdk"), ("add new.txt and change existing.txt",), multi_file
    ),
    Recording("capped-rewrite", ALL, ("rewrite big.txt",), rewrite, files={"big.txt": BIG}),
    Recording("rejected-permission", ALL, ("create new.txt",), rejected, answer="reject"),
    Recording("cancelled-turn", ALL, ("create new.txt",), write, answer="wait"),
    Recording("shell-command", ALL, ("run a command",), shell),
    Recording("plan", ALL, ("plan the fix",), plan),
    Recording("multi-turn", ALL, ("create new.txt", "now change beta in existing.txt"), multi_turn),
    Recording("crash-mid-turn", ALL, ("create new.txt",), write, answer="crash"),
    *(_pattern(name) for name in PATTERNS),
)


def _option(query: PermissionQuery, kinds: Sequence[str]) -> str | None:
    for kind in kinds:
        for option in query.options:
            if option.get("kind") == kind:
                return str(option["optionId"])
    return None


async def record(recording: Recording, agent: Agent, agents_bin: Path, out: Path) -> Path:
    """Run one recording; the capture's path."""
    capture = out / f"{agent}-{recording.scenario}.jsonl"
    with tempfile.TemporaryDirectory(prefix="acp-record-") as scratch:
        root = Path(scratch)
        workspace, home = root / "ws", root / "home"
        workspace.mkdir()
        home.mkdir()
        for name, text in recording.files.items():
            (workspace / name).write_text(text, encoding="utf-8")
        before = _files(workspace)
        api = "responses" if agent in ("codex", "grok") else "anthropic"
        side_call = launch.grok_side_call if agent == "grok" else None
        steps = launch.script(recording.prompts, recording.turns(workspace, agent), api, side_call)
        asked = anyio.Event()

        async def ask(query: PermissionQuery) -> str | None:
            asked.set()
            if recording.answer == "crash":  # the agent dies while it waits for the answer
                os.killpg(session.process.process.pid, signal.SIGKILL)
                await anyio.sleep_forever()
            if recording.answer == "wait":
                await anyio.sleep_forever()
            kinds = ("allow_once", "allow_always")
            return _option(query, kinds if recording.answer == "allow" else ("reject_once",))

        prompts = SDK_PROMPTS[recording.scenario] if agent == "sdk" else recording.prompts
        with FakeModelServer(steps) as server:
            if agent == "sdk":
                command, env = [sys.executable, str(SDK_AGENT)], {}
            elif agent == "patterns":
                command, env = PATTERN_AGENT, {}
            else:
                starter = {"codex": launch.codex, "grok": launch.grok}.get(agent, launch.claude)
                command, env = starter(agents_bin, home, server)
            async with acp_adapters.connect(
                {"codex": "codex", "grok": "grok", "sdk": None, "patterns": None}.get(
                    agent, "claude"
                ),
                workspace,
                command=command,
                env=env,
                protocol=1 if agent == "claude-v1" else 2,
                policy=recording.policy,
                ask=ask,
                disk_patches=recording.disk_patches,
                new_session=agent != "codex",
                record=capture,
            ) as session:
                if agent == "codex":
                    await session.authenticate("openai-api-key")
                    await session.new_session()
                elif agent.startswith("claude"):
                    await session.set_mode("default")  # it asks before each edit and command
                with anyio.fail_after(TURN_SECONDS):
                    for prompt in prompts:
                        await _turn(session, prompt, recording, asked)
        after = _files(workspace)
    portable = {
        "before": {f"<workspace>/{k}": v for k, v in before.items()},
        "after": {f"<workspace>/{k}": v for k, v in after.items()},
    }
    capture.with_suffix(".files.json").write_text(json.dumps(portable, indent=1) + "\n")
    return capture


async def _turn(
    session: acp_adapters.Session, prompt: str, recording: Recording, asked: anyio.Event
) -> None:
    if recording.answer == "wait":
        async with anyio.create_task_group() as group:
            group.start_soon(session.prompt, prompt)
            await asked.wait()
            await session.cancel()
        return
    if recording.answer == "crash":
        with contextlib.suppress(ConnectionClosed):
            await session.prompt(prompt)
        return
    await session.prompt(prompt)


def _files(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): path.read_text(encoding="utf-8")
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


async def record_workspace(name: str, out: Path) -> Path:
    """Record one workspace scenario (``tests/workspace_helpers.py``); the capture's path."""
    capture = out / f"workspace-{name}.jsonl"
    with tempfile.TemporaryDirectory(prefix="acp-record-") as scratch:
        workspace = Path(scratch) / "ws"
        workspace.mkdir()
        seed(workspace, SCENARIOS[name])
        root = str(workspace.resolve())
        before = snapshot(workspace, "<workspace>")
        with anyio.fail_after(TURN_SECONDS):
            await run_scenario(name, workspace, record=capture)
        after = snapshot(workspace, "<workspace>")
    files = {"before": before, "after": after}
    text = json.dumps(files, indent=1).replace(root, "<workspace>")
    capture.with_suffix(".files.json").write_text(text + "\n")
    return capture


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--agents", default=os.environ.get("ACP_ADAPTERS_PEER_AGENTS"))
    parser.add_argument("--out", default=str(HERE.parent / "data" / "recorded"))
    parser.add_argument("--only", nargs="*", default=(), help="scenario or agent names")
    args = parser.parse_args(argv)
    if not args.agents:
        parser.error("the agents' node_modules/.bin: --agents, or ACP_ADAPTERS_PEER_AGENTS")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # The recordings' checkpoint stores are the run's own, never this user's.
    os.environ["ACP_ADAPTERS_CHECKPOINTS"] = tempfile.mkdtemp(prefix="acp-record-checkpoints-")
    failed = 0
    if not args.only or "workspace" in args.only:
        for name in SCENARIOS:
            try:
                path = await record_workspace(name, out)
            except Exception as error:  # report and go on with the others
                failed += 1
                print(f"FAILED workspace {name}: {error!r}", file=sys.stderr)
                continue
            print(f"{path.name}: {path.read_text(encoding='utf-8').count(chr(10))} lines")
    for recording in RECORDINGS:
        for agent in recording.agents:
            if args.only and not {recording.scenario, agent} & set(args.only):
                continue
            try:
                path = await record(recording, agent, Path(args.agents), out)
            except Exception as error:  # report and go on with the others
                failed += 1
                print(f"FAILED {agent} {recording.scenario}: {error!r}", file=sys.stderr)
                continue
            lines = path.read_text(encoding="utf-8").count("\n")
            print(f"{path.name}: {lines} lines")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
