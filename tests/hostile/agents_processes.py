"""An ACP 1 agent whose processes misbehave: ``python agents_processes.py SCENARIO FOLDER``.

Process ids go to ``FOLDER/<name>.pid`` as they start. On ``session/prompt``:

* ``exit-holding``: starts ``setsid sleep 60`` that holds its stdout and stderr open
  (``holder``), says why on stderr and exits with status 5, mid-turn;
* ``detach``: starts a child in its group (``child``), one in a session of its own
  (``setsid``), a daemon by double fork (``daemon``), and one that leaves and drops
  its environment while its parent still runs (``hidden``); then ends the turn;
* ``deaf``: stops reading its stdin once the session is open, for good (it sleeps);
* ``error-data``: answers the prompt with an error whose ``data`` holds the reason;
* ``hang``: starts ``setsid sleep 60`` (``detached``), says it works, and sleeps
  without reading its stdin again (a cancel never reaches it);
* ``cancellable``: says it works, then ends the turn ``cancelled`` at ``session/cancel``.

The agent's own id is in ``agent.pid``. Standard library only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SCENARIO = sys.argv[1]
FOLDER = Path(sys.argv[2])
SESSION = "process-session"


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def note(name: str, pid: int) -> None:
    (FOLDER / f"{name}.part").write_text(str(pid))
    (FOLDER / f"{name}.part").rename(FOLDER / f"{name}.pid")  # whole, or not there


def say(text: str) -> None:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    send({"method": "session/update", "params": {"sessionId": SESSION, "update": update}})


def quiet(argv: list[str], **options: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        **options,
    )


def daemon() -> None:
    """The classic double fork: the grandchild, in a session of its own, is nobody's child."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            note("daemon", os.getpid())
            os.execvp("sleep", ["sleep", "60"])
        os._exit(0)


def turn(prompt_id: Any) -> None:
    if SCENARIO == "exit-holding":
        holder = subprocess.Popen(["setsid", "sleep", "60"], stdin=subprocess.DEVNULL)
        note("holder", holder.pid)
        sys.stderr.write("fatal: the key is missing\n")
        sys.stderr.flush()
        os._exit(5)
    if SCENARIO == "detach":
        note("child", quiet(["sleep", "60"]).pid)
        note("setsid", quiet(["setsid", "sleep", "60"]).pid)
        daemon()
        # Leaves the session, and its environment holds no mark: found by its parent.
        note("hidden", quiet(["sleep", "60"], start_new_session=True, env={}).pid)
        for name in ("daemon",):
            while not (FOLDER / f"{name}.pid").exists():
                time.sleep(0.01)
        send({"id": prompt_id, "result": {"stopReason": "end_turn"}})
        return
    if SCENARIO == "error-data":
        error = {
            "code": -32603,
            "message": "Internal error",
            "data": {"details": "model \x1b[31mclaude-x\x1b[0m not found", "status": 404},
        }
        send({"id": prompt_id, "error": error})
        return
    if SCENARIO == "hang":
        note("detached", quiet(["setsid", "sleep", "60"]).pid)
        say("working")
        time.sleep(60)
    if SCENARIO == "cancellable":
        say("working")
        for line in sys.stdin:
            if json.loads(line).get("method") == "session/cancel":
                send({"id": prompt_id, "result": {"stopReason": "cancelled"}})
                return
    raise SystemExit(f"unknown scenario {SCENARIO}")


def main() -> None:
    note("agent", os.getpid())
    for line in sys.stdin:
        message = json.loads(line)
        method, message_id = message.get("method"), message.get("id")
        if method == "initialize":
            info = {"name": "process-agent", "version": "0.1"}
            result = {"protocolVersion": 1, "agentCapabilities": {}, "agentInfo": info}
            send({"id": message_id, "result": result})
        elif method == "session/new":
            send({"id": message_id, "result": {"sessionId": SESSION}})
            if SCENARIO == "deaf":
                time.sleep(60)
        elif method == "session/prompt":
            turn(message_id)


if __name__ == "__main__":
    main()
