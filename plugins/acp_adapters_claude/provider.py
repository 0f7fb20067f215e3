"""The Claude provider (claude-agent-acp): who it is, how it starts, what it really changed.

Facts from its traffic (captures of claude-agent-acp 0.101.0):

* a tool call first arrives empty ("Preparing file…", empty ``rawInput``) and is
  filled in by later updates;
* a v1 Edit reports a fragment, not the file: ``oldText: "beta"``, later
  ``"alpha\\nbeta"`` without the file's final newline, so a patch built from it
  has wrong line numbers and a spurious ``\\ No newline at end of file``;
* the same tool call's ``_meta.claudeCode.toolResponse`` carries the truth:
  ``originalFile`` with a ``structuredPatch`` of real hunks (Edit), or the
  written ``content`` (Write: ``type`` ``create`` or ``update``);
* it implements the v2 draft: asked for version 2 with a v2-shaped request, it
  answers 2, and then sends real v2 diffs (``changes`` + ``patch.text``).
"""

from __future__ import annotations

from typing import Any

from acp_adapters import LaunchSpec, Provider

PROVIDER_ID = "claude"

PROVIDER = Provider(
    id=PROVIDER_ID,
    name="Claude Agent",
    description="Anthropic's Claude through claude-agent-acp.",
    # As the ACP registry's entry for claude-acp gives it.
    launch=LaunchSpec(command="npx", args=("@agentclientprotocol/claude-agent-acp@0.85.1",)),
    agent_names=("@agentclientprotocol/claude-agent-acp", "@zed-industries/claude-code-acp"),
    protocol_version=2,
    env_needs=("ANTHROPIC_API_KEY",),
)


def tool_response(meta: dict[str, Any]) -> dict[str, Any] | None:
    """``_meta.claudeCode.toolResponse``, when it is an object."""
    claude = meta.get("claudeCode")
    response = claude.get("toolResponse") if isinstance(claude, dict) else None
    return response if isinstance(response, dict) else None


def true_contents(response: dict[str, Any]) -> tuple[str, str | None, str] | None:
    """``(path, old content, new content)`` from a tool response, when it shows them.

    ``old`` is None for a file the tool created. None when the response does not
    carry enough (another tool's response, or a malformed one).
    """
    path = response.get("filePath")
    original = response.get("originalFile")
    if not isinstance(path, str) or not (original is None or isinstance(original, str)):
        return None
    content = response.get("content")
    if response.get("type") in ("create", "update") and isinstance(content, str):
        return path, original, content
    hunks = response.get("structuredPatch")
    if isinstance(original, str) and isinstance(hunks, list):
        new = apply_structured_patch(original, hunks)
        return (path, original, new) if new is not None else None
    return None


def apply_structured_patch(original: str, hunks: list[Any]) -> str | None:
    """Apply jsdiff-style structured hunks: ``oldStart``, and ``lines`` like ``" x"``, ``"-x"``.

    None when a hunk does not fit the original (its context or removed lines differ).
    """
    lines = original.split("\n") if original else []
    ends_with_newline = original.endswith("\n")
    if ends_with_newline:
        lines.pop()
    out: list[str] = []
    position = 0
    new_lacks_newline = False
    for hunk in hunks:
        if not isinstance(hunk, dict) or not isinstance(hunk.get("lines"), list):
            return None
        start = hunk.get("oldStart")
        if not isinstance(start, int):
            return None
        start = max(start - 1, 0) if hunk.get("oldLines") else start
        if start < position or start > len(lines):
            return None
        out.extend(lines[position:start])
        position = start
        previous = ""
        for line in hunk["lines"]:
            if not isinstance(line, str) or not line:
                return None
            mark, text = line[0], line[1:]
            if mark in " -":
                if position >= len(lines) or lines[position] != text:
                    return None
                position += 1
                if mark == " ":
                    out.append(text)
            elif mark == "+":
                out.append(text)
            elif mark == "\\":
                # "\ No newline at end of file": the line before ends its side.
                new_lacks_newline = new_lacks_newline or previous in ("+", " ")
            else:
                return None
            previous = mark
    reached_end = position == len(lines)
    out.extend(lines[position:])
    newline_at_end = not new_lacks_newline if reached_end else ends_with_newline
    text = "\n".join(out)
    return text + "\n" if out and newline_at_end else text
