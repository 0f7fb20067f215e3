"""A hostile session beside a benign one, in one process: does the flood slow the benign turns?

The benign session drives ``flood_agent.py`` with a small turn (20 updates); its turns
run one after another, and each one's latency (prompt sent to turn returned) is
measured. The hostile session, in the same process and event loop, drives
``hostile_agent.py``, which every turn sends a 48 MiB line of tiny JSON objects, 20
pipelined reads of a 30 MiB file, 30 edit tool calls naming a 7 MiB file, 2,000
pipelined permission requests and 20,000 message chunks. Two runs, each in a fresh
child process so that its peak RSS is its own:

* ``alone``: the benign turns only;
* ``flood``: the same benign turns while the hostile session runs turn after turn.

Printed: the benign turns' p50 and p99 latency in each run, their ratio (flood /
alone), the longest turn, the hostile turns completed, and each run's peak RSS.
Run from the repository root::

    python tests/benchmarks/bench_flood.py [--turns 60] [--json OUT]

Nothing here fails on timings; it exits 1 only when a session goes wrong.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Final

HERE: Final = Path(__file__).resolve().parent
BENIGN_UPDATES: Final = 20
#: Whole hostile turns the flooded run lasts at least.
HOSTILE_TURNS: Final = 2
MIB: Final = 1024 * 1024


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def run(mode: str, turns: int) -> dict[str, Any]:
    import anyio

    import acp_adapters

    latencies: list[float] = []
    hostile_turns = 0
    with tempfile.TemporaryDirectory(prefix="acp-bench-flood-") as folder:
        workspace = Path(folder)
        (workspace / "big.txt").write_text("b" * (30 * MIB), encoding="utf-8")
        (workspace / "seven.txt").write_text("s" * (7 * MIB), encoding="utf-8")
        benign = [sys.executable, str(HERE / "flood_agent.py"), str(BENIGN_UPDATES)]
        hostile = [sys.executable, str(HERE / "hostile_agent.py"), str(workspace)]
        async with acp_adapters.connect(command=benign, cwd=workspace, policy="read-only") as calm:
            done = anyio.Event()

            async def flood() -> None:
                nonlocal hostile_turns
                async with acp_adapters.connect(
                    command=hostile, cwd=workspace, policy="read-only"
                ) as storm:
                    while not done.is_set():
                        with anyio.move_on_after(120):
                            await storm.prompt("flood")
                            hostile_turns += 1

            async with anyio.create_task_group() as group:
                if mode == "flood":
                    group.start_soon(flood)
                    await anyio.sleep(1.0)  # the flood is under way
                # Flooded, the benign turns go on until the hostile session has played whole
                # turns beside them, however long that takes.
                while len(latencies) < turns or (mode == "flood" and hostile_turns < HOSTILE_TURNS):
                    started = time.perf_counter()
                    turn = await calm.prompt("hello")
                    latencies.append(time.perf_counter() - started)
                    if turn.stop_reason != "end_turn":
                        raise SystemExit(f"the benign turn ended {turn.stop_reason}")
                    await anyio.sleep(0.05)
                done.set()
                group.cancel_scope.cancel()
    return {
        "mode": mode,
        "turns": len(latencies),
        "p50_ms": 1000 * statistics.median(latencies),
        "p99_ms": 1000 * percentile(latencies, 0.99),
        "max_ms": 1000 * max(latencies),
        "hostile_turns": hostile_turns,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def child(mode: str, turns: int) -> dict[str, Any]:
    """One run in a fresh process: its own peak RSS."""
    done = subprocess.run(
        [sys.executable, __file__, "--child", mode, "--turns", str(turns)],
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"the {mode} run failed ({done.returncode})")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--json")
    parser.add_argument("--child", choices=("alone", "flood"))
    options = parser.parse_args()
    if options.child:
        import anyio

        print(json.dumps(anyio.run(run, options.child, options.turns)))
        return
    alone, flooded = child("alone", options.turns), child("flood", options.turns)
    print(f"bench_flood: {options.turns} benign turns of {BENIGN_UPDATES} updates each")
    print(f"Python {platform.python_version()}, {platform.machine()}")
    print("| run | p50 ms | p99 ms | max ms | hostile turns | peak RSS MiB |")
    print("|---|---:|---:|---:|---:|---:|")
    for result in (alone, flooded):
        print(
            f"| {result['mode']} | {result['p50_ms']:.1f} | {result['p99_ms']:.1f} | "
            f"{result['max_ms']:.1f} | {result['hostile_turns']} | {result['peak_rss_mib']:.1f} |"
        )
    ratio = flooded["p99_ms"] / alone["p99_ms"]
    print(f"benign p99, flood / alone: {ratio:.2f}")
    if options.json:
        Path(options.json).write_text(
            json.dumps({"alone": alone, "flood": flooded, "p99_ratio": ratio}, indent=1) + "\n"
        )


if __name__ == "__main__":
    main()
