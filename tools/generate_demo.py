"""Write the capture that ``acp-adapters demo`` replays (run from the repository root).

    python tools/generate_demo.py            # writes acp_adapters/cli/data/grok-demo-v1.jsonl
    python tools/generate_demo.py --check    # fails when that file is out of date

One Grok Build session of one turn, in the shapes of
``tests/data/synthetic/generate_grok.py`` (protocol version 1; a write reports
``oldText: ""`` on the pending tool call and again when completed;
``search_replace`` first claims an empty file, then reports the old string;
``apply_patch`` reports one diff per file, ``oldText: null`` for a new file;
edit permissions offer allow/reject once/always):

* a write of ``README.md``, a new file, asked for and allowed ("Always allow",
  so the later edits of the turn are not asked for again);
* a ``search_replace`` in ``config.py``, through the client's file system;
* a read of ``app.py``, then an ``apply_patch`` over it and a new ``greeting.py``;
* a thought, a plan, and the agent's messages around them.

The client's side is what :func:`acp_adapters.connect` sends, so that the replay
agent can play it in its exact mode: ``initialize`` with both the v1 and the v2
fields (the client asks for 2, Grok answers 1), ``session/new``, the prompt, and
the answers to the agent's requests. Values that change from one client to the
next (its version) are ``"<any>"``; the session's folder is ``<workspace>``.
The files the session starts from (``app.py``, ``config.py``) are in the
client's answers to the agent's reads, where the replay finds them to seed its
folder.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from acp_adapters.client.capabilities import client_capabilities
from acp_adapters.client.session import CLIENT_INFO

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "framework" / "acp_adapters" / "cli" / "data" / "grok-demo-v1.jsonl"

WS = "<workspace>"
ANY = "<any>"
SESSION = "019a4c1e-demo-4e55-9c1b-5e55105e55e5"
#: Seconds between two lines: the replay plays the capture at its own pace.
STEP = 0.002
OPTIONS = [
    {"optionId": "allow-once", "name": "Allow", "kind": "allow_once"},
    {"optionId": "allow-always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
    {"optionId": "reject-always", "name": "Never allow", "kind": "reject_always"},
]
PROMPT = "Add a README, serve on port 8081, and move the greeting into its own module"

APP_BEFORE = 'from config import PORT\n\nprint("hello, world on port", PORT)\n'
APP_AFTER = "from config import PORT\nfrom greeting import greet\n\nprint(greet(PORT))\n"
GREETING = 'def greet(port: int) -> str:\n    return f"hello, world on port {port}"\n'
CONFIG_BEFORE = 'HOST = "127.0.0.1"\nPORT = 8080\nDEBUG = False\n'
CONFIG_AFTER = 'HOST = "127.0.0.1"\nPORT = 8081\nDEBUG = False\n'
README = "# hello\n\nPrints a greeting:\n\n    python app.py\n"


class Capture:
    """A capture being written: client and agent messages, in order, with their times."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.t = 0.0
        self.agent_ids = iter(range(100))  # Grok numbers its requests from 0
        self.client_ids = iter(range(1, 100))  # as the client's connection does

    def add(self, direction: str, message: dict[str, Any]) -> None:
        self.t = round(self.t + STEP, 3)
        self.lines.append({"dir": direction, "t": self.t, "msg": {"jsonrpc": "2.0", **message}})

    def client_request(self, method: str, params: dict[str, Any], result: dict[str, Any]) -> None:
        request_id = next(self.client_ids)
        self.add("client->agent", {"id": request_id, "method": method, "params": params})
        self.add("agent->client", {"id": request_id, "result": result})

    def agent_request(self, method: str, params: dict[str, Any], answer: dict[str, Any]) -> None:
        request_id = next(self.agent_ids)
        self.add(
            "agent->client",
            {"id": request_id, "method": method, "params": {"sessionId": SESSION, **params}},
        )
        self.add("client->agent", {"id": request_id, **answer})

    def update(self, update: dict[str, Any]) -> None:
        self.add(
            "agent->client",
            {"method": "session/update", "params": {"sessionId": SESSION, "update": update}},
        )

    def say(self, text: str, kind: str = "agent_message_chunk") -> None:
        self.update({"sessionUpdate": kind, "content": {"type": "text", "text": text}})

    def read(self, path: str, content: str | None) -> None:
        """The agent reads a file through the client: its content, or "not found"."""
        if content is None:
            error = {
                "code": -32002,
                "message": f"Resource not found: {path}",
                "data": {"uri": path},
            }
            self.agent_request("fs/read_text_file", {"path": path}, {"error": error})
        else:
            self.agent_request(
                "fs/read_text_file", {"path": path}, {"result": {"content": content}}
            )

    def write(self, path: str, content: str) -> None:
        self.agent_request("fs/write_text_file", {"path": path, "content": content}, {"result": {}})

    def plan(self, done: int) -> None:
        steps = ["Write README.md", "Serve on port 8081", "Move the greeting into greeting.py"]
        entries = [
            {
                "content": step,
                "priority": "medium",
                "status": "completed" if number < done else "pending",
            }
            for number, step in enumerate(steps)
        ]
        if done < len(steps):
            entries[done]["status"] = "in_progress"
        self.update({"sessionUpdate": "plan", "entries": entries})

    def tool_call(
        self, call_id: str, title: str, content: list[dict[str, Any]], **extra: Any
    ) -> None:
        paths = list(dict.fromkeys(str(item["path"]) for item in content))
        self.update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": call_id,
                "title": title,
                "kind": "edit",
                "status": "pending",
                "content": content,
                "locations": [{"path": path} for path in paths],
                **extra,
            }
        )

    def completed(self, call_id: str, content: list[dict[str, Any]]) -> None:
        self.update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call_id,
                "status": "completed",
                "content": content,
            }
        )


