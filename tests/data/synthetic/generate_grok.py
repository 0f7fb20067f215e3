"""Write the Grok-shaped captures of this folder (run from the repository root).

    python tests/data/synthetic/generate_grok.py

No capture of Grok Build exists here, so these are written from what its ACP
traffic is known to look like (see ``plugins/acp_adapters_grok/provider.py``):
protocol version 1; a write reports ``oldText: ""`` on the pending tool call and
again on the completed update; search_replace reports the old string as
``oldText``; apply_patch reports one diff per file, ``oldText: null`` for a new
file; each edit is reported twice and the first report can claim the file was
empty; edit permissions offer allow/reject once/always.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
WS = "<workspace>"
OPTIONS = [
    {"optionId": "allow-once", "name": "Allow", "kind": "allow_once"},
    {"optionId": "allow-always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
    {"optionId": "reject-always", "name": "Never allow", "kind": "reject_always"},
]


class Capture:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.t = 0.0
        self.agent_id = 0
        self.client_id = 2

    def add(self, direction: str, message: dict[str, Any]) -> None:
        self.t = round(self.t + 0.01, 2)
        self.lines.append({"dir": direction, "t": self.t, "msg": {"jsonrpc": "2.0", **message}})

    def start(self) -> None:
        caps = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}
        self.add(
            "client->agent",
            {
                "id": 0,
                "method": "initialize",
                "params": {"protocolVersion": 1, "clientCapabilities": caps},
            },
        )
        self.add(
            "agent->client",
            {
                "id": 0,
                "result": {
                    "protocolVersion": 1,
                    "agentCapabilities": {"loadSession": True},
                    # As Grok Build 1.0.41 answers: no agentInfo, its facts in x.ai's _meta.
                    "authMethods": [
                        {"id": "xai.api_key", "name": "xai.api_key", "description": "XAI_API_KEY"},
                        {"id": "grok.com", "name": "Grok", "description": "Sign in with Grok"},
                    ],
                    "_meta": {"agentVersion": "1.0.41", "x.ai/fs_notify": True},
                },
            },
        )
        self.add(
            "client->agent",
            {"id": 1, "method": "session/new", "params": {"cwd": WS, "mcpServers": []}},
        )
        self.add("agent->client", {"id": 1, "result": {"sessionId": "grok-session"}})

    def update(self, update: dict[str, Any]) -> None:
        self.add(
            "agent->client",
            {"method": "session/update", "params": {"sessionId": "grok-session", "update": update}},
        )

    def request(self, method: str, params: dict[str, Any], answer: dict[str, Any]) -> None:
        request_id = self.agent_id
        self.agent_id += 1
        self.add(
            "agent->client",
            {"id": request_id, "method": method, "params": {"sessionId": "grok-session", **params}},
        )
        self.add("client->agent", {"id": request_id, **answer})

    def exit(self, code: int, stderr: str) -> None:
        """The agent dies here (the replay agent's exit marker)."""
        self.t = round(self.t + 0.01, 2)
        self.lines.append({"dir": "exit", "t": self.t, "code": code, "stderr": stderr})

    def turn(self, prompt: str, body: Any, *, stop_reason: str = "end_turn") -> None:
        self.client_id += 1
        prompt_id = self.client_id
        self.add(
            "client->agent",
            {
                "id": prompt_id,
                "method": "session/prompt",
                "params": {
                    "sessionId": "grok-session",
                    "prompt": [{"type": "text", "text": prompt}],
                },
            },
        )
        if body() is False:
            return  # the agent never answered the prompt (it died)
        if stop_reason == "end_turn":
            self.update(
                {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "done"},
                }
            )
        self.add("agent->client", {"id": prompt_id, "result": {"stopReason": stop_reason}})

    def permission(
        self, call_id: str, content: list[dict[str, Any]], answer: str | None = "allow-once"
    ) -> None:
        """Ask to edit; ``answer`` is the option the client selects (None: cancelled)."""
        outcome = (
            {"outcome": "selected", "optionId": answer} if answer else {"outcome": "cancelled"}
        )
        self.request(
            "session/request_permission",
            {
                "toolCall": {
                    "toolCallId": call_id,
                    "kind": "edit",
                    "status": "pending",
                    "content": content,
                },
                "options": OPTIONS,
            },
            {"result": {"outcome": outcome}},
        )

    def write(self, path: str) -> None:
        (HERE / path).write_text(
            "".join(json.dumps(line) + "\n" for line in self.lines), encoding="utf-8"
        )


