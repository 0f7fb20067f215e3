"""A scripted ACP agent for the client's tests, well-behaved or not.

    python fake_agent.py SCENARIO [ARG]

It reads JSON-RPC from stdin and writes to stdout, one message a line, and
plays one scenario (see ``SCENARIOS``): protocol answers of every kind of real
agent (v1, v2, echoing the client's version, rejecting a v1-shaped request for
2), a turn that edits files through the client with permission, terminals,
cancellation, and faults (garbage, huge lines, unknown ids, crashes, hangs,
floods). Standard library only.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import deque
from typing import Any

SCENARIO = sys.argv[1] if len(sys.argv) > 1 else "basic"
ARG = sys.argv[2] if len(sys.argv) > 2 else ""
INBOX: deque[dict[str, Any]] = deque()
SESSION = "fake-session"
NEXT_ID = [0]


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def raw(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def read() -> dict[str, Any] | None:
    if INBOX:
        return INBOX.popleft()
    line = sys.stdin.readline()
    if not line:
        return None
    return json.loads(line)


def request(method: str, params: dict[str, Any], *, string_id: bool = False) -> dict[str, Any]:
    """Send a request to the client and wait for its answer (other messages wait in line)."""
    NEXT_ID[0] += 1
    request_id: Any = f"req-{NEXT_ID[0]}" if string_id else NEXT_ID[0]
    send({"id": request_id, "method": method, "params": {"sessionId": SESSION, **params}})
    held = []
    while True:
        line = sys.stdin.readline()
        if not line:
            sys.exit(0)
        message = json.loads(line)
        if message.get("id") == request_id and "method" not in message:
            INBOX.extend(held)
            return message
        held.append(message)


def update(update: dict[str, Any]) -> None:
    send({"method": "session/update", "params": {"sessionId": SESSION, "update": update}})


def text(words: str, message_id: str | None = None) -> None:
    chunk: dict[str, Any] = {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": words},
    }
    if message_id:
        chunk["messageId"] = message_id
    update(chunk)


V2 = SCENARIO.startswith("v2")  # set again by initialize, from what it answered


def initialize(params: dict[str, Any]) -> dict[str, Any]:
    global V2
    asked = params.get("protocolVersion")
    info = {"name": f"fake-agent-{SCENARIO}", "version": "0.1"}
    if SCENARIO == "claude-like" and asked == 2 and not isinstance(params.get("info"), dict):
        raise ValueError("invalid initialize params: info expected object")
    if V2 or (SCENARIO == "claude-like" and asked == 2):
        V2 = True
        return {"protocolVersion": 2, "info": info, "capabilities": {}, "authMethods": []}
    version = asked if SCENARIO == "echo" else 1
    caps = params.get("clientCapabilities", {})
    info["name"] = f"fake-agent-{SCENARIO}" + ("" if caps.get("fs") else "-no-fs")
    result = {
        "protocolVersion": version,
        "agentCapabilities": {"loadSession": True},
        "agentInfo": info,
    }
    if SCENARIO == "auth":
        result["authMethods"] = [
            {"type": "env_var", "id": "key", "name": "Use FAKE_KEY", "vars": [{"name": "FAKE_KEY"}]}
        ]
    return result


def end_turn(prompt_id: Any, reason: str = "end_turn") -> None:
    if V2:
        update({"sessionUpdate": "state_update", "state": "idle", "stopReason": reason})
    else:
        send({"id": prompt_id, "result": {"stopReason": reason}})


def permission(call_id: str, content: list[dict[str, Any]]) -> str | None:
    options = [
        {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
        {"optionId": "always", "name": "Always", "kind": "allow_always"},
        {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
    ]
    if V2:
        params: dict[str, Any] = {
            "title": "Edit?",
            "subject": {
                "type": "tool_call",
                "toolCall": {"toolCallId": call_id, "kind": "edit", "content": content},
            },
            "options": options,
        }
    else:
        params = {
            "toolCall": {"toolCallId": call_id, "kind": "edit", "content": content},
            "options": options,
        }
    answer = request("session/request_permission", params)
    outcome = answer.get("result", {}).get("outcome", {})
    return outcome.get("optionId") if outcome.get("outcome") == "selected" else None


def turn(prompt_id: Any, prompt: list[dict[str, Any]]) -> None:
    words = " ".join(b.get("text", "") for b in prompt if isinstance(b, dict))
    if V2:
        update({"sessionUpdate": "state_update", "state": "running"})
        send({"id": prompt_id, "result": {}})
    if SCENARIO in ("basic", "echo", "claude-like", "auth", "v2") or words.startswith("say"):
        text(f"you said: {words}", "m-1" if V2 else None)
        return end_turn(prompt_id)
    if SCENARIO in ("edit", "v2-edit"):
        return edit_turn(prompt_id)
    if SCENARIO in ("fragment", "fragment-twice"):
        return fragment_turn(prompt_id)
    if SCENARIO == "terminal":
        return terminal_turn(prompt_id)
    if SCENARIO == "crash":
        text("working")
        sys.stderr.write("fatal: the model went away\n")
        sys.stderr.flush()
        os._exit(3)
    if SCENARIO == "hang":
        text("thinking forever")
        time.sleep(3600)
    if SCENARIO == "flood":
        for index in range(int(ARG or "1000")):
            update(
                {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": f"{index} "},
                }
            )
        return end_turn(prompt_id)
    if SCENARIO == "faults":
        return faults_turn(prompt_id)
    if SCENARIO == "cancel":
        return cancel_turn(prompt_id)
    if SCENARIO == "requests":
        return requests_turn(prompt_id)
    if SCENARIO in ("elicit", "v2-elicit"):
        return elicit_turn(prompt_id)
    raise SystemExit(f"unknown scenario {SCENARIO}")


def edit_turn(prompt_id: Any) -> None:
    workspace = ARG
    existing, created = f"{workspace}/existing.txt", f"{workspace}/new.txt"
    if V2:
        diff = {
            "type": "diff",
            "changes": [{"operation": "modify", "path": existing}],
            "patch": None,
        }
        update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "edit-1",
                "title": "Edit existing.txt",
                "kind": "edit",
                "status": "pending",
                "content": [diff],
            }
        )
        if permission("edit-1", [diff]) in (None, "reject"):
            update(
                {"sessionUpdate": "tool_call_update", "toolCallId": "edit-1", "status": "failed"}
            )
            return end_turn(prompt_id)
        with open(existing, encoding="utf-8") as handle:  # a v2 agent edits the disk itself
            old = handle.read()
        new = old.replace("beta", "BETA changed")
        with open(existing, "w", encoding="utf-8") as handle:
            handle.write(new)
        update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "edit-1",
                "status": "completed",
                "content": [
                    {"type": "diff", "path": existing, "oldText": "beta", "newText": "BETA changed"}
                ],
            }
        )
        return end_turn(prompt_id)
    old = request("fs/read_text_file", {"path": existing})["result"]["content"]
    new = old.replace("beta", "BETA changed")
    content = [{"type": "diff", "path": existing, "oldText": old, "newText": new}]
    update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "edit-1",
            "title": "Edit existing.txt",
            "kind": "edit",
            "status": "pending",
            "content": content,
            "locations": [{"path": existing}],
        }
    )
    if permission("edit-1", content) in (None, "reject"):
        update({"sessionUpdate": "tool_call_update", "toolCallId": "edit-1", "status": "failed"})
        return end_turn(prompt_id)
    write = request("fs/write_text_file", {"path": existing, "content": new})
    update(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "edit-1",
            "status": "completed" if "result" in write else "failed",
        }
    )
    missing = request("fs/read_text_file", {"path": created})
    old_text = missing["result"]["content"] if "result" in missing else None
    creation = [{"type": "diff", "path": created, "oldText": old_text, "newText": "brand new\n"}]
    update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "edit-2",
            "title": "Write new.txt",
            "kind": "edit",
            "status": "in_progress",
            "content": creation,
            "rawInput": {"path": created},
        }
    )
    request("fs/write_text_file", {"path": created, "content": "brand new\n"})
    update({"sessionUpdate": "tool_call_update", "toolCallId": "edit-2", "status": "completed"})
    escape = request("fs/write_text_file", {"path": f"{workspace}/../escaped.txt", "content": "x"})
    text("escape refused" if "error" in escape else "escape allowed")
    end_turn(prompt_id)


def fragment_turn(prompt_id: Any) -> None:
    """An agent that edits the disk itself and reports only the changed fragment (opencode does)."""
    path = f"{ARG}/existing.txt"
    fragment = [{"type": "diff", "path": path, "oldText": "beta", "newText": "BETA changed"}]
    update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "frag-1",
            "title": "edit",
            "kind": "edit",
            "status": "pending",
            "content": fragment,
            "locations": [{"path": path}],
        }
    )
    if SCENARIO == "fragment":
        with open(path, encoding="utf-8") as handle:
            old = handle.read()
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(old.replace("beta", "BETA changed", 1))
    update({"sessionUpdate": "tool_call_update", "toolCallId": "frag-1", "status": "completed"})
    end_turn(prompt_id)


def terminal_turn(prompt_id: Any) -> None:
    update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "run-1",
            "title": "run",
            "kind": "execute",
            "status": "in_progress",
            "rawInput": {"command": ARG},
        }
    )
    created = request("terminal/create", {"command": ARG, "outputByteLimit": 64})
    terminal_id = created["result"]["terminalId"]
    update(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "run-1",
            "content": [{"type": "terminal", "terminalId": terminal_id}],
        }
    )
    status = request("terminal/wait_for_exit", {"terminalId": terminal_id})["result"]
    output = request("terminal/output", {"terminalId": terminal_id})["result"]
    request("terminal/release", {"terminalId": terminal_id})
    update(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "run-1",
            "status": "completed",
            "rawOutput": {
                "output": output["output"],
                "exit_code": status["exitCode"],
                "truncated": output["truncated"],
            },
        }
    )
    end_turn(prompt_id)


TEXT_BLOCK = {"type": "text", "text": "nested too deep"}


def faults_turn(prompt_id: Any) -> None:
    raw("this banner is not JSON\n")
    raw('{"jsonrpc": "2.0", "method": "session/upd\n')  # truncated JSON
    raw("[1, 2, 3]\n")
    big = int(ARG or "0")
    if big:
        raw('{"jsonrpc":"2.0","method":"session/update","params":{"x":"' + "A" * big + '"}}\n')
    raw("[" * 20_000 + "]" * 20_000 + "\n")  # too deep for Python's own recursion
    deep: Any = {}
    for _ in range(300):
        deep = {"a": deep}
    update({"sessionUpdate": "agent_message_chunk", "content": TEXT_BLOCK, "_meta": deep})
    send({"id": 424242, "result": {}})  # an answer to nothing
    send({"method": "_vendor/ping", "params": {}})
    text("a lone surrogate: \ud800, ")  # legal JSON, and no UTF-8 can carry it
    text("still here")
    end_turn(prompt_id)
    send({"id": prompt_id, "result": {"stopReason": "end_turn"}})  # a duplicate answer


def cancel_turn(prompt_id: Any) -> None:
    text("starting a long task")
    update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "slow-1",
            "title": "slow",
            "kind": "edit",
            "status": "pending",
        }
    )
    NEXT_ID[0] += 1
    asked = NEXT_ID[0]
    send(
        {
            "id": asked,
            "method": "session/request_permission",
            "params": {
                "sessionId": SESSION,
                "toolCall": {"toolCallId": "slow-1"},
                "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
            },
        }
    )
    answer = None
    cancelled = False
    while answer is None or not cancelled:
        message = read()
        if message is None:
            return
        if message.get("method") == "session/cancel":
            cancelled = True
        elif message.get("id") == asked and "method" not in message:
            answer = message
    outcome = answer.get("result", {}).get("outcome", {}).get("outcome")
    update({"sessionUpdate": "tool_call_update", "toolCallId": "slow-1", "status": "failed"})
    text(f"permission answer: {outcome}")
    end_turn(prompt_id, "cancelled")


def requests_turn(prompt_id: Any) -> None:
    """Ids of every JSON type, a batch, a request the agent cancels, an unknown method."""
    answer = request("fs/read_text_file", {"path": f"{ARG}/existing.txt"}, string_id=True)
    text(f"string id answered: {'result' in answer}")
    raw(
        json.dumps(
            [
                {
                    "jsonrpc": "2.0",
                    "id": "b1",
                    "method": "fs/read_text_file",
                    "params": {"sessionId": SESSION, "path": f"{ARG}/existing.txt"},
                },
                {"jsonrpc": "2.0", "id": 77, "method": "vendor/unknown", "params": {}},
            ]
        )
        + "\n"
    )
    batch_answer = json.loads(sys.stdin.readline())
    ids = sorted(str(m.get("id")) for m in batch_answer) if isinstance(batch_answer, list) else []
    codes = sorted(str(m.get("error", {}).get("code")) for m in batch_answer if "error" in m)
    text(f"batch answered: {ids} errors {codes}")
    send(
        {
            "id": 900,
            "method": "session/request_permission",
            "params": {
                "sessionId": SESSION,
                "toolCall": {"toolCallId": "x"},
                "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
            },
        }
    )
    time.sleep(0.2)
    send({"method": "$/cancel_request", "params": {"requestId": 900}})
    while True:
        message = json.loads(sys.stdin.readline())
        if message.get("id") == 900:
            break
    text(f"cancelled request answered with {message.get('error', {}).get('code')}")
    end_turn(prompt_id)


def elicit_turn(prompt_id: Any) -> None:
    """Elicitations, good and bad, and requests whose params the schema's rules repair or refuse."""

    def say(words: str) -> None:
        text(words, "m-1" if V2 else None)

    form = {
        "mode": "form",
        "message": "Which color?",
        "requestedSchema": {"type": "object", "properties": {"color": {"type": "string"}}},
        "toolCallId": {"not": "an id"},  # invalid: the schema says this one is dropped
    }
    answer = request("elicitation/create", form)
    say(f"form: {json.dumps(answer.get('result', answer.get('error')), sort_keys=True)}\n")
    url = {"mode": "url", "message": "Sign in", "elicitationId": "e-1", "url": "https://x.test"}
    answer = request("elicitation/create", {**url, "sessionId": None, "requestId": 7})
    say(f"url: {json.dumps(answer.get('result', answer.get('error')), sort_keys=True)}\n")
    answer = request("elicitation/create", {"mode": "form", "requestedSchema": {}})
    say(f"no message: {answer.get('error', {}).get('code')}\n")
    send({"method": "elicitation/complete", "params": {"elicitationId": "e-1"}})
    if not V2:
        answer = request("fs/read_text_file", {"path": f"{ARG}/existing.txt", "line": "two"})
        say(f"bad line: {json.dumps(answer.get('result', answer.get('error')))}\n")
        answer = request("fs/read_text_file", {"line": 1})
        say(f"no path: {answer.get('error', {}).get('code')}\n")
    answer = request("fs/read_text_file", {"path": f"{ARG}/existing.txt"}) if V2 else {}
    if V2:
        say(f"fs in v2: {answer.get('error', {}).get('code')}\n")
    end_turn(prompt_id)


