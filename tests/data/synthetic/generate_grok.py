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
                    "agentInfo": {"name": "grok", "title": "Grok Build", "version": "1.0.30"},
                    "authMethods": [],
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

    def turn(self, prompt: str, body: Any) -> None:
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
        body()
        self.update(
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "done"}}
        )
        self.add("agent->client", {"id": prompt_id, "result": {"stopReason": "end_turn"}})

    def permission(self, call_id: str, content: list[dict[str, Any]]) -> None:
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
            {"result": {"outcome": {"outcome": "selected", "optionId": "allow-once"}}},
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


if __name__ == "__main__":
    write_new_file()
    search_replace()
    apply_patch()
    stale_without_fs()
