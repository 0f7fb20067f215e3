"""The workspace scenarios that ``agents/workspace_agent.py`` plays, and what each must show.

Each scenario (:data:`SCENARIOS`) seeds a workspace, runs its prompts through a session
(and what the user does between them), and is checked by :func:`check_scenario` from the
timeline's items and the workspace before and after: live
(``client/test_workspace_agent.py``) and from its recording
(``contract/test_workspace_agent.py``, recorded by ``tests/peers/record_scenarios.py
--only workspace`` into ``data/recorded/workspace-<scenario>.jsonl``). Patches are checked
by applying them, never by their text, plus the facts a scenario names.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import acp_adapters
from acp_adapters import FileChangeItem, TimelineItem
from acp_adapters.client.checkpointing import Checkpointing
from acp_adapters.workspace.scan import CheckpointLimits
from diff_helpers import apply_patch

WORKSPACE_AGENT = [sys.executable, str(Path(__file__).parent / "agents" / "workspace_agent.py")]
RECORDED = Path(__file__).parent / "data" / "recorded"
MARK = "<workspace>"
NOTES = "".join(f"note {n}\n" for n in range(1, 11))
NOTES_TOP = "the first line, rewritten\n"
USER_BOTTOM = "note 10, as the user left it\n"
BIG_LINE = "a long line of a large log file, written by the agent\n"
LOGO = bytes(range(256)) * 4
#: The size cap the ``kinds`` scenario checkpoints with: big.log is over it.
SMALL_CAP = 64 * 1024

#: A file to seed: its text, or ``(bytes, mode)``.
Seed = str | tuple[bytes, int]
Between = Callable[[Path, int], None]


@dataclass(frozen=True)
class Scenario:
    """How one scenario runs: its files, prompts, what happens between turns."""

    prompts: tuple[str, ...]
    files: dict[str, Seed] = field(default_factory=lambda: {"existing.txt": "alpha\nbeta\n"})
    #: After turn N (1-based) ends: what the user (or a hostile agent's other process) does.
    between: Between | None = None
    limits: CheckpointLimits | None = None
    #: The scenario's prompts name the folder outside the workspace (``{outside}``).
    outside: bool = False


def _user_edits_the_bottom(ws: Path, turn: int) -> None:
    if turn == 1:
        notes = ws / "notes.txt"
        notes.write_text(notes.read_text().replace("note 10\n", USER_BOTTOM))


SCENARIOS: dict[str, Scenario] = {
    "self-write": Scenario(("self-write",)),
    "shell-change": Scenario(("shell-change",)),
    "kinds": Scenario(
        ("kinds",),
        files={
            "existing.txt": "alpha\nbeta\n",
            "gone.txt": "bye\n",
            "a.txt": "moving\n",
            "tool.sh": (b"#!/bin/sh\necho tool\n", 0o644),
        },
        limits=CheckpointLimits(max_file_bytes=SMALL_CAP),
    ),
    "user-edit-between-turns": Scenario(
        ("edit-top", "say hi"), files={"notes.txt": NOTES}, between=_user_edits_the_bottom
    ),
    "swapped-links": Scenario(("make-sub", "swap-links {outside}"), outside=True),
}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def snapshot(folder: Path, root: str) -> dict[str, dict[str, Any]]:
    """A folder's files as the checks read them: ``root/name`` -> its text (or SHA-256 and
    mode), or a link's target; links are not followed."""
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.rglob("*")):
        name = f"{root}/{path.relative_to(folder)}"
        if path.is_symlink():
            found[name] = {"link": os.readlink(path)}
        elif path.is_file():
            data = path.read_bytes()
            mode = stat.S_IMODE(path.stat().st_mode)
            try:
                if len(data) > SMALL_CAP:
                    raise UnicodeDecodeError("utf-8", data, 0, 1, "large: named by its hash")
                found[name] = {"text": data.decode("utf-8"), "mode": mode, "sha256": sha(data)}
            except UnicodeDecodeError:
                found[name] = {"sha256": sha(data), "mode": mode}
    return found


def seed(folder: Path, scenario: Scenario) -> None:
    for name, content in scenario.files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8")
            os.chmod(path, 0o644)
        else:
            path.write_bytes(content[0])
            os.chmod(path, content[1])


def outside_folder(ws: Path) -> Path:
    """The folder outside the workspace a scenario's links lead to: a file there, and a
    FIFO that a read through a link would block on forever."""
    outside = ws.parent / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "made.txt").write_text("OUTSIDE: never written or removed\n")
    if not (outside / "secret.txt").exists():
        os.mkfifo(outside / "secret.txt")
    return outside


