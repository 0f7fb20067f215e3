"""How the real agents run offline: their command, environment, and the model's script.

The agents talk to :class:`~peers.fake_model_server.FakeModelServer` on
127.0.0.1. The server plays a script: for each prompt of the session (a turn),
the steps the model takes, one per call, advanced by the tool results that came
back since that prompt. Side calls (titles, summaries) get a short text: by
default the calls without tools; Grok's side calls carry tools, and
:func:`grok_side_call` tells them apart.
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
    prompts: Sequence[str],
    turns: Sequence[Sequence[Step]],
    api: str,
    side_call: Callable[[Body], bool] | None = None,
) -> Callable[[Body], Step]:
    """The model's side of a session: ``turns[i]`` answers ``prompts[i]``, a step a call.

    ``api`` is ``"anthropic"`` (Messages: tool results are ``tool_result`` blocks of user
    messages) or ``"responses"`` (OpenAI Responses: ``function_call_output`` input items).
    ``side_call`` tells the calls that are not the turn's (default: those without tools);
    they get a short text and do not advance the script.
    """
    is_side_call = side_call or _without_tools

    def step(body: Body) -> Step:
        if is_side_call(body):
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


def _without_tools(body: Body) -> bool:
    return not body.get("tools")


#: The model Grok's config names for the turns (:func:`grok`); its own side calls name others.
GROK_MODEL = "fake-model"
#: How Grok's side calls to the configured model ask: the last input, a user message in
#: ``<system-reminder>`` tags. Other reminders can end a turn's call, so only these count.
GROK_SIDE_ASKS = ("Write an ultra-short dashboard line", "Generate a session title")


def grok_side_call(body: Body) -> bool:
    """Grok's calls that are not the turn's: all carry tools, and some repeat the prompt.

    * the first session title: model ``grok-4.6`` whatever the config says, with one
      ``session_title`` tool, concurrent with the turn's first call;
    * after each turn, a summary (the "dashboard line"), and from the second turn on a
      new session title, both to the configured model with the whole tool list and the
      history: the summary's ask quotes the prompt, so it would read as its first call.
    """
    if body.get("model") != GROK_MODEL:
        return True
    entries = body.get("input") or body.get("messages") or []
    last = entries[-1] if isinstance(entries, list) and entries else None
    if not isinstance(last, dict):
        return False
    said = _text_of(last)
    return said.startswith("<system-reminder>") and any(ask in said for ask in GROK_SIDE_ASKS)


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


def claude(agents_bin: Path, home: Path, server: FakeModelServer) -> Launch:
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


def codex(agents_bin: Path, home: Path, server: FakeModelServer) -> Launch:
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


def grok(agents_bin: Path, home: Path, server: FakeModelServer) -> Launch:
    """Grok Build's command and environment: a fake model in a fresh ``~/.grok/config.toml``.

    The config's model is the session's default and carries its own key, so no
    ``authenticate`` is needed. The environment points every endpoint Grok knows
    (the model list included) at the fake server, so nothing leaves 127.0.0.1.
    """
    grok_home = home / ".grok"
    grok_home.mkdir(exist_ok=True)
    (grok_home / "config.toml").write_text(
        "auto_update = false\n"
        "[models]\n"
        'default = "fake"\n'
        "[model.fake]\n"
        f'model = "{GROK_MODEL}"\n'
        'name = "Fake Model"\n'
        f'base_url = "{server.openai_base_url}"\n'
        'api_key = "dummy-key"\n'
        'api_backend = "responses"\n'
        "context_window = 128000\n"
        "[features]\n"
        "telemetry = false\n",
        encoding="utf-8",
    )
    env = {
        "HOME": str(home),
        "GROK_HOME": str(grok_home),  # else a GROK_HOME of this machine would be used
        "XAI_API_KEY": "dummy-key",
        "GROK_MODELS_BASE_URL": server.openai_base_url,
        "GROK_XAI_API_BASE_URL": server.openai_base_url,
        "GROK_TELEMETRY_ENABLED": "0",
        "GROK_DISABLE_AUTOUPDATER": "1",
    }
    return [str(agents_bin / "grok"), "agent", "stdio"], env
