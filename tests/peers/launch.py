"""How the real agents run offline: their command, environment, and the model's script.

Both agents talk to :class:`~peers.fake_model_server.FakeModelServer` on
127.0.0.1. The server plays a script: for each prompt of the session (a turn),
the steps the model takes, one per call, advanced by the tool results that came
back since that prompt. Calls without tools (titles, summaries) get a short text.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from peers.fake_model_server import FakeModelServer, Step, Text

Body = dict[str, Any]
#: An agent's command line and the environment it needs.
Launch = tuple[list[str], dict[str, str]]


def script(
    prompts: Sequence[str], turns: Sequence[Sequence[Step]], api: str
) -> Callable[[Body], Step]:
    """The model's side of a session: ``turns[i]`` answers ``prompts[i]``, a step a call.

    ``api`` is ``"anthropic"`` (Messages: tool results are ``tool_result`` blocks of user
    messages) or ``"responses"`` (OpenAI Responses: ``function_call_output`` input items).
    """

    def step(body: Body) -> Step:
        if not body.get("tools"):
            return Text("side answer")
        entries = body.get("messages" if api == "anthropic" else "input") or []
        turn, results = 0, 0
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            said = _text_of(entry)
            for index, prompt in enumerate(prompts):
                if prompt in said:
                    turn, results = index, 0
            results += _results_in(entry, api)
        plan = turns[min(turn, len(turns) - 1)]
        return plan[min(results, len(plan) - 1)]

    return step


def _text_of(entry: Body) -> str:
    """The text a user message carries (the prompt is in one of its blocks)."""
    if entry.get("role") != "user":
        return ""
    content = entry.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(block.get("text", "")) for block in content if isinstance(block, dict))
    return ""


def _results_in(entry: Body, api: str) -> int:
    if api == "responses":
        return 1 if entry.get("type") == "function_call_output" else 0
    content = entry.get("content")
    if not isinstance(content, list):
        return 0
    return sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool_result")


def claude(
    agents_bin: Path, home: Path, server: FakeModelServer
) -> tuple[list[str], dict[str, str]]:
    """claude-agent-acp's command and environment: the fake server, a dummy key, a fresh home."""
    env = {
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "dummy-key",
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    if os.geteuid() == 0:
        env["IS_SANDBOX"] = "1"  # it refuses to run as root otherwise
    return [str(agents_bin / "claude-agent-acp")], env


def codex(
    agents_bin: Path, home: Path, server: FakeModelServer
) -> tuple[list[str], dict[str, str]]:
    """codex-acp's command and environment: a fake model provider, a fresh CODEX_HOME."""
    codex_home = home / ".codex"
    codex_home.mkdir(exist_ok=True)
    config = {
        "model_provider": '"fake"',
        "model": '"fake-model"',
        "model_providers.fake.name": '"fake"',
        "model_providers.fake.base_url": f'"{server.openai_base_url}"',
        "model_providers.fake.wire_api": '"responses"',
        "model_providers.fake.env_key": '"OPENAI_API_KEY"',
        "sandbox_mode": '"danger-full-access"',
        "approval_policy": '"untrusted"',
    }
    command = [str(agents_bin / "codex-acp")]
    for key, value in config.items():
        command += ["-c", f"{key}={value}"]
    env = {"CODEX_HOME": str(codex_home), "HOME": str(home), "OPENAI_API_KEY": "dummy-key"}
    return command, env
