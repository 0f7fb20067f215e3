"""A turn's patch from its checkpoints is exactly what ``git diff`` says between the two
states of the workspace: the property, on generated workspaces and edits, with git as the
oracle (a real repository of copies of the two states, nothing of ours in it)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_adapters.capture.format import CHECKPOINT, FILE_CHANGE
from acp_adapters.client.checkpointing import Checkpointing, LiveCheckpoints, render_batch
from acp_adapters.history.turn_patches import FileTurn, checkpointed_turn, turn_patch
from diff_helpers import apply_patch

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is the oracle")

NAMES = ["a.txt", "b.txt", "sub/c.txt", "sub/deep/d.txt", "e.bin", "tool.sh"]
LINES = st.lists(st.sampled_from(["alpha", "beta", "gamma", "", "delta delta"]), max_size=8)


def _text(lines: list[str], newline: bool) -> bytes:
    body = "\n".join(lines)
    return (body + ("\n" if newline and lines else "")).encode()


files = st.fixed_dictionaries(
    {},
    optional={
        name: st.one_of(
            st.tuples(st.just("file"), st.builds(_text, LINES, st.booleans()), st.booleans()),
            st.tuples(st.just("binary"), st.binary(min_size=1, max_size=40), st.booleans()),
            st.tuples(st.just("link"), st.sampled_from(["a.txt", "../x", "sub"]), st.just(False)),
        )
        for name in NAMES
    },
)


def _write(root: Path, state: dict[str, tuple[str, Any, bool]]) -> None:
    for name in NAMES:
        path = root / name
        if path.is_symlink() or path.is_file():
            path.unlink()
    for name, (kind, value, executable) in state.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind == "link":
            os.symlink(value, path)
            continue
        data = value if kind == "file" else b"\0" + value
        path.write_bytes(data)
        os.chmod(path, 0o755 if executable else 0o644)


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    done = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)
    return done.stdout.decode("utf-8", "surrogateescape")


def _oracle(before: dict[str, Any], after: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """What git says changed: each path's status, modes and contents' SHA-256."""
    with tempfile.TemporaryDirectory() as scratch:
        repo = Path(scratch)
        _git(repo, "init", "-q")
        _git(repo, "config", "core.fileMode", "true")
        for number, state in enumerate((before, after)):
            _write(repo, state)
            _git(repo, "add", "-A")
            _git(repo, "commit", "-q", "--allow-empty", "-m", str(number))
        raw = _git(repo, "diff", "--raw", "--no-renames", "-z", "--abbrev=40", "HEAD~1", "HEAD")
        found: dict[str, dict[str, Any]] = {}
        fields = raw.split("\0")
        for at in range(0, len(fields) - 1, 2):
            meta, path = fields[at], fields[at + 1]
            old_mode, new_mode, old_id, new_id, status = meta.lstrip(":").split()
            found[path] = {
                "status": status,
                "modes": (old_mode, new_mode),
                "shas": tuple(
                    None if set(oid) == {"0"} else hashlib.sha256(_blob(repo, oid)).hexdigest()
                    for oid in (old_id, new_id)
                ),
            }
        return found


def _blob(repo: Path, oid: str) -> bytes:
    return subprocess.run(
        ["git", "-C", str(repo), "cat-file", "blob", oid], check=True, capture_output=True
    ).stdout


def _ours(
    workspace: Path, scratch: Path, before: dict[str, Any], after: dict[str, Any]
) -> list[FileTurn]:
    _write(workspace, before)
    taker = LiveCheckpoints((workspace,), Checkpointing(folder=scratch / "stores"))
    entries: list[dict[str, Any]] = []
    for step in ("opened", "turn_started", "edit", "turn_ended"):
        if step == "edit":
            _write(workspace, after)
            continue
        lines = getattr(taker, step)(1) if step != "opened" else taker.opened()
        if lines is None:
            continue
        head, pending = lines
        entries.append({"dir": CHECKPOINT, **head})
        start = 0
        while start < len(pending):
            batch, start = render_batch(taker, pending, start)
            entries.extend({"dir": FILE_CHANGE, **line} for line in batch)
    found = checkpointed_turn(entries, 1)
    assert found is not None
    return found


def _git_mode(state: Any) -> str:
    if state is None:
        return "000000"
    if state.kind == "link":
        return "120000"
    return "100755" if int(state.mode, 8) & 0o100 else "100644"


@settings(max_examples=40)
@given(before=files, after=files)
def test_a_turns_patch_is_what_git_diff_says_between_its_checkpoints(
    before: dict[str, Any], after: dict[str, Any]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        workspace = scratch / "ws"
        workspace.mkdir()
        ours = _ours(workspace, scratch, before, after)
        oracle = _oracle(before, after)
        root = str(workspace.resolve()) + "/"
        by_path = {f.path.removeprefix(root): f for f in ours}
        # Every file git sees changed, and nothing else.
        changed = {
            p
            for p, f in by_path.items()
            if _git_mode(f.before_state) != _git_mode(f.after_state)
            or (f.before_state and f.before_state.sha256)
            != (f.after_state and f.after_state.sha256)
        }
        assert changed == set(oracle), (by_path, oracle)
        for path, facts in oracle.items():
            mine = by_path[path]
            assert (_git_mode(mine.before_state), _git_mode(mine.after_state)) == facts["modes"]
            shas = tuple(
                s.sha256 if s is not None else None for s in (mine.before_state, mine.after_state)
            )
            assert shas == facts["shas"]
        # The text patch, applied to the text files' befores, gives their afters.
        texts = [
            f
            for f in ours
            if all(
                s is None or (s.kind == "file" and not s.binary)
                for s in (f.before_state, f.after_state)
            )
            and f.before != f.after
            and f.after_state is not None  # a deletion's section leads to /dev/null
        ]
        patch = turn_patch(texts, max_edits=None)
        if texts:
            old = {f.path: f.before for f in texts if f.before is not None}
            new = {f.path: f.after or "" for f in texts}
            applied = apply_patch(patch, old)
            assert {p: applied.get(p, "") for p in new} == new
