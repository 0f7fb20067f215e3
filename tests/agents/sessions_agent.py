"""A scripted ACP agent with many sessions, stored sessions, and logins (standard library).

    python sessions_agent.py [--v2] [--offer list,resume,close,delete,fork,load,logout]
                             [--auth agent,terminal,env_var] [--require-login] [--page N]
    python sessions_agent.py --login     (the terminal login: asks on stdin)

Every request it takes is appended, as one JSON line ``{"method", "params"}``, to the file
``$SESSIONS_AGENT_LOG`` (when set), for the tests to read what the client sent.

* ``session/new`` makes ``s-1``, ``s-2``, ...; ``session/fork`` makes ``fork-1``, ... with
  the history of the session it forks. Three sessions are stored already (``old-1``,
  ``old-2``, ``old-3``); ``old-1`` has a history of one turn: the user's ``hello``, the
  agent's ``hi there`` and a completed read of ``notes.txt``.
* ``session/load`` (and a v2 ``session/resume`` with ``replayFrom``) replays the history as
  ``session/update`` notifications, then answers; ``session/resume`` answers at once.
* ``session/list`` pages the sessions ``--page`` at a time (default 2), the cursor being
  the index of the next one.
* A prompt is answered ``<session id>: <words>``; ``slow`` sends ``working`` and waits for
  ``session/cancel`` of its session (its stop reason ``cancelled``); with
  ``$SESSIONS_AGENT_STATE`` naming a file, the stored sessions are kept there for the next
  process; ``poke <id>`` asks the
  client to read ``existing.txt`` for session ``<id>`` and says ``read`` or ``refused: ...``;
  ``crash`` says ``dying`` and exits (status 3) mid-turn;
  ``env NAME`` says the value of the variable ``NAME`` in its environment, or ``unset``.
* With ``--require-login``, ``session/new`` is refused (-32000 "Authentication required")
  until a login: ``authenticate`` / ``auth/login`` with an ``agent`` or ``env_var``
  method, or the terminal login, which writes ``.logged-in`` in the folder it runs in.
  The terminal method is listed only to a client that offered ``auth.terminal``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

ARGS = sys.argv[1:]


def _flag(name: str) -> bool:
    return name in ARGS


def _value(name: str, default: str) -> str:
    return ARGS[ARGS.index(name) + 1] if name in ARGS else default


V2 = _flag("--v2")
OFFERS = set(filter(None, _value("--offer", "").split(",")))
AUTH = [a for a in _value("--auth", "").split(",") if a]
PAGE = int(_value("--page", "2"))
LOG = os.environ.get("SESSIONS_AGENT_LOG")
#: A file the stored sessions are kept in, so that another process of the agent has them.
STATE = os.environ.get("SESSIONS_AGENT_STATE")
MARK = Path(".logged-in")

HISTORY = [
    {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "hello"}},
    {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi there"}},
    {
        "sessionUpdate": "tool_call",
        "toolCallId": "read-1",
        "title": "Read notes.txt",
        "kind": "read",
        "status": "completed",
    },
]


class Agent:
    def __init__(self) -> None:
        self.stored: dict[str, list[dict[str, Any]]] = {
            "old-1": list(HISTORY),
            "old-2": [],
            "old-3": [],
        }
        if STATE and os.path.exists(STATE):
            with open(STATE, encoding="utf-8") as kept:
                self.stored = json.load(kept)
        self.open: set[str] = set()
        self.made = 0
        self.forks = 0
        self.offered: dict[str, Any] = {}
        self.logged_in = False
        self.cancels: dict[str, asyncio.Event] = {}
        self.write_lock = asyncio.Lock()
        self.asked: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.cwds: dict[str, str] = {}

    async def ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """A request to the client; its answer (result or error)."""
        request_id = len(self.asked) + 1
        answer = self.asked[request_id] = asyncio.get_running_loop().create_future()
        await self.send({"id": request_id, "method": method, "params": params})
        return await answer

    def keep(self) -> None:
        """The stored sessions, for the next process of the agent (``$SESSIONS_AGENT_STATE``)."""
        if STATE:
            with open(STATE, "w", encoding="utf-8") as kept:
                json.dump(self.stored, kept)

    async def send(self, message: dict[str, Any]) -> None:
        async with self.write_lock:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
            sys.stdout.flush()

    async def update(self, session_id: str, update: dict[str, Any]) -> None:
        await self.send(
            {"method": "session/update", "params": {"sessionId": session_id, "update": update}}
        )

    # --- negotiation ---------------------------------------------------------------------

    def methods(self) -> list[dict[str, Any]]:
        key = "methodId" if V2 else "id"
        methods: list[dict[str, Any]] = []
        if "agent" in AUTH:
            methods.append({key: "agent-login", "name": "Log in with the agent"})
        if "env_var" in AUTH:
            methods.append(
                {
                    "type": "env_var",
                    key: "api-key",
                    "name": "API key",
                    "vars": [{"name": "SESSIONS_AGENT_KEY"}],
                }
            )
        offered = self.offered.get("auth") or {}
        if "terminal" in AUTH and offered.get("terminal") not in (None, False):
            env: Any = [{"name": "LOGIN_MODE", "value": "tui"}] if V2 else {"LOGIN_MODE": "tui"}
            methods.append(
                {"type": "terminal", key: "tui", "name": "Log in", "args": ["--login"], "env": env}
            )
        return methods

    def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        info = {"name": "sessions-agent", "version": "0.1"}
        if V2:
            self.offered = params.get("capabilities") or {}
            session: dict[str, Any] = {}
            for name in ("delete", "fork"):
                if name in OFFERS:
                    session[name] = {}
            return {
                "protocolVersion": 2,
                "info": info,
                "capabilities": {"session": session},
                "authMethods": self.methods(),
            }
        self.offered = params.get("clientCapabilities") or {}
        caps: dict[str, Any] = {"loadSession": "load" in OFFERS}
        session = {
            name: {} for name in ("list", "resume", "close", "delete", "fork") if name in OFFERS
        }
        caps["sessionCapabilities"] = session
        if "logout" in OFFERS:
            caps["auth"] = {"logout": {}}
        return {
            "protocolVersion": 1,
            "agentCapabilities": caps,
            "agentInfo": info,
            "authMethods": self.methods(),
        }

    # --- requests ------------------------------------------------------------------------

    async def replay(self, session_id: str) -> None:
        for update in self.stored.get(session_id, []):
            await self.update(session_id, update)

    def session_answer(self) -> dict[str, Any]:
        if V2:
            return {}
        return {
            "modes": {
                "currentModeId": "ask",
                "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}],
            }
        }

    async def handle(self, method: str, params: dict[str, Any]) -> Any:
        if method == "initialize":
            return self.initialize(params)
        if method in ("authenticate", "auth/login"):
            self.logged_in = True
            return {}
        if method in ("logout", "auth/logout"):
            self.logged_in = False
            return {}
        if method == "session/new":
            if _flag("--require-login") and not (self.logged_in or MARK.exists()):
                raise RpcFailure(-32000, "Authentication required")
            self.made += 1
            session_id = f"s-{self.made}"
            self.stored[session_id] = []
            self.open.add(session_id)
            self.cwds[session_id] = params.get("cwd", "")
            return {"sessionId": session_id, **self.session_answer()}
        if method in ("session/load", "session/resume"):
            session_id = params.get("sessionId")
            if session_id not in self.stored:
                raise RpcFailure(-32002, f"no session {session_id}")
            if method == "session/load" or params.get("replayFrom"):
                await self.replay(session_id)
            self.open.add(session_id)
            return self.session_answer()
        if method == "session/fork":
            source = params.get("sessionId")
            if source not in self.stored:
                raise RpcFailure(-32002, f"no session {source}")
            self.forks += 1
            session_id = f"fork-{self.forks}"
            self.stored[session_id] = list(self.stored[source])
            self.open.add(session_id)
            return {"sessionId": session_id}
        if method == "session/list":
            names = sorted(self.stored)
            start = int(params.get("cursor") or 0)
            page = names[start : start + PAGE]
            answer: dict[str, Any] = {
                "sessions": [
                    {"sessionId": name, "cwd": params.get("cwd") or "/", "title": f"Session {name}"}
                    for name in page
                ]
            }
            if start + PAGE < len(names):
                answer["nextCursor"] = str(start + PAGE)
            return answer
        if method == "session/close":
            self.open.discard(params.get("sessionId"))
            return {}
        if method == "session/delete":
            self.stored.pop(params.get("sessionId"), None)
            return {}
        if method == "session/set_mode":
            return {}
        if method == "session/prompt":
            return await self.prompt(params)
        raise RpcFailure(-32601, f"method not found: {method}")

    async def prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        session_id = params["sessionId"]
        words = "".join(b.get("text", "") for b in params.get("prompt", []))
        cancel = self.cancels[session_id] = asyncio.Event()
        self.stored.setdefault(session_id, []).append(
            {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": words}}
        )
        if words.startswith("poke "):
            # Read a file for another session (maybe closed by the client): what answered?
            other = words.split(" ", 1)[1]
            path = os.path.join(self.cwds.get(session_id, ""), "existing.txt")
            answer = await self.ask("fs/read_text_file", {"sessionId": other, "path": path})
            said = "read" if "result" in answer else f"refused: {answer['error']['message']}"
            await self.update(
                session_id,
                {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": said}},
            )
            return {"stopReason": "end_turn"}
        if words.startswith("env "):  # what the agent's environment holds
            value = os.environ.get(words.split(" ", 1)[1], "unset")
            await self.update(
                session_id,
                {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": value},
                },
            )
            return {"stopReason": "end_turn"}
        if words == "crash":  # the agent dies mid-turn
            await self.update(
                session_id,
                {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "dying"},
                },
            )
            self.keep()
            os._exit(3)
        if words == "slow":
            await self.update(
                session_id,
                {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "working"},
                },
            )
            await cancel.wait()
            return {"stopReason": "cancelled"}
        reply = f"{session_id}: {words}"
        await self.update(
            session_id,
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": reply}},
        )
        self.stored[session_id].append(
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": reply}}
        )
        return {"stopReason": "end_turn"}

    def notified(self, method: str, params: dict[str, Any]) -> None:
        if method == "session/cancel":
            event = self.cancels.get(params.get("sessionId", ""))
            if event is not None:
                event.set()

    async def serve(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params") or {}
        if method is None:
            waiting = self.asked.get(message.get("id"))  # type: ignore[arg-type]
            if waiting is not None and not waiting.done():
                waiting.set_result(message)
            return
        if LOG:
            with open(LOG, "a", encoding="utf-8") as log:
                log.write(json.dumps({"method": method, "params": params}) + "\n")
        if "id" not in message:
            self.notified(str(method), params)
            return
        try:
            result = await self.handle(str(method), params)
            self.keep()
        except RpcFailure as failure:
            await self.send(
                {"id": message["id"], "error": {"code": failure.code, "message": failure.message}}
            )
            return
        await self.send({"id": message["id"], "result": result})


class RpcFailure(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def terminal_login() -> int:
    """The terminal login: asks, and marks the folder logged in on ``yes``."""
    sys.stdout.write(f"Log in as the agent ({os.environ.get('LOGIN_MODE')})? ")
    sys.stdout.flush()
    if sys.stdin.readline().strip() != "yes":
        return 1
    MARK.write_text("yes\n")
    return 0


async def main() -> None:
    agent = Agent()
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    tasks: set[asyncio.Task[None]] = set()
    while line := await reader.readline():
        task = asyncio.create_task(agent.serve(json.loads(line)))
        tasks.add(task)
        task.add_done_callback(tasks.discard)


if __name__ == "__main__":
    if _flag("--login"):
        sys.exit(terminal_login())
    asyncio.run(main())
