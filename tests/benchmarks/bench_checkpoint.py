"""Measure a workspace checkpoint against git on a shadow repository of the same tree.

Builds a tree of ``--files`` files (10,000 by default: 100 folders, half of each in a
subfolder, 5 to 80 lines each), then times, in the same run and pair by pair (ours, then
the anchor, ``--rounds`` times):

* ``first``: the first checkpoint of the tree (every file read and stored) against
  ``git add -A && git write-tree`` into a new shadow repository (``--git-dir`` of its own,
  its own index: the user's ``.git`` is not involved);
* ``unchanged``: a checkpoint of the unchanged tree (a stat pass) against the same command
  on the shadow repository that has the tree already;
* ``changed``: ``--changed`` files (100) rewritten, then a checkpoint against the command.

Every file is older than the racy window before a round (the script waits it out), as a
workspace between two turns is. Ours runs in this process (as a session runs it, in a
worker thread); the anchor is the shell command. Prints a table of medians and ratios
(ours / anchor) and, with ``--json OUT``, writes them. Target: ``unchanged`` and
``changed`` at most 1.0x. Run from the repository root::

    python tests/benchmarks/bench_checkpoint.py [--files N] [--changed N] [--rounds N] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp_adapters.workspace.checkpoints import Checkpoints
from acp_adapters.workspace.confined import Roots
from acp_adapters.workspace.scan import RACY_SECONDS

TARGET = 1.0


def build_tree(root: Path, files: int, seed: int = 1) -> list[Path]:
    """``files`` text files in 100 folders (half of each folder's in a subfolder)."""
    rng = random.Random(seed)
    folders = 100
    made: list[Path] = []
    for number in range(files):
        folder = root / f"d{number % folders:03}"
        if (number // folders) % 2:
            folder = folder / "sub"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"f{number:05}.txt"
        lines = rng.randint(5, 80)
        path.write_text("".join(f"line {i} {rng.random()}\n" for i in range(lines)))
        made.append(path)
    return made


def settle() -> None:
    """Wait out the racy window: every file is then older than it."""
    time.sleep(RACY_SECONDS + 0.3)


def timed(run: Callable[[], Any]) -> float:
    # Each side's writes are on the disk before the other is timed: on ext4 an fsync of one
    # waits for every file's dirty data, so the side timed second would pay for the first.
    os.sync()
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def git(tree: Path, shadow: Path) -> Callable[[], Any]:
    env = {**os.environ, "GIT_DIR": str(shadow), "GIT_WORK_TREE": str(tree)}

    def run() -> None:
        subprocess.run(
            "git add -A && git write-tree",
            shell=True,
            check=True,
            env=env,
            stdout=subprocess.DEVNULL,
        )

    return run


def fresh_shadow(parent: Path, name: str) -> Path:
    shadow = parent / name
    shutil.rmtree(shadow, ignore_errors=True)
    subprocess.run(["git", "init", "-q", "--bare", str(shadow)], check=True)
    return shadow


def median_ratio(ours: list[float], anchor: list[float]) -> dict[str, Any]:
    ratios = [a / b for a, b in zip(ours, anchor, strict=True)]
    return {
        "ours_each_ms": [round(t * 1000, 2) for t in ours],
        "anchor_each_ms": [round(t * 1000, 2) for t in anchor],
        "ours_ms": round(statistics.median(ours) * 1000, 2),
        "anchor_ms": round(statistics.median(anchor) * 1000, 2),
        "ratio": round(statistics.median(ratios), 3),
        "ratios": [round(r, 3) for r in ratios],
    }


def run(files: int, changed: int, rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-checkpoint-") as scratch:
        base = Path(scratch)
        tree = base / "tree"
        tree.mkdir()
        made = build_tree(tree, files)
        settle()
        results: dict[str, Any] = {"files": files, "changed": changed, "rounds": rounds}
        # first: a new store and a new shadow repository each round
        ours, anchor = [], []
        for number in range(rounds):
            roots = Roots(tree)
            store_folder = base / f"store-{number}"
            checkpoints = Checkpoints(roots, folder=store_folder)
            ours.append(timed(checkpoints.take))
            checkpoints.close()
            roots.close()
            anchor.append(timed(git(tree, fresh_shadow(base, f"shadow-{number}"))))
            shutil.rmtree(store_folder, ignore_errors=True)
            shutil.rmtree(base / f"shadow-{number}", ignore_errors=True)
        results["first"] = median_ratio(ours, anchor)
        # unchanged and changed: one store, one shadow repository, both holding the tree
        roots = Roots(tree)
        checkpoints = Checkpoints(roots, folder=base / "store")
        checkpoints.take()
        shadow = fresh_shadow(base, "shadow")
        anchor_run = git(tree, shadow)
        anchor_run()
        settle()
        checkpoints.take()  # nothing racy any more: the index is settled, as git's is
        anchor_run()
        ours, anchor = [], []
        for _ in range(rounds):
            ours.append(timed(checkpoints.take))
            anchor.append(timed(anchor_run))
        results["unchanged"] = median_ratio(ours, anchor)
        rng = random.Random(2)
        ours, anchor = [], []
        for number in range(rounds):
            settle()
            for path in rng.sample(made, changed):
                path.write_text(f"changed in round {number}\n" + path.read_text())
            # the same changes for both: ours first this round, the anchor first the next
            if number % 2:
                anchor.append(timed(anchor_run))
                ours.append(timed(checkpoints.take))
            else:
                ours.append(timed(checkpoints.take))
                anchor.append(timed(anchor_run))
        results["changed_files"] = median_ratio(ours, anchor)
        checkpoints.close()
        roots.close()
    return results


def table(results: dict[str, Any]) -> str:
    rows = [
        "| checkpoint | ours (ms) | git add -A && git write-tree (ms) | ratio |",
        "| --- | ---: | ---: | ---: |",
    ]
    names = {
        "first": f"first, {results['files']:,} files",
        "unchanged": "unchanged",
        "changed_files": f"{results['changed']} changed",
    }
    for key, name in names.items():
        row = results[key]
        rows.append(f"| {name} | {row['ours_ms']} | {row['anchor_ms']} | {row['ratio']}x |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--changed", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", metavar="OUT", help="write the results as JSON to OUT")
    args = parser.parse_args(argv)
    if shutil.which("git") is None:
        print("bench_checkpoint: git is not installed: no anchor to measure", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as folder:
        os.environ.setdefault("ACP_ADAPTERS_CHECKPOINTS", folder)
        results = run(args.files, args.changed, args.rounds)
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    missed = [k for k in ("unchanged", "changed_files") if results[k]["ratio"] > TARGET]
    if missed:
        print(f"bench_checkpoint: over {TARGET}x: {', '.join(missed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