def main() -> None:
    while True:
        message = read()
        if message is None:
            return
        method, params, msg_id = (
            message.get("method"),
            message.get("params") or {},
            message.get("id"),
        )
        if method is None or msg_id is None:
            continue  # answers and notifications outside a turn
        try:
            if method == "initialize":
                send({"id": msg_id, "result": initialize(params)})
            elif method == "authenticate":
                ok = os.environ.get("FAKE_KEY") is not None
                send(
                    {"id": msg_id, "result": {}}
                    if ok
                    else {"id": msg_id, "error": {"code": -32000, "message": "no key"}}
                )
            elif method in ("session/new", "session/load", "session/resume"):
                if SCENARIO == "auth" and os.environ.get("FAKE_KEY") is None:
                    send(
                        {
                            "id": msg_id,
                            "error": {"code": -32000, "message": "Authentication required"},
                        }
                    )
                else:
                    send({"id": msg_id, "result": {"sessionId": params.get("sessionId", SESSION)}})
            elif method == "session/set_mode":
                send({"id": msg_id, "result": {}})
            elif method == "session/prompt":
                turn(msg_id, params.get("prompt", []))
            else:
                send(
                    {
                        "id": msg_id,
                        "error": {"code": -32601, "message": f"method not found: {method}"},
                    }
                )
        except ValueError as exc:
            send({"id": msg_id, "error": {"code": -32602, "message": str(exc)}})


if __name__ == "__main__":
    main()
