"""The Codex provider (codex-acp): who it is, how it starts, how its edits and commands read.

Facts from its traffic (captures of codex-acp 0.16.0):

* it answers protocol version 1, also when asked for 2;
* an apply_patch edit arrives as kind ``edit`` with whole-file v1 diffs (a new
  file has no ``oldText``), and ``rawInput.changes`` maps each path to codex's
  own change: ``{"type": "add", "content"}``, ``{"type": "update",
  "unified_diff", "move_path"}`` or ``{"type": "delete"}``; a rename is an update
  with a ``move_path``, and must show as a move, not a delete and an unrelated add;
* its permission requests carry the diff; its request ids are strings;
* a shell command it runs may arrive as kind ``read`` (codex parses ``cat x`` as a
  read) with ``rawInput.command`` the argument vector;
* its auth methods include ``{"type": "env_var", "vars": [...]}``.
"""

from __future__ import annotations

from typing import Any

from acp_adapters import LaunchSpec, Provider

PROVIDER_ID = "codex"

PROVIDER = Provider(
    id=PROVIDER_ID,
    name="Codex",
    description="OpenAI's Codex through codex-acp.",
    # As the ACP registry's entry for codex-acp gives it.
    launch=LaunchSpec(command="npx", args=("@agentclientprotocol/codex-acp@1.4.0",)),
    agent_names=("codex-acp",),
    protocol_version=1,
    env_needs=("OPENAI_API_KEY",),
)


def codex_changes(raw_input: Any) -> dict[str, dict[str, Any]]:
    """``rawInput.changes``: path -> codex's change object (what is not one is left out)."""
    changes = raw_input.get("changes") if isinstance(raw_input, dict) else None
    if not isinstance(changes, dict):
        return {}
    return {p: c for p, c in changes.items() if isinstance(p, str) and isinstance(c, dict)}


def moves(raw_input: Any) -> dict[str, str]:
    """Renames in ``rawInput.changes``: new path -> old path."""
    found = {}
    for path, change in codex_changes(raw_input).items():
        target = change.get("move_path")
        if isinstance(target, str) and target != path:
            found[target] = path
    return found


def command_line(raw_input: Any) -> str | None:
    """The command codex ran, when its raw input has one."""
    command = raw_input.get("command") if isinstance(raw_input, dict) else None
    if isinstance(command, list) and command and all(isinstance(p, str) for p in command):
        # codex runs commands as [shell, "-lc", script]: the script is what was asked.
        if len(command) == 3 and command[1] in ("-c", "-lc"):
            return str(command[2])
        return " ".join(command)
    return str(command) if isinstance(command, str) else None
