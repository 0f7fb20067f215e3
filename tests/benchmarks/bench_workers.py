"""Measure how workers scale: prompts per second with one worker process and with three, on
one store, side by side in one run.

``--threads`` threads (12) get ``--prompts`` prompts (60) from three sender processes; the
scripted agent (``tests/agents/queue_agent.py``) sleeps ``--sleep`` seconds (0.2) per prompt,
as a model's turn takes time the worker spends waiting. Each worker drives
``--concurrency`` threads at once (1: the scaling measured is the workers'). A round times
from the first prompt queued to the last one ended; rounds alternate one worker and three,
``--repeat`` times (3), each on a new database. Prints the medians and the ratio, and with
``--json OUT`` writes them. Target: three workers at least 2.5x one.

The store is PostgreSQL: ``--postgres URL`` (a server whose user may create databases),
else the tests' throwaway server (``tests/store/postgres_server.py``); ``--sqlite`` uses a
SQLite file instead. Run from the repository root::

    python tests/benchmarks/bench_workers.py [--threads N] [--prompts N] [--sleep S]
        [--concurrency N] [--repeat N] [--sqlite] [--postgres URL] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

HERE: Final = Path(__file__).resolve().parent
TESTS: Final = HERE.parent
for folder in (HERE, TESTS):  # bench_store's server helper; worker.fleet (as the tests import)
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import anyio  # noqa: E402
from bench_store import postgres_server  # noqa: E402

from acp_adapters.store import open_store  # noqa: E402
from worker.fleet import Fleet, wait_until  # noqa: E402

TARGET: Final = 2.5


def _ended(store: str, ids: list[str]) -> int:
    async def count() -> int:
        async with await open_store(store) as opened:
            prompts = [await opened.queued_prompt(prompt_id) for prompt_id in ids]
        return sum(1 for prompt in prompts if prompt is not None and prompt.ended)

    return anyio.run(count)


def one_round(store: str, workers: int, args: argparse.Namespace) -> float:
    """Prompts per second with ``workers`` worker processes on ``store``."""
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        fleet = Fleet(store, base / "threads", base / "agents.jsonl", concurrency=args.concurrency)
        fleet.make_threads(args.threads)
        try:
            for _ in range(workers):
                fleet.start_worker()
            texts = [(n % args.threads, f"sleep {args.sleep} p{n}") for n in range(args.prompts)]
            started = time.perf_counter()
            ids = fleet.send(texts, senders=3)
            wait_until(lambda: _ended(store, ids) == len(ids), 1800, "every prompt ended")
            took = time.perf_counter() - started
        finally:
            fleet.stop()
        runs = [entry for entry in fleet.runs() if entry["event"] == "start"]
        assert len(runs) == args.prompts, f"{len(runs)} turns for {args.prompts} prompts"
    return args.prompts / took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=12)
    parser.add_argument("--prompts", type=int, default=60)
    parser.add_argument("--sleep", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sqlite", action="store_true", help="a SQLite file, not PostgreSQL")
    parser.add_argument("--postgres", metavar="URL")
    parser.add_argument("--json", metavar="OUT")
    args = parser.parse_args()

    with (
        postgres_server(args.postgres) as (new_database, missing),
        tempfile.TemporaryDirectory() as scratch,
    ):
        if args.sqlite:
            counter = iter(range(10**6))

            def make() -> str:
                return str(Path(scratch) / f"store-{next(counter)}.db")

            backend = "sqlite"
        else:
            if new_database is None:
                print(f"bench_workers: no PostgreSQL: {missing}", file=sys.stderr)
                return 1
            make = new_database
            backend = "postgres"
        return _measure(make, backend, args)


def _measure(make: Callable[[], str], backend: str, args: argparse.Namespace) -> int:
    rates: dict[int, list[float]] = {1: [], 3: []}
    for _ in range(args.repeat):
        for workers in (1, 3):  # pair by pair: a noisy moment touches both
            rates[workers].append(one_round(make(), workers, args))
    one, three = statistics.median(rates[1]), statistics.median(rates[3])
    ratio = three / one
    print(
        f"bench_workers ({backend}): {args.prompts} prompts on {args.threads} threads, "
        f"{args.sleep:g} s each, concurrency {args.concurrency} per worker, "
        f"median of {args.repeat}"
    )
    print("| workers | prompts/s (median) | rounds |")
    print("| --- | --- | --- |")
    for workers in (1, 3):
        shown = ", ".join(f"{rate:.2f}" for rate in rates[workers])
        print(f"| {workers} | {statistics.median(rates[workers]):.2f} | {shown} |")
    print(f"3 workers / 1 worker: {ratio:.2f}x (target >= {TARGET}x)")
    result: dict[str, Any] = {
        "backend": backend,
        "threads": args.threads,
        "prompts": args.prompts,
        "sleep": args.sleep,
        "concurrency": args.concurrency,
        "rates": {str(k): v for k, v in rates.items()},
        "median": {"1": one, "3": three},
        "ratio": ratio,
        "target": TARGET,
    }
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0 if ratio >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