def diff(path: str, old: str | None, new: str) -> dict[str, Any]:
    return {"type": "diff", "path": path, "oldText": old, "newText": new}


def demo() -> list[dict[str, Any]]:
    c = Capture()
    client_info = {**CLIENT_INFO, "version": ANY}
    c.client_request(
        "initialize",
        {
            "protocolVersion": 2,
            "clientCapabilities": client_capabilities(1, elicit=False),
            "clientInfo": client_info,
            "info": client_info,
            "capabilities": client_capabilities(2, elicit=False),
        },
        {
            "protocolVersion": 1,
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": True, "embeddedContext": True},
            },
            # As Grok Build 1.0.41 answers: no agentInfo, its facts in x.ai's _meta.
            "authMethods": [
                {"id": "xai.api_key", "name": "xai.api_key", "description": "XAI_API_KEY"},
                {"id": "grok.com", "name": "Grok", "description": "Sign in with Grok"},
            ],
            "_meta": {"agentVersion": "1.0.41", "x.ai/fs_notify": True},
        },
    )
    c.client_request("session/new", {"cwd": WS, "mcpServers": []}, {"sessionId": SESSION})
    prompt_id = next(c.client_ids)
    c.add(
        "client->agent",
        {
            "id": prompt_id,
            "method": "session/prompt",
            "params": {"sessionId": SESSION, "prompt": [{"type": "text", "text": PROMPT}]},
        },
    )
    c.say(
        "Three small edits: a new README, the port in config.py, a greeting module.",
        "agent_thought_chunk",
    )
    c.plan(0)
    c.say("I'll start with the README.")

    # A write: Grok reports oldText "" (also for a new file) and asks first.
    readme = f"{WS}/README.md"
    written = [diff(readme, "", README)]
    c.tool_call(
        "call-write-1", "write README.md", written, rawInput={"path": readme, "content": README}
    )
    c.agent_request(
        "session/request_permission",
        {
            "toolCall": {
                "toolCallId": "call-write-1",
                "kind": "edit",
                "status": "pending",
                "content": written,
            },
            "options": OPTIONS,
        },
        {"result": {"outcome": {"outcome": "selected", "optionId": "allow-always"}}},
    )
    c.read(readme, None)
    c.write(readme, README)
    c.completed("call-write-1", written)
    c.plan(1)

    # search_replace: the first report claims an empty file; the client's reads show the truth.
    config = f"{WS}/config.py"
    c.tool_call(
        "call-edit-2",
        "search_replace config.py",
        [diff(config, "", CONFIG_AFTER)],
        rawInput={"path": config, "old_string": "PORT = 8080", "new_string": "PORT = 8081"},
    )
    c.read(config, CONFIG_BEFORE)
    c.write(config, CONFIG_AFTER)
    c.completed("call-edit-2", [diff(config, "PORT = 8080", "PORT = 8081")])
    c.plan(2)

    # A read through the client, before the patch.
    app, greeting = f"{WS}/app.py", f"{WS}/greeting.py"
    c.update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "call-read-3",
            "title": "read_file app.py",
            "kind": "read",
            "status": "pending",
            "locations": [{"path": app}],
            "rawInput": {"path": app},
        }
    )
    c.read(app, APP_BEFORE)
    c.update(
        {"sessionUpdate": "tool_call_update", "toolCallId": "call-read-3", "status": "completed"}
    )

    # apply_patch: one diff per file, a new file's oldText null; Grok writes the disk itself.
    patched = [diff(app, APP_BEFORE, APP_AFTER), diff(greeting, None, GREETING)]
    c.tool_call("call-patch-4", "apply_patch", patched)
    c.completed("call-patch-4", patched)
    c.plan(3)

    for chunk in (
        "Done: README.md is new, ",
        "config.py serves on 8081, ",
        "and app.py greets through greeting.py.",
    ):
        c.say(chunk)
    c.add("agent->client", {"id": prompt_id, "result": {"stopReason": "end_turn"}})
    return c.lines


def render(lines: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="fail when the file is out of date")
    args = parser.parse_args(argv)
    text = render(demo())
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print(f"{OUT.relative_to(REPO)} is out of date: run tools/generate_demo.py")
            return 1
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(REPO)} ({len(text.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
