"""A scripted agent on the official Python SDK with modes, config options and reports.

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
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import acp
from acp import schema
from acp.helpers import start_tool_call, update_agent_message_text, update_tool_call

SESSION = "cli-session"
MODES = (("ask", "Ask"), ("code", "Code"))
MODELS = (("small", "Small model"), ("large", "Large model"))
EFFORTS = (("low", "Low"), ("medium", "Medium"), ("high", "High"))
ASK = [
    schema.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
    schema.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
]


class CliAgent:
    """An ``acp.Agent`` that offers modes and config options and keeps what it was sent."""

    def __init__(self, flags: set[str]) -> None:
        self.client: Any = None
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

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    async def initialize(self, protocol_version: int, **_: Any) -> schema.InitializeResponse:
        return schema.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=schema.AgentCapabilities(),
            agent_info=schema.Implementation(name="cli-agent", version="0.1.0"),
        )

    def _options(self) -> list[Any]:
        options: list[Any] = []
        for key, name, category, choices in (
            ("model", "Model", "model", MODELS),
            ("effort", "Effort", "thought_level", EFFORTS),
        ):
            if key in self.values:
                options.append(
                    schema.SessionConfigOptionSelect(
                        id=key,
                        name=name,
                        type="select",
                        category=category,
                        current_value=str(self.values[key]),
                        options=[
                            schema.SessionConfigSelectOption(value=value, name=label)
                            for value, label in choices
                        ],
                    )
                )
        options.append(
            schema.SessionConfigOptionBoolean(
                id="fast", name="Fast mode", type="boolean", current_value=bool(self.values["fast"])
            )
        )
        return options

    async def new_session(self, cwd: str, **_: Any) -> Any:
        modes = None
        if "no-modes" not in self.flags:
            modes = schema.SessionModeState(
                current_mode_id=self.mode,
                available_modes=[schema.SessionMode(id=i, name=n) for i, n in MODES],
            )
        answer = schema.NewSessionResponse(
            session_id=SESSION, modes=modes, config_options=self._options()
        )
        if "legacy-models" not in self.flags:
            return answer
        wire = answer.model_dump(mode="json", by_alias=True, exclude_none=True)
        wire["models"] = {
            "currentModelId": "small",
            "availableModels": [{"modelId": i, "name": n} for i, n in MODELS],
        }
        return wire

    async def set_session_mode(self, session_id: str, mode_id: str, **_: Any) -> Any:
        self.received["set_mode"].append(mode_id)
        if "no-modes" in self.flags or mode_id not in dict(MODES):
            raise acp.RequestError.invalid_params({"modeId": mode_id})
        self.mode = mode_id
        return schema.SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **_: Any
    ) -> schema.SetSessionConfigOptionResponse:
        self.received["set_config_option"].append([config_id, value])
        choices = {"model": MODELS, "effort": EFFORTS}.get(config_id)
        if config_id not in self.values:
            raise acp.RequestError.invalid_params({"configId": config_id})
        if choices is None and not isinstance(value, bool):
            raise acp.RequestError.invalid_params({"value": value})
        if choices is not None and value not in dict(choices):
            raise acp.RequestError.invalid_params({"value": value})
        self.values[config_id] = value
        return schema.SetSessionConfigOptionResponse(config_options=self._options())

    async def cancel(self, session_id: str, **_: Any) -> None:
        self.received["cancel"].append(session_id)
        self.cancelled.set()

    async def say(self, text: str) -> None:
        await self.client.session_update(SESSION, update_agent_message_text(text))

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> Any:
        words = "".join(getattr(block, "text", "") for block in prompt)
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
            for update in (
                schema.UsageUpdate(
                    session_update="usage_update",
                    used=1200,
                    size=200000,
                    cost=schema.Cost(amount=0.02, currency="USD"),
                ),
                schema.SessionInfoUpdate(
                    session_update="session_info_update", title="Fixing the parser"
                ),
            ):
                await self.client.session_update(SESSION, update)
            await self.say("reported")
        elif words == "wait":
            await self.say("waiting to be cancelled\n")
            await self.cancelled.wait()
            await self.say("cancelled")
            return schema.PromptResponse(stop_reason="cancelled")
        elif words == "stubborn":
            await self.say("never ending")
            await asyncio.Event().wait()
        elif words == "clean":
            return await self.clean()
        else:
            await self.say(f"you said: {words}")
        return schema.PromptResponse(stop_reason="end_turn")

    async def clean(self) -> schema.PromptResponse:
        command = {"command": "rm -rf build"}
        await self.client.session_update(
            SESSION,
            start_tool_call(
                "clean-1", "rm -rf build", kind="execute", status="pending", raw_input=command
            ),
        )
        answer = await self.client.request_permission(
            session_id=SESSION,
            tool_call=schema.ToolCallUpdate(tool_call_id="clean-1", title="rm -rf build"),
            options=ASK,
        )
        outcome = answer.outcome
        said = outcome.option_id if outcome.outcome == "selected" else outcome.outcome
        await self.client.session_update(
            SESSION,
            update_tool_call("clean-1", status="completed" if said == "allow" else "failed"),
        )
        await self.say(f"permission: {said}")
        # A question the client cancelled is the turn being cancelled: its cancel follows.
        if said == "cancelled" or self.cancelled.is_set():
            return schema.PromptResponse(stop_reason="cancelled")
        return schema.PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(acp.run_agent(CliAgent(set(sys.argv[1:]))))