async def run_scenario(
    name: str,
    ws: Path,
    *,
    connect: Callable[..., Any] = acp_adapters.connect,
    record: Path | None = None,
    store: Any = None,
    thread: str | None = None,
) -> list[acp_adapters.Turn]:
    """Run scenario ``name`` in ``ws`` (seeded: :func:`seed`) through a session (recorded to
    ``record``, kept in ``store``); its turns."""
    scenario = SCENARIOS[name]
    outside = outside_folder(ws) if scenario.outside else None
    checkpoints = Checkpointing(limits=scenario.limits) if scenario.limits else True
    turns: list[acp_adapters.Turn] = []
    async with connect(
        command=WORKSPACE_AGENT,
        cwd=ws,
        policy="full-access",
        record=record,
        store=store,
        thread=thread,
        checkpoints=checkpoints,
    ) as session:
        assert session.agent_info["name"] == "workspace-agent"
        for number, prompt in enumerate(scenario.prompts, 1):
            turn = await session.prompt(prompt.format(outside=outside))
            assert turn.stop_reason == "end_turn"
            turns.append(turn)
            if scenario.between is not None:
                scenario.between(ws, number)
    return turns


def recording(name: str) -> Path:
    return RECORDED / f"workspace-{name}.jsonl"


def recorded_files(capture: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    files = json.loads(capture.with_suffix(".files.json").read_text(encoding="utf-8"))
    return files["before"], files["after"]


def changes(items: Sequence[TimelineItem]) -> list[FileChangeItem]:
    return [item for item in items if isinstance(item, FileChangeItem)]


def _expect(what: str, actual: object, expected: object) -> None:
    assert actual == expected, f"{what}: {actual!r}, expected {expected!r}"


def _applies(patch: str | None, old: dict[str, str], new: dict[str, str]) -> None:
    assert patch is not None, "no patch"
    try:
        result = apply_patch(patch, old)
    except AssertionError as error:
        raise AssertionError(f"the patch does not apply: {error}\n{patch}") from None
    assert result == new, f"the patch gives {result!r}, expected {new!r}\n{patch}"


def check_scenario(
    name: str,
    items: Sequence[TimelineItem],
    root: str,
    before: dict[str, Any],
    after: dict[str, Any],
) -> None:
    """Assert what a session of scenario ``name`` shows: every change of the workspace, each
    with its true patch, whoever made it. ``root`` is the workspace as the items name it
    (the live folder, or ``<workspace>``); ``before`` and ``after`` are
    :func:`snapshot`s of the workspace before the first turn and after the last."""
    found = changes(items)
    assert all(c.patch_source == "checkpoint" for c in found), [c.patch_source for c in found]
    by_tool = {c.tool_call_id: c for c in found if c.tool_call_id is not None}
    loose = [c for c in found if c.tool_call_id is None]
    assert all(c.tool_kind == "unattributed" for c in loose), loose
    existing, new, made = (f"{root}/{n}" for n in ("existing.txt", "new.txt", "made.txt"))

    def text(files: dict[str, Any], path: str) -> str:
        return str(files[path]["text"])

    if name == "self-write":
        _expect("the file changes", [c.tool_call_id for c in found], ["write-1"])
        (change,) = found
        _expect("the operations", change.operations, {new: "add", existing: "modify"})
        assert change.diff_str is not None
        assert change.diff_str.startswith("--- /dev/null\n")
        _applies(
            change.diff_str,
            {existing: text(before, existing)},
            {new: text(after, new), existing: text(after, existing)},
        )
    elif name == "shell-change":
        _expect("the file changes' tool calls", [c.tool_call_id for c in found], [None, None])
        by_path = {c.paths[0]: c for c in found}
        _expect("the paths", set(by_path), {existing, made})
        _expect("made.txt", by_path[made].operations, {made: "add"})
        _expect("existing.txt", by_path[existing].operations, {existing: "modify"})
        _applies(by_path[made].diff_str, {}, {made: text(after, made)})
        _applies(
            by_path[existing].diff_str,
            {existing: text(before, existing)},
            {existing: text(after, existing)},
        )
    elif name == "kinds":
        gone, a, b, tool, logo, big, link = (
            f"{root}/{n}"
            for n in ("gone.txt", "a.txt", "b.txt", "tool.sh", "logo.bin", "big.log", "link")
        )
        deleted = by_tool["delete-1"]
        _expect("the delete", deleted.operations, {gone: "delete"})
        assert deleted.diff_str is not None
        assert "+++ /dev/null" in deleted.diff_str
        assert f"-{text(before, gone).rstrip()}" in deleted.diff_str
        by_path = {c.paths[0]: c for c in loose}
        _expect("the changes no tool call made", set(by_path), {b, tool, logo, big, link})
        moved = by_path[b]
        _expect("the move", (moved.operations, moved.moved_from), ({b: "move"}, {b: a}))
        _expect(
            "the move's patch", (moved.diff_str, moved.diff_omitted_reason), (None, "unchanged")
        )
        mode = by_path[tool]
        sides = mode.checkpoint[tool]
        assert sides.before is not None
        assert sides.after is not None
        _expect("the modes", (sides.before.mode, sides.after.mode), ("100644", "100755"))
        _expect("the mode change's patch", mode.diff_omitted_reason, "unchanged")
        binary = by_path[logo]
        side = binary.checkpoint[logo].after
        assert side is not None
        _expect("the binary file", (side.binary, side.sha256), (True, sha(LOGO)))
        _expect("its patch", (binary.diff_str, binary.diff_omitted_reason), (None, "binary"))
        large = by_path[big]
        side = large.checkpoint[big].after
        assert side is not None
        content = (BIG_LINE * 4000).encode()
        _expect(
            "the large file",
            (side.omitted, side.sha256, side.size),
            ("too_large", sha(content), len(content)),
        )
        _expect("its patch", (large.diff_str, large.diff_omitted_reason), (None, "too_large"))
        linked = by_path[link]
        side = linked.checkpoint[link].after
        assert side is not None
        _expect("the link", (side.kind, side.target, side.mode), ("link", "existing.txt", "120000"))
        _applies(linked.diff_str, {}, {link: "existing.txt"})
        _expect("the workspace after", after[link], {"link": "existing.txt"})
    elif name == "user-edit-between-turns":
        notes = f"{root}/notes.txt"
        _expect("the file changes", [(c.turn, c.tool_call_id) for c in found], [(1, "top-1")])
        (change,) = found
        _applies(change.diff_str, {notes: NOTES}, {notes: NOTES_TOP + NOTES.split("\n", 1)[1]})
        _expect(
            "notes.txt after",
            text(after, notes),
            NOTES_TOP + NOTES.split("\n", 1)[1].replace("note 10\n", USER_BOTTOM),
        )
    elif name == "swapped-links":
        sub_made, sub = f"{root}/sub/made.txt", f"{root}/sub"
        first = by_tool["sub-1"]
        _expect("turn 1", first.operations, {sub_made: "add", existing: "modify"})
        _applies(
            first.diff_str,
            {existing: text(before, existing)},
            {sub_made: "made in sub\n", existing: "alpha\nBETA\n"},
        )
        later = {c.paths[0]: c for c in loose}
        _expect("turn 2's changes", set(later), {sub_made, sub, existing})
        assert all(c.turn == 2 for c in later.values())
        _expect("made.txt", later[sub_made].operations, {sub_made: "delete"})
        side = later[sub].checkpoint[sub].after
        assert side is not None
        assert side.kind == "link"
        swapped = later[existing].checkpoint[existing]
        assert swapped.before is not None
        assert swapped.after is not None
        _expect("existing.txt", (swapped.before.kind, swapped.after.kind), ("file", "link"))
        assert side.target is not None
        assert swapped.after.target == os.path.join(side.target, "secret.txt")
        for change in found:  # nothing outside was read: no patch holds what is there
            assert "OUTSIDE" not in (change.diff_str or "")
    else:
        raise AssertionError(f"unknown scenario {name}")


def portable(item: FileChangeItem, root: str) -> dict[str, Any]:
    """What a recording must give again of a file_change: its facts, the folder written
    ``<workspace>``."""
    facts = item.model_dump(
        mode="json",
        include={
            "kind",
            "status",
            "turn",
            "tool_call_id",
            "tool_kind",
            "operations",
            "moved_from",
            "additions",
            "deletions",
            "patch_source",
            "diff_str",
            "diff_omitted_reason",
            "checkpoint",
        },
    )
    mapped: dict[str, Any] = json.loads(json.dumps(facts).replace(root, MARK))
    return mapped


Runner = Callable[..., Awaitable[list[acp_adapters.Turn]]]
