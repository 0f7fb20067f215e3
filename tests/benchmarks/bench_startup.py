"""Measure how long ``acp-adapters`` takes to start, side by side with Python loading click
and pluggy (``python -c "import click, pluggy"``), the least any click program with plugins
could take.

Each round runs, one after the other, the anchor, ``acp-adapters --help``, ``acp-adapters
providers`` and ``acp-adapters run --help`` (informational: ``run`` loads the client, the
protocol's models and the projection), ``--repeat`` rounds (20) after one that is not
counted; a run is timed from its start to its exit, its output thrown away. ``providers``
reads the bundled registry through a cache folder of its own, made for the benchmark: the
round not counted validates the registry and remembers what it resolved to, as a first run
does; ``providers, first run`` (informational) times that first read, with a new cache
folder each round. Prints the medians, each command's median ratio to the anchor (taken
round by round, so that a noisy moment touches both), and with ``--json OUT`` writes them.
Target: ``--help`` and ``providers`` at most 3x the anchor. Run from the repository root::

    python tests/benchmarks/bench_startup.py [--repeat N] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Final

TARGET: Final = 3.0
#: The commands held to the target; the others are informational.
HELD: Final = ("--help", "providers")


def program() -> list[str]:
    """The installed ``acp-adapters`` beside this Python, else ``python -m acp_adapters``."""
    name = "acp-adapters.exe" if os.name == "nt" else "acp-adapters"
    script = Path(sys.executable).parent / name
    return [str(script)] if script.exists() else [sys.executable, "-m", "acp_adapters"]


def timed(argv: list[str], env: dict[str, str]) -> float:
    """Seconds from the start of ``argv`` to its exit; a failure is an error of the bench."""
    started = time.perf_counter()
    done = subprocess.run(
        argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"bench_startup: {argv} exited {done.returncode}: {done.stderr!r:.400}")
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--json", metavar="OUT")
    args = parser.parse_args()

    acp = program()
    anchor = [sys.executable, "-c", "import click, pluggy"]
    commands = {
        "--help": [*acp, "--help"],
        "providers": [*acp, "providers"],
        "run --help": [*acp, "run", "--help"],
        "providers, first run": [*acp, "providers"],
    }
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("ACP_ADAPTERS_")  # every plugin, the bundled registry
    }
    times: dict[str, list[float]] = {"anchor": [], **{name: [] for name in commands}}
    ratios: dict[str, list[float]] = {name: [] for name in commands}
    with tempfile.TemporaryDirectory() as scratch:
        warm = {**env, "ACP_ADAPTERS_CACHE": str(Path(scratch) / "cache")}
        for number in range(args.repeat + 1):
            base = timed(anchor, warm)
            took: dict[str, float] = {}
            for name, argv in commands.items():
                if name == "providers, first run":
                    cold = Path(scratch) / f"cold-{number}"
                    took[name] = timed(argv, {**env, "ACP_ADAPTERS_CACHE": str(cold)})
                    shutil.rmtree(cold, ignore_errors=True)
                else:
                    took[name] = timed(argv, warm)
            if number == 0:
                continue  # the round not counted: files cached, the registry remembered
            times["anchor"].append(base)
            for name, seconds in took.items():
                times[name].append(seconds)
                ratios[name].append(seconds / base)

    medians = {name: statistics.median(values) for name, values in times.items()}
    ratio = {name: statistics.median(values) for name, values in ratios.items()}
    print(
        f"bench_startup: {' '.join(acp)} against {' '.join(anchor[:2])} "
        f"{anchor[2]!r}, alternating, median of {args.repeat}"
    )
    print("| command | median (ms) | x anchor (median of pairs) |")
    print("| --- | --- | --- |")
    print(f'| `python -c "import click, pluggy"` (anchor) | {medians["anchor"] * 1000:.0f} | 1 |')
    for name in commands:
        held = "" if name in HELD else " (informational)"
        print(
            f"| `acp-adapters {name.removesuffix(', first run')}`"
            f"{', first run' if name.endswith('first run') else ''}{held} "
            f"| {medians[name] * 1000:.0f} | {ratio[name]:.2f} |"
        )
    worst = max(ratio[name] for name in HELD)
    print(f"--help and providers: at most {worst:.2f}x the anchor (target <= {TARGET:g}x)")
    result: dict[str, Any] = {
        "program": acp,
        "repeat": args.repeat,
        "seconds": times,
        "median": medians,
        "ratio": ratio,
        "target": TARGET,
    }
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