def write_new_file() -> None:
    """A write that creates a file, through the client's file system."""
    c = Capture()
    c.start()
    path = f"{WS}/hello.txt"
    diff = [{"type": "diff", "path": path, "oldText": "", "newText": "hello\n"}]

    def body() -> None:
        c.update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "write-1",
                "title": "write hello.txt",
                "kind": "edit",
                "status": "pending",
                "content": diff,
                "locations": [{"path": path}],
                "rawInput": {"path": path, "content": "hello\n"},
            }
        )
        c.permission("write-1", diff)
        c.request(
            "fs/read_text_file",
            {"path": path},
            {"error": {"code": -32002, "message": f"Resource not found: {path}"}},
        )
        c.request("fs/write_text_file", {"path": path, "content": "hello\n"}, {"result": {}})
        c.update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "write-1",
                "status": "completed",
                "content": diff,
            }
        )

    c.turn("create hello.txt", body)
    c.write("grok-write-new-file-v1.jsonl")


def search_replace() -> None:
    """search_replace: the first report claims an empty file; the client's fs shows the truth."""
    c = Capture()
    c.start()
    path = f"{WS}/notes.txt"
    stale = [{"type": "diff", "path": path, "oldText": "", "newText": "alpha\nBETA\ngamma\n"}]
    fragment = [{"type": "diff", "path": path, "oldText": "beta", "newText": "BETA"}]

    def body() -> None:
        c.update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "sr-1",
                "title": "search_replace notes.txt",
                "kind": "edit",
                "status": "pending",
                "content": stale,
                "locations": [{"path": path}],
                "rawInput": {"path": path, "old_string": "beta", "new_string": "BETA"},
            }
        )
        c.request(
            "fs/read_text_file", {"path": path}, {"result": {"content": "alpha\nbeta\ngamma\n"}}
        )
        c.permission("sr-1", fragment)
        c.request(
            "fs/write_text_file", {"path": path, "content": "alpha\nBETA\ngamma\n"}, {"result": {}}
        )
        c.update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "sr-1",
                "status": "completed",
                "content": fragment,
            }
        )

    c.turn("change beta to BETA in notes.txt", body)
    c.write("grok-search-replace-v1.jsonl")


def apply_patch() -> None:
    """apply_patch over two files, one of them new, each diff reported twice."""
    c = Capture()
    c.start()
    edited, created = f"{WS}/app.py", f"{WS}/util.py"
    diffs = [
        {
            "type": "diff",
            "path": edited,
            "oldText": "x = 1\nprint(x)\n",
            "newText": "x = 2\nprint(x)\n",
        },
        {
            "type": "diff",
            "path": created,
            "oldText": None,
            "newText": "def helper():\n    return 1\n",
        },
    ]

    def body() -> None:
        c.update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "patch-1",
                "title": "apply_patch",
                "kind": "edit",
                "status": "pending",
                "content": diffs,
                "locations": [{"path": edited}, {"path": created}],
            }
        )
        c.permission("patch-1", diffs)
        c.update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "patch-1",
                "status": "completed",
                "content": diffs,
            }
        )

    c.turn("bump x and add a helper", body)
    c.write("grok-apply-patch-v1.jsonl")


def stale_without_fs() -> None:
    """An edit whose first report claims the file was empty; no file-system traffic shows it."""
    c = Capture()
    c.start()
    path = f"{WS}/config.yaml"
    stale = [{"type": "diff", "path": path, "oldText": "", "newText": "port: 8081\nhost: local\n"}]
    final = [
        {
            "type": "diff",
            "path": path,
            "oldText": "port: 8080\nhost: local\n",
            "newText": "port: 8081\nhost: local\n",
        }
    ]

    def body() -> None:
        c.update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "edit-1",
                "title": "edit config.yaml",
                "kind": "edit",
                "status": "pending",
                "content": stale,
                "locations": [{"path": path}],
            }
        )
        c.permission("edit-1", stale)
        c.update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "edit-1",
                "status": "completed",
                "content": final,
            }
        )

    c.turn("use port 8081", body)
    c.write("grok-stale-report-v1.jsonl")


def _edit_call(c: Capture, call_id: str, path: str, diff: list[dict[str, Any]]) -> None:
    c.update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": call_id,
            "title": f"write {path.rsplit('/', 1)[-1]}",
            "kind": "edit",
            "status": "pending",
            "content": diff,
            "locations": [{"path": path}],
        }
    )


