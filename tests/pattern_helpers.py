"""The traffic patterns of real agents that ``agents/pattern_agent.py`` plays, and their truth.

Each pattern is a prompt to that agent; :data:`PATTERNS` says how the application
answers it (the policy, the answer to a permission request, whether the client reads
the disk around edits). :func:`check_pattern` asserts what a session of the pattern
must show, from its items and the workspace before and after: live
(``client/test_patterns.py``) and from its recording (``contract/test_patterns.py``).
Patches are checked by applying them (``apply_patch``), never by their text, plus
the header facts a pattern names.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from acp_adapters import (
    ApprovalRequestItem,
    CommandExecutionItem,
    FileChangeItem,
    PermissionQuery,
    TimelineItem,
)
from diff_helpers import apply_patch

PATTERN_AGENT = [sys.executable, str(Path(__file__).parent / "agents" / "pattern_agent.py")]
RECORDED = Path(__file__).parent / "data" / "recorded"
#: The recordings' name for the workspace folder.
WORKSPACE = "<workspace>"
EXISTING_BEFORE = "alpha\nbeta\n"


@dataclass(frozen=True)
class Pattern:
    """How the application meets one pattern."""

    #: ``full-access``, or ``ask``: the permission request is answered ``answer``.
    policy: Literal["full-access", "ask"] = "full-access"
    answer: Literal["allow_once", "reject_once"] | None = None
    #: Whether the client reads the files an edit names around it (``connect(disk_patches=)``).
    disk_patches: bool = True

    def connect_options(self) -> dict[str, Any]:
        """The options of ``acp_adapters.connect`` that give the application's answers."""
        options: dict[str, Any] = {"policy": self.policy}
        if self.answer is not None:
            options["ask"] = answering(self.answer)
        if not self.disk_patches:
            options["disk_patches"] = False
        return options


PATTERNS: dict[str, Pattern] = {
    "fs-write-fragment": Pattern(),
    "create-locations-only": Pattern(),
    "rejected-no-tool-call": Pattern(policy="ask", answer="reject_once"),
    "no-oldtext-existing": Pattern(policy="ask", answer="allow_once"),
    "write-then-tool-call": Pattern(),
    "empty-oldtext-missing": Pattern(),
    "empty-oldtext-unknown": Pattern(disk_patches=False),
    "command-output": Pattern(),
}


#: What the agent sends in each pattern's turn: its requests and its tool-call updates.
AGENT_SENDS: dict[str, list[str]] = {
    "fs-write-fragment": ["tool_call", "fs/write_text_file", "tool_call_update"],
    "create-locations-only": ["tool_call", "tool_call_update"],
    "rejected-no-tool-call": ["session/request_permission"],
    "no-oldtext-existing": ["session/request_permission", "tool_call_update"],
    "write-then-tool-call": ["fs/write_text_file", "tool_call"],
    "empty-oldtext-missing": [
        "fs/read_text_file",
        "tool_call",
        "fs/write_text_file",
        "tool_call_update",
    ],
    "empty-oldtext-unknown": ["tool_call"],
    "command-output": ["tool_call", "tool_call_update", "tool_call", "tool_call_update"],
}


def agent_sends(capture: Path) -> list[str]:
    """The agent's requests (their methods) and session updates (their kinds) after the
    prompt, as a capture recorded them."""
    sent: list[str] = []
    prompted = False
    for line in capture.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        message = entry.get("msg") if isinstance(entry, dict) else None
        if not isinstance(message, dict):
            continue
        method = message.get("method")
        if method == "session/prompt":
            prompted = True
        elif prompted and entry.get("dir") == "agent->client" and isinstance(method, str):
            update = message.get("params", {}).get("update", {})
            sent.append(update.get("sessionUpdate", method) if update else method)
    return sent


def answering(kind: str) -> Callable[[PermissionQuery], Any]:
    """An ``ask`` callback that picks the option of ``kind``, as the recordings' does."""

    async def ask(query: PermissionQuery) -> str | None:
        return next((str(o["optionId"]) for o in query.options if o.get("kind") == kind), None)

    return ask


def recording(pattern: str) -> Path:
    """Where ``tests/peers/record_scenarios.py --only patterns`` writes a pattern's session."""
    return RECORDED / f"patterns-{pattern}.jsonl"


def recorded_files(capture: Path) -> tuple[dict[str, str], dict[str, str]]:
    """The workspace before and after, beside a recording (``<workspace>/name`` -> text)."""
    files = json.loads(capture.with_suffix(".files.json").read_text(encoding="utf-8"))
    return files["before"], files["after"]


