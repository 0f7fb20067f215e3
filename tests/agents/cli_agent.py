"""A scripted agent with modes, config options and reports (standard library only).

    python cli_agent.py [no-model] [legacy-models] [no-modes]

Its sessions have two modes (``ask``, the current one, and ``code``) and three config
options: ``model`` (select, category ``model``: ``small``, the current one, or
``large``), ``effort`` (select, category ``thought_level``: ``low``, ``medium``,
``high``) and ``fast`` (boolean, off). ``no-model`` leaves the model option out;
``legacy-models`` leaves it out and lists models in the ``session/new`` answer the
way agents did before config options (``models``, for the unstable
``session/set_model``); ``no-modes`` offers no modes.

It keeps what it received (``session/set_mode``, ``session/set_config_option``, the
prompts, ``session/cancel``) and answers these prompts:

``settings``
    the mode and the options as they are now, in words;
``received``
    what it received so far, as JSON;
``report``
    reports the session: its usage (1200 of 200000 tokens, 0.02 USD) and its title
    (``Fixing the parser``);
``wait``
    waits until the turn is cancelled, says so, and ends it ``cancelled``;
``stubborn``
    never ends its turn, cancelled or not;
``clean``
    asks permission to run ``rm -rf build`` (allow or reject) and says what it was answered;

anything else is echoed back (``you said: ...``).

It speaks ACP v1 as the official Python SDK's agents do (it was one, and writes the
same messages), through ``stdio_rpc.py`` beside it.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stdio_rpc import (
    Connection,
    Params,
    RpcError,
    answer_initialize,
    prompt_text,
    string,
    text_chunk,
    tool_call,
    tool_call_update,
)

SESSION = "cli-session"
MODES = (("ask", "Ask"), ("code", "Code"))
MODELS = (("small", "Small model"), ("large", "Large model"))
EFFORTS = (("low", "Low"), ("medium", "Medium"), ("high", "High"))
ASK = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]


class CliAgent:
    """An agent that offers modes and config options and keeps what it was sent."""

    def __init__(self, flags: set[str]) -> None:
        self.client = Connection()
        self.flags = flags
        self.mode = "ask"
        self.values: dict[str, str | bool] = {"model": "small", "effort": "medium", "fast": False}
        if "no-model" in flags or "legacy-models" in flags:
            del self.values["model"]
        self.received: dict[str, list[Any]] = {
            "set_mode": [],
            "set_config_option": [],
            "prompt": [],
            "cancel": [],
        }
        self.cancelled = asyncio.Event()

    async def initialize(self, params: Params) -> dict[str, Any]:
        return answer_initialize("cli-agent", "0.1.0", {})

    def _options(self) -> list[dict[str, Any]]:
        options: list[dict[str, Any]] = []
        for key, name, category, choices in (
            ("model", "Model", "model", MODELS),
            ("effort", "Effort", "thought_level", EFFORTS),
        ):
            if key in self.values:
                options.append(
                    {
                        "currentValue": str(self.values[key]),
                        "options": [{"value": value, "name": label} for value, label in choices],
                        "id": key,
                        "name": name,
                        "category": category,
                        "type": "select",
                    }
                )
        options.append(
            {
                "currentValue": bool(self.values["fast"]),
                "id": "fast",
                "name": "Fast mode",
                "type": "boolean",
            }
        )
        return options

    async def new_session(self, params: Params) -> dict[str, Any]:
        string(params, "cwd")
        answer: dict[str, Any] = {"sessionId": SESSION}
        if "no-modes" not in self.flags:
            answer["modes"] = {
                "currentModeId": self.mode,
                "availableModes": [{"id": i, "name": n} for i, n in MODES],
            }
        answer["configOptions"] = self._options()
        if "legacy-models" in self.flags:
            answer["models"] = {
                "currentModelId": "small",
                "availableModels": [{"modelId": i, "name": n} for i, n in MODELS],
            }
        return answer

    async def set_session_mode(self, params: Params) -> dict[str, Any]:
        string(params, "sessionId")
        mode_id = string(params, "modeId")
        self.received["set_mode"].append(mode_id)
        if "no-modes" in self.flags or mode_id not in dict(MODES):
            raise RpcError.invalid_params({"modeId": mode_id})
        self.mode = mode_id
        return {}

    async def set_config_option(self, params: Params) -> dict[str, Any]:
        string(params, "sessionId")
        config_id = string(params, "configId")
        # A boolean option's value says so ("type": "boolean"); any other value is a choice.
        kind = bool if params.get("type") == "boolean" else str
        value = params.get("value")
        if not isinstance(value, kind):
            raise RpcError.invalid_params({"errors": [f"value: a {kind.__name__} is required"]})
        self.received["set_config_option"].append([config_id, value])
        choices = {"model": MODELS, "effort": EFFORTS}.get(config_id)
        if config_id not in self.values:
            raise RpcError.invalid_params({"configId": config_id})
        if choices is None and not isinstance(value, bool):
            raise RpcError.invalid_params({"value": value})
        if choices is not None and value not in dict(choices):
            raise RpcError.invalid_params({"value": value})
        self.values[config_id] = value
        return {"configOptions": self._options()}

    async def cancel(self, params: Params) -> None:
        self.received["cancel"].append(string(params, "sessionId"))
        self.cancelled.set()

    async def say(self, text: str) -> None:
        await self.client.update(SESSION, text_chunk(text))

    async def prompt(self, params: Params) -> dict[str, Any]:
        words = prompt_text(params)
        self.received["prompt"].append(words)
        self.cancelled.clear()
        if words == "settings":
            shown = [f"mode {self.mode}"] + [
                f"{key} {'on' if value is True else 'off' if value is False else value}"
                for key, value in self.values.items()
            ]
            await self.say(", ".join(shown))
        elif words == "received":
            await self.say(json.dumps(self.received, sort_keys=True))
        elif words == "report":
            usage = {
                "used": 1200,
                "size": 200000,
                "cost": {"amount": 0.02, "currency": "USD"},
                "sessionUpdate": "usage_update",
            }
            info = {"title": "Fixing the parser", "sessionUpdate": "session_info_update"}
            for update in (usage, info):
                await self.client.update(SESSION, update)
            await self.say("reported")
        elif words == "wait":
            await self.say("waiting to be cancelled\n")
            await self.cancelled.wait()
            await self.say("cancelled")
            return {"stopReason": "cancelled"}
        elif words == "stubborn":
            await self.say("never ending")
            await asyncio.Event().wait()
        elif words == "clean":
            return await self.clean()
        else:
            await self.say(f"you said: {words}")
        return {"stopReason": "end_turn"}

    async def clean(self) -> dict[str, Any]:
        command = {"command": "rm -rf build"}
        await self.client.update(
            SESSION,
            tool_call(
                "clean-1", "rm -rf build", kind="execute", status="pending", raw_input=command
            ),
        )
        answer = await self.client.request(
            "session/request_permission",
            {
                "sessionId": SESSION,
                "toolCall": {"toolCallId": "clean-1", "title": "rm -rf build"},
                "options": ASK,
            },
        )
        said = _outcome(answer)
        await self.client.update(
            SESSION,
            tool_call_update("clean-1", status="completed" if said == "allow" else "failed"),
        )
        await self.say(f"permission: {said}")
        # A question the client cancelled is the turn being cancelled: its cancel follows.
        if said == "cancelled" or self.cancelled.is_set():
            return {"stopReason": "cancelled"}
        return {"stopReason": "end_turn"}

    def serve(self) -> None:
        self.client.serve(
            {
                "initialize": self.initialize,
                "session/new": self.new_session,
                "session/set_mode": self.set_session_mode,
                "session/set_config_option": self.set_config_option,
                "session/prompt": self.prompt,
            },
            {"session/cancel": self.cancel},
        )


def _outcome(answer: Any) -> str:
    """The option a permission answer selected, or ``cancelled``; a malformed one refused."""
    outcome = answer.get("outcome") if isinstance(answer, dict) else None
    if isinstance(outcome, dict) and outcome.get("outcome") == "cancelled":
        return "cancelled"
    if isinstance(outcome, dict) and outcome.get("outcome") == "selected":
        return string(outcome, "optionId")
    raise RpcError.invalid_params({"errors": ["outcome: a permission outcome is required"]})


if __name__ == "__main__":
    CliAgent(set(sys.argv[1:])).serve()