def _status(c: Capture, call_id: str, status: str, **fields: Any) -> None:
    c.update(
        {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": status, **fields}
    )


def rejected_permission() -> None:
    """The client rejects the edit: the tool call fails, nothing is written."""
    c = Capture()
    c.start()
    path = f"{WS}/hello.txt"
    diff = [{"type": "diff", "path": path, "oldText": "", "newText": "hello\n"}]

    def body() -> None:
        _edit_call(c, "write-1", path, diff)
        c.permission("write-1", diff, answer="reject-once")
        _status(c, "write-1", "failed")

    c.turn("create hello.txt", body)
    c.write("grok-rejected-permission-v1.jsonl")


def cancelled_turn() -> None:
    """The client cancels while the agent waits for permission."""
    c = Capture()
    c.start()
    path = f"{WS}/hello.txt"
    diff = [{"type": "diff", "path": path, "oldText": "", "newText": "hello\n"}]

    def body() -> None:
        _edit_call(c, "write-1", path, diff)
        c.add(
            "client->agent", {"method": "session/cancel", "params": {"sessionId": "grok-session"}}
        )
        c.permission("write-1", diff, answer=None)

    c.turn("create hello.txt", body, stop_reason="cancelled")
    c.write("grok-cancelled-turn-v1.jsonl")


def shell_command() -> None:
    """A command Grok runs itself, its output in the completed update."""
    c = Capture()
    c.start()

    def body() -> None:
        c.update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "run-1",
                "title": "run_terminal_cmd: ls",
                "kind": "execute",
                "status": "in_progress",
                "rawInput": {"command": "ls"},
            }
        )
        _status(
            c,
            "run-1",
            "completed",
            content=[{"type": "content", "content": {"type": "text", "text": "notes.txt\n"}}],
            rawOutput={"exit_code": 0, "output": "notes.txt\n"},
        )

    c.turn("list the files", body)
    c.write("grok-shell-command-v1.jsonl")


def plan() -> None:
    """A plan, updated as its steps are done."""
    c = Capture()
    c.start()
    steps = ["Read the config", "Change the port"]

    def entries(done: int) -> list[dict[str, Any]]:
        return [
            {
                "content": step,
                "priority": "medium",
                "status": "completed" if n < done else "in_progress" if n == done else "pending",
            }
            for n, step in enumerate(steps)
        ]

    def body() -> None:
        for done in range(len(steps) + 1):
            c.update({"sessionUpdate": "plan", "entries": entries(done)})

    c.turn("plan the port change", body)
    c.write("grok-plan-v1.jsonl")


def multi_turn() -> None:
    """Two prompts in one session: a file made, then changed."""
    c = Capture()
    c.start()
    path = f"{WS}/hello.txt"
    made = [{"type": "diff", "path": path, "oldText": None, "newText": "hello\n"}]
    changed = [{"type": "diff", "path": path, "oldText": "hello\n", "newText": "hello world\n"}]

    def first() -> None:
        _edit_call(c, "write-1", path, made)
        c.permission("write-1", made)
        _status(c, "write-1", "completed", content=made)

    def second() -> None:
        _edit_call(c, "write-2", path, changed)
        c.permission("write-2", changed)
        _status(c, "write-2", "completed", content=changed)

    c.turn("create hello.txt", first)
    c.turn("say hello world", second)
    c.write("grok-multi-turn-v1.jsonl")


def crash_mid_turn() -> None:
    """The agent dies while an edit is in progress."""
    c = Capture()
    c.start()
    path = f"{WS}/hello.txt"
    diff = [{"type": "diff", "path": path, "oldText": None, "newText": "hello\n"}]

    def body() -> bool:
        _edit_call(c, "write-1", path, diff)
        c.permission("write-1", diff)
        _status(c, "write-1", "in_progress")
        c.exit(101, "thread 'main' panicked: the model stream ended early\n")
        return False

    c.turn("create hello.txt", body)
    c.write("grok-crash-mid-turn-v1.jsonl")


def capped_rewrite() -> None:
    """A rewrite of every line of a 600-line file: past the cap, the patch is omitted."""
    c = Capture()
    c.start()
    path = f"{WS}/big.txt"
    old = "".join(f"line {n} of the old file\n" for n in range(600))
    new = "".join(f"row {n} of the new file\n" for n in range(600))
    diff = [{"type": "diff", "path": path, "oldText": old, "newText": new}]

    def body() -> None:
        _edit_call(c, "write-1", path, diff)
        c.permission("write-1", diff)
        _status(c, "write-1", "completed", content=diff)

    c.turn("rewrite big.txt", body)
    c.write("grok-capped-rewrite-v1.jsonl")


if __name__ == "__main__":
    write_new_file()
    search_replace()
    apply_patch()
    stale_without_fs()
    rejected_permission()
    cancelled_turn()
    shell_command()
    plan()
    multi_turn()
    crash_mid_turn()
    capped_rewrite()