def workspace_files(folder: Path) -> dict[str, str]:
    """A live workspace's files: absolute path -> text."""
    return {
        str(path): path.read_text(encoding="utf-8")
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def portable(item: TimelineItem, root: str) -> dict[str, Any]:
    """What a recording must give again of an item: its facts with ``root`` as ``<workspace>``."""
    fields = (
        ("kind", "status", "operations", "additions", "deletions", "patch_source", "diff_str")
        if isinstance(item, FileChangeItem)
        else ("kind", "status", "command", "output", "exit_code")
    )
    facts = {name: getattr(item, name) for name in fields}
    mapped: dict[str, Any] = json.loads(json.dumps(facts).replace(root, WORKSPACE))
    return mapped


def check_pattern(
    pattern: str,
    items: Sequence[TimelineItem],
    root: str,
    before: dict[str, str],
    after: dict[str, str],
) -> None:
    """Assert what a session of ``pattern`` shows: its true patch, or its commands' output.

    ``root`` is the workspace folder as the items name it (the live folder, or
    ``<workspace>`` in a recording); ``before`` and ``after`` map ``root/name`` to the
    files' text before and after the session.
    """
    changes = [i for i in items if isinstance(i, FileChangeItem)]
    commands = [i for i in items if isinstance(i, CommandExecutionItem)]
    approvals = [i for i in items if isinstance(i, ApprovalRequestItem)]
    existing, new, notes = (f"{root}/{name}" for name in ("existing.txt", "new.txt", "notes.txt"))
    _expect("the workspace before", before, {existing: EXISTING_BEFORE})
    if pattern == "command-output":
        _expect("file changes", changes, [])
        _expect(
            "the commands",
            [(c.command, c.status, c.output) for c in commands],
            [
                ("ls", "completed", "file-a\n"),  # the stdout beside an empty "output"
                ("echo hello", "completed", "hello\n"),  # only in the content's text
            ],
        )
        _expect("the workspace after", after, before)
        return
    assert len(changes) == 1, f"one file_change, not {len(changes)}: {list(items)}"
    (change,) = changes
    patch = change.diff_str
    assert patch is not None, f"no patch: {change}"
    old_header = patch.splitlines()[0]
    if pattern in ("rejected-no-tool-call", "no-oldtext-existing"):
        assert len(approvals) == 1, approvals
        answer = "reject_once" if pattern == "rejected-no-tool-call" else "allow_once"
        _expect("the answer", approvals[0].option_kind, answer)
        _expect("the file_change's tool call", change.tool_call_id, approvals[0].tool_call_id)
    if pattern == "rejected-no-tool-call":
        _expect("the status", change.status, "failed")
        assert new not in after, "new.txt was written"
    else:
        _expect("the status", change.status, "completed")
    if pattern in ("fs-write-fragment", "no-oldtext-existing", "write-then-tool-call"):
        _expect("existing.txt after", after[existing], "alpha\nBETA changed\n")
    if pattern == "fs-write-fragment":
        _expect("the operations", change.operations, {existing: "modify"})
        _applies(patch, before, {existing: after[existing]})
    elif pattern == "create-locations-only":
        _expect("notes.txt after", after[notes], "first note\n")
        _expect("the operations", change.operations, {notes: "add"})
        _expect("the old header", old_header, "--- /dev/null")
        _applies(patch, {}, {notes: after[notes]})
    elif pattern == "rejected-no-tool-call":
        _expect("the operations", change.operations, {new: "add"})
        _expect("the old header", old_header, "--- /dev/null")
        _applies(patch, {}, {new: "brand new\n"})  # what it proposed
    elif pattern == "no-oldtext-existing":
        _expect("the operations", change.operations, {existing: "modify"})
        _expect("the old header", old_header, f"--- {existing}")  # the file was there
        _applies(patch, before, {existing: after[existing]})
    elif pattern == "write-then-tool-call":
        assert change.diff_omitted_reason != "unchanged", f"unchanged: {change}"
        _expect("the patch source", change.patch_source, "checkpoint")
        (named,) = change.paths  # the agent named it relatively: either name is the file
        assert named in (existing, "existing.txt"), named
        _applies(patch, {named: before[existing]}, {named: after[existing]})
    elif pattern == "empty-oldtext-missing":
        _expect("new.txt after", after[new], "brand new\n")
        _expect("the operations", change.operations, {new: "add"})
        _expect("the old header", old_header, "--- /dev/null")
        _applies(patch, {}, {new: after[new]})
    elif pattern == "empty-oldtext-unknown":
        # Nothing could be checked: the agent's "empty old file" stands, a file named.
        assert new not in after, "the agent wrote nothing: its report is all there is"
        _expect("the old header", old_header, f"--- {new}")
        _applies(patch, {new: ""}, {new: "brand new\n"})
    else:
        raise AssertionError(f"unknown pattern {pattern}")


def _expect(what: str, actual: object, expected: object) -> None:
    assert actual == expected, f"{what}: {actual!r}, expected {expected!r}"


def _applies(patch: str, old: dict[str, str], new: dict[str, str]) -> None:
    """The patch, applied to the old texts, gives the new ones."""
    try:
        result = apply_patch(patch, old)
    except AssertionError as error:
        raise AssertionError(f"the patch does not apply: {error}\n{patch}") from None
    assert result == new, f"the patch gives {result!r}, expected {new!r}\n{patch}"
