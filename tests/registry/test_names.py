"""Knowing a registry agent by its ``initialize`` name: normalization, matching, aliases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_adapters.registry import ALIASES, RegistryAgent, bundled_registry, match_agent, normalized

CAPTURES = Path(__file__).parent.parent / "data" / "captures"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("@agentclientprotocol/claude-agent-acp", "claude"),
        ("@zed-industries/claude-code-acp", "claude-code"),
        ("Claude Code", "claude-code"),
        ("codex-acp", "codex"),
        ("Codex", "codex"),
        ("Kimi Code CLI", "kimi-code"),
        ("Gemini CLI", "gemini"),
        ("gemini-cli", "gemini"),
        ("@google/gemini-cli@0.37.1", "gemini"),
        ("  OpenCode  ", "opencode"),
        ("qwen_code", "qwen-code"),
        ("Mistral Vibe", "mistral-vibe"),
        ("vibe-acp", "vibe"),
        ("fast-agent-acp", "fast"),
        ("agent", "agent"),  # a suffix is never the whole name
        ("acp", "acp"),
        ("-cli-", "cli"),
        ("", ""),
        ("Ünïcode ✨ Agent", "ncode"),
    ],
)
def test_normalized(name: str, expected: str) -> None:
    assert normalized(name) == expected


AGENTS = bundled_registry().agents


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # the agentInfo names of the real agents recorded in tests/data and the shared captures
        ("@agentclientprotocol/claude-agent-acp", "claude-acp"),
        ("@zed-industries/claude-code-acp", "claude-code-acp"),
        ("codex-acp", "codex-acp"),
        ("Kimi Code CLI", "kimi"),  # an alias: nothing in the entry says "code"
        # the entries' own names, ids, packages and binary cmds, in other cases and forms
        ("Gemini CLI", "gemini"),
        ("gemini-cli", "gemini"),
        ("GEMINI", "gemini"),
        ("@google/gemini-cli", "gemini"),
        ("OpenCode", "opencode"),
        ("opencode", "opencode"),
        ("Claude Agent", "claude-acp"),
        ("Claude Code", "claude-code-acp"),
        ("claude_code", "claude-code-acp"),
        ("Qwen Code", "qwen-code"),
        ("@qwen-code/qwen-code", "qwen-code"),
        ("qodercli", "qoder"),
        ("Qoder CLI", "qoder"),
        ("droid", "factory-droid"),
        ("vibe-acp", "mistral-vibe"),
        ("Mistral Vibe", "mistral-vibe"),
        ("copilot-language-server", "github-copilot"),
        ("GitHub Copilot", "github-copilot"),
        ("Auggie CLI", "auggie"),
        ("@augmentcode/auggie", "auggie"),
        ("kimi-cli", "kimi"),
        ("@xai-official/grok", "grok-build"),
        ("@zed-industries/codex-acp", "codex-acp"),  # an alias: codex-acp's older package
    ],
)
def test_real_names_match_their_entry(name: str, expected: str) -> None:
    agent = match_agent(name, AGENTS)
    assert agent is not None, name
    assert agent.id == expected


@pytest.mark.parametrize(
    "name",
    [
        "sdk-agent",  # the official SDK's example agents, and this project's test agents
        "pattern-agent",
        "sdk-scripted-edit-agent",
        "fast-agent-acp",  # a real agent, not in this registry
        "acp-adapters",
        "terminal-agent",
        "fake-agent",
        "agent",
        "",
        "   ",
        None,
        "x" * 500,
        "claude-codex",
    ],
)
def test_other_names_match_nothing(name: str | None) -> None:
    assert match_agent(name, AGENTS) is None


def test_the_captured_agent_names_are_known() -> None:
    """Every agentInfo name in the captures under tests/data that is a registry agent matches."""
    names: set[str] = set()
    for path in CAPTURES.rglob("*.jsonl"):
        for line in path.read_text(errors="replace").splitlines():
            try:
                message = json.loads(line).get("msg", {})
            except (ValueError, AttributeError):
                continue
            result: Any = message.get("result") if isinstance(message, dict) else None
            info = result.get("agentInfo") if isinstance(result, dict) else None
            if isinstance(info, dict) and isinstance(info.get("name"), str):
                names.add(info["name"])
    known = {name: match_agent(name, AGENTS) for name in names}
    matched = {name: agent.id for name, agent in known.items() if agent is not None}
    expected = {
        "codex-acp": "codex-acp",
        "@agentclientprotocol/claude-agent-acp": "claude-acp",
        "@zed-industries/claude-code-acp": "claude-code-acp",
        "Kimi Code CLI": "kimi",
    }
    assert {k: v for k, v in expected.items() if k in names} == {
        k: v for k, v in matched.items() if k in expected
    }
    assert set(matched) <= set(expected)  # no test agent is taken for a registry one


def _entry(agent_id: str, name: str, package: str) -> RegistryAgent:
    return RegistryAgent.model_validate(
        {
            "id": agent_id,
            "name": name,
            "version": "1.0.0",
            "description": "d",
            "distribution": {"npx": {"package": package}},
        }
    )


def test_an_ambiguous_name_matches_nothing() -> None:
    one = _entry("foo-one", "Foo", "@a/foo")
    two = _entry("foo-two", "Foo CLI", "@b/foo")
    assert match_agent("foo-cli", [one, two]) is None  # both normalize to "foo"
    assert match_agent("Foo", [one, two]) is one  # the exact name decides first
    assert match_agent("@b/foo", [one, two]) is two
    assert match_agent("foo-two", [one, two]) is two


def test_an_exact_name_wins_over_a_normalized_one() -> None:
    plain = _entry("claude", "Claude", "claude@1.0.0")
    code = _entry("claude-code", "Claude Code", "@x/claude-code-acp")
    assert match_agent("claude-code", [plain, code]) is code
    assert match_agent("Claude Agent", [plain, code]) is plain  # normalized: "claude"


def test_aliases_are_per_entry_and_can_be_replaced() -> None:
    assert "Kimi Code CLI" in ALIASES["kimi"]
    custom = {"gemini": ("Blue Sky",)}
    agent = match_agent("blue sky", AGENTS, aliases=custom)
    assert agent is not None
    assert agent.id == "gemini"
    assert match_agent("Kimi Code CLI", AGENTS, aliases=custom) is None
