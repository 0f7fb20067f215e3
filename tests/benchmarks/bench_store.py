"""Time sessions kept in a store (SQLite, PostgreSQL) side by side with sessions kept in memory.

Each session is ``acp_adapters.connect(command=[python, flood_agent.py, N], store=STORE,
thread=NAME)`` and one ``session.prompt("go")``: the scripted agent answers it with N
``session/update`` notifications at once (40-character text chunks of one message, a read
tool call and its completion in every 50 updates, a plan in every 500), then ``end_turn``.
The session's :class:`~acp_adapters.client.persistence.ThreadWriter` commits them as they
come (the events since the last commit and the items they changed, in one transaction;
while a commit runs, what comes waits for the next one).

Measured, end to end, in this process:

* **updates/s**: the updates committed (every session's), divided by the span from the
  prompts being sent to the last update's commit returning. In memory (the anchor, the same
  sessions without ``store=``), the span ends as the last turn returns.
* **latency**: for every update, from its arrival (the time the traffic reader was given
  for it, the event's ``t``) to the return of the ``Store.commit`` that wrote it (the
  store's ``commit`` is wrapped); p50, p99 and max over all updates of a run. A flood
  arrives as fast as the client reads it: its latency is that of a saturated writer.
* **store/memory**: the store's updates/s over the in-memory updates/s of the same shape.
* **commits**, updates per commit, and **store busy**: the share of the span with a commit
  call in progress (its wait for the store's one connection included).

Three shapes: one session of ``--updates`` (a flood); ``--sessions`` concurrent sessions of
``--concurrent-updates`` each (a flood); and the same sessions **paced**, each
``--paced-turns`` turns of 20 updates, ``--paced-pause`` seconds between a session's turns
(a load below what a store can take: the latency of a writer that keeps up). Concurrent
sessions are each their own thread and their own agent process (50 connections in one event
loop, sharing one store: the flood agent gives every session the same id, so one agent
cannot hold 50 sessions). The agents start and the sessions open before the span; every run
uses a new SQLite file (in the temporary folder) or a new PostgreSQL database.

PostgreSQL is the throwaway server of the store's tests (``tests/store/postgres_server.py``:
``initdb`` in a temporary folder, 127.0.0.1, ``fsync=off``, ``synchronous_commit=off``);
without one (no binaries, no psycopg, no pytest for the helper) that backend is skipped and
the reason printed. ``--postgres URL`` uses a server of one's own instead (each run makes a
database on it, so the URL's user must be allowed to).

Each shape runs memory, SQLite, PostgreSQL in turn, ``--runs`` times after one warm-up of
each; medians are printed with the range (min-max) of the runs. Run from the repository
root::

    python tests/benchmarks/bench_store.py [--runs 3] [--updates 20000] [--sessions 50]
        [--concurrent-updates 1000] [--paced-turns 10] [--paced-pause 0.2] [--json OUT]
        [--postgres URL]

Exits 1 when a session goes wrong (a turn not ended ``end_turn``, updates missing from the
store); the timings never fail the run.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

REPO: Final = Path(__file__).resolve().parents[2]
HERE: Final = Path(__file__).resolve().parent
TESTS: Final = HERE.parent
AGENT: Final = HERE / "flood_agent.py"

if importlib.util.find_spec("acp_adapters") is None:
    sys.path.insert(0, str(REPO / "framework"))
for folder in (HERE, TESTS):  # flood_agent; store.postgres_server (as the tests import it)
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

DEFAULT_UPDATES: Final = 20_000
DEFAULT_CONCURRENT_UPDATES: Final = 1_000
DEFAULT_SESSIONS: Final = 50
DEFAULT_RUNS: Final = 3
#: The paced shape: each session's turns of this many updates, DEFAULT_PAUSE apart.
PACED_UPDATES: Final = 20
DEFAULT_PACED_TURNS: Final = 10
DEFAULT_PAUSE: Final = 0.2
#: How long a run may wait for its updates to be committed after the turns returned.
COMMIT_TIMEOUT: Final = 120.0
BACKENDS: Final = ("memory", "sqlite", "postgres")


class WrongResult(Exception):
    """A session's result is not what the agent sent."""


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


@dataclass
class Counting:
    """A store whose ``commit`` is wrapped: when each update's commit returned."""

    store: Any
    target: int
    latencies: list[float] = field(default_factory=list)
    commits: int = 0
    #: How long each ``commit`` call took (its wait for the store's one connection too).
    commit_seconds: list[float] = field(default_factory=list)
    #: Each commit as (thread id, called, returned, updates in it).
    log: list[tuple[str, float, float, int]] = field(default_factory=list)
    last_commit: float = 0.0
    done: Any = None

    def wrap(self) -> None:
        import anyio
        from arrivals import update_arrival

        self.done = anyio.Event()
        original = self.store.commit

        async def commit(thread_id: str, commit: Any) -> int:
            called = time.time()
            last = await original(thread_id, commit)
            returned = time.time()
            self.commits += 1
            self.commit_seconds.append(returned - called)
            before = len(self.latencies)
            for entry in commit.events:
                at = update_arrival(entry)
                if at is not None:
                    self.latencies.append(returned - at)
            self.log.append((thread_id, called, returned, len(self.latencies) - before))
            self.last_commit = returned
            if len(self.latencies) >= self.target:
                self.done.set()
            return last

        self.store.commit = commit


@dataclass(frozen=True)
class Shape:
    """What one run drives: ``sessions`` concurrent sessions, each ``turns`` turns of
    ``updates`` updates, ``pause`` seconds between a session's turns (0: one flood)."""

    name: str
    sessions: int
    updates: int
    turns: int = 1
    pause: float = 0.0

    @property
    def total(self) -> int:
        return self.sessions * self.updates * self.turns

    def describe(self) -> str:
        text = f"{self.sessions} x {self.updates:,}"
        if self.turns > 1:
            text += f" x {self.turns} turns, {1000 * self.pause:.0f} ms apart"
        return text


async def one_run(backend: str, shape: Shape, target: str | None) -> dict[str, Any]:
    """One run of ``shape``, kept in ``target`` (a SQLite path or a PostgreSQL URL; None:
    in memory only)."""
    import anyio

    import acp_adapters
    from acp_adapters.store.open import open_store

    pm = acp_adapters.get_plugin_manager(load_entrypoints=False, environ={})
    store = await open_store(target) if target is not None else None
    counting = Counting(store, shape.total) if store is not None else None
    if counting is not None:
        counting.wrap()
    ready, go, finish = anyio.Event(), anyio.Event(), anyio.Event()
    opened = 0
    turns_returned: list[float] = []
    failures: list[str] = []
    try:
        with tempfile.TemporaryDirectory(prefix="acp-bench-store-") as cwd:

            async def session_task(index: int) -> None:
                nonlocal opened
                options: dict[str, Any] = {}
                if store is not None:
                    options = {"store": store, "thread": f"bench-{index}"}
                async with acp_adapters.connect(
                    command=[sys.executable, str(AGENT), str(shape.updates)],
                    cwd=cwd,
                    policy="read-only",
                    pm=pm,
                    **options,
                ) as session:
                    opened += 1
                    if opened == shape.sessions:
                        ready.set()
                    await go.wait()
                    # Paced sessions start spread over one pause, not all at once.
                    await anyio.sleep(shape.pause * index / shape.sessions)
                    for number in range(shape.turns):
                        if number:
                            await anyio.sleep(shape.pause)
                        turn = await session.prompt("go")
                        if turn.stop_reason != "end_turn":
                            failures.append(f"session {index}: a turn ended {turn.stop_reason}")
                    turns_returned.append(time.time())
                    await finish.wait()

            async with anyio.create_task_group() as group:
                for index in range(shape.sessions):
                    group.start_soon(session_task, index)
                with anyio.fail_after(120):
                    await ready.wait()
                started = time.time()
                go.set()
                with anyio.fail_after(600):
                    while len(turns_returned) < shape.sessions and not failures:
                        await anyio.sleep(0.005)
                turns_end = max(turns_returned) if turns_returned else time.time()
                if counting is not None and not failures:
                    with anyio.move_on_after(COMMIT_TIMEOUT):
                        await counting.done.wait()
                finish.set()
    finally:
        if store is not None:
            await store.close()
    if failures:
        raise WrongResult("; ".join(failures))
    result: dict[str, Any] = {"backend": backend}
    if counting is None:
        span = turns_end - started
        result.update(updates_per_s=shape.total / span, seconds=span)
        return result
    if len(counting.latencies) != shape.total:
        raise WrongResult(
            f"{backend}: {len(counting.latencies)} of {shape.total} updates committed "
            f"within {COMMIT_TIMEOUT:.0f} s of the turns' end"
        )
    span = counting.last_commit - started
    result.update(
        updates_per_s=shape.total / span,
        seconds=span,
        p50_ms=1000 * statistics.median(counting.latencies),
        p99_ms=1000 * percentile(counting.latencies, 0.99),
        max_ms=1000 * max(counting.latencies),
        commits=counting.commits,
        updates_per_commit=shape.total / counting.commits,
        # A commit call: its wait for the store's connection, and its transaction.
        commit_p50_ms=1000 * statistics.median(counting.commit_seconds),
        commit_max_ms=1000 * max(counting.commit_seconds),
        # The share of the span with a commit in progress (1: the store never idle).
        busy=busy_share(counting.log, started, counting.last_commit),
        # How long the last commit came after the last turn returned.
        tail_ms=1000 * (counting.last_commit - turns_end),
    )
    return result


def busy_share(log: list[tuple[str, float, float, int]], start: float, end: float) -> float:
    """The share of ``start``-``end`` covered by at least one commit call."""
    covered, reach = 0.0, start
    for _, called, returned, _ in sorted(log, key=lambda commit: commit[1]):
        begin = max(called, reach)
        if returned > begin:
            covered += returned - begin
            reach = returned
    return covered / (end - start) if end > start else 0.0


# --- the backends ------------------------------------------------------------------------


@contextlib.contextmanager
def postgres_server(url: str | None) -> Iterator[tuple[Any, str | None]]:
    """``(make a database URL, None)``, or ``(None, why there is no PostgreSQL)``."""
    if url is not None:
        yield (lambda: _database_on(url)), None
        return
    try:
        import psycopg  # noqa: F401
    except ImportError:
        yield None, "psycopg is not installed (pip install 'acp-adapters[postgres]')"
        return
    try:
        import pytest

        from store.postgres_server import running_server
    except ImportError as exc:
        yield None, f"tests/store/postgres_server.py cannot be imported: {exc}"
        return
    try:
        with running_server() as server:
            yield server.create_database, None
    except pytest.skip.Exception as skipped:
        yield None, str(skipped.msg)
    except RuntimeError as exc:  # initdb or pg_ctl failed
        yield None, f"the throwaway server did not start: {str(exc)[:300]}"


def _database_on(url: str) -> str:
    import uuid

    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    name = f"bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return make_conninfo(**{**conninfo_to_dict(url), "dbname": name})


def run_all(args: argparse.Namespace) -> dict[str, Any]:
    import anyio

    shapes = [
        Shape("one", 1, args.updates),
        Shape("concurrent", args.sessions, args.concurrent_updates),
    ]
    if args.paced_turns:
        shapes.append(
            Shape("paced", args.sessions, PACED_UPDATES, args.paced_turns, args.paced_pause)
        )
    results: dict[str, Any] = {}
    with postgres_server(args.postgres) as (new_database, postgres_missing):
        if postgres_missing:
            print(f"PostgreSQL skipped: {postgres_missing}")
        backends = [b for b in BACKENDS if b != "postgres" or new_database is not None]
        with tempfile.TemporaryDirectory(prefix="acp-bench-store-db-") as folder:
            made = 0

            def target(backend: str) -> str | None:
                nonlocal made
                made += 1
                if backend == "sqlite":
                    return os.path.join(folder, f"run-{made}.db")
                if backend == "postgres":
                    return str(new_database())
                return None

            for shape in shapes:
                runs: dict[str, list[dict[str, Any]]] = {b: [] for b in backends}
                for run in range(args.runs + 1):  # the first is a warm-up
                    for backend in backends:
                        result = anyio.run(one_run, backend, shape, target(backend))
                        if run:
                            runs[backend].append(result)
                        print(
                            f"  {'warm-up' if not run else f'run {run}'}: {shape.describe()}"
                            f" {backend}: {result['updates_per_s']:,.0f} updates/s"
                            + (
                                f", p50 {result['p50_ms']:.1f} ms, p99 {result['p99_ms']:.1f}"
                                f" ms, {result['commits']} commits"
                                if "p99_ms" in result
                                else ""
                            ),
                            flush=True,
                        )
                results[shape.name] = {
                    "shape": shape.describe(),
                    "sessions": shape.sessions,
                    "updates_per_turn": shape.updates,
                    "turns": shape.turns,
                    "pause_s": shape.pause,
                    "backends": {b: summary(r) for b, r in runs.items()},
                }
    results["postgres_skipped"] = postgres_missing
    return results


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The median and range of every measure of a backend's runs."""
    measures = [k for k in runs[0] if isinstance(runs[0][k], float | int)]
    out: dict[str, Any] = {"runs": runs}
    for key in measures:
        values = [r[key] for r in runs]
        out[key] = {"median": statistics.median(values), "min": min(values), "max": max(values)}
    return out


def spread(measure: dict[str, float], digits: int = 0, comma: bool = True) -> str:
    spec = f",.{digits}f" if comma else f".{digits}f"
    median, low, high = measure["median"], measure["min"], measure["max"]
    return f"{median:{spec}} ({low:{spec}}-{high:{spec}})"


def table(results: dict[str, Any]) -> str:
    lines = [
        "| sessions x updates | backend | updates/s | store/memory | p50 ms | p99 ms | "
        "max ms | commits | updates/commit | store busy |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for shape in results.values():
        if not isinstance(shape, dict) or "backends" not in shape:
            continue
        backends = shape["backends"]
        memory = backends["memory"]["updates_per_s"]["median"]
        for name, measured in backends.items():
            rate = measured["updates_per_s"]
            ratio = "1" if name == "memory" else f"{rate['median'] / memory:.2f}"
            cells = [
                shape["shape"],
                name,
                spread(rate),
                ratio,
            ]
            for measure, digits in (("p50_ms", 1), ("p99_ms", 1), ("max_ms", 1)):
                cells.append(spread(measured[measure], digits) if measure in measured else "-")
            cells.append(f"{measured['commits']['median']:,.0f}" if "commits" in measured else "-")
            cells.append(
                f"{measured['updates_per_commit']['median']:,.1f}"
                if "updates_per_commit" in measured
                else "-"
            )
            cells.append(f"{measured['busy']['median']:.0%}" if "busy" in measured else "-")
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--updates", type=int, default=DEFAULT_UPDATES, help="one session's N")
    parser.add_argument(
        "--concurrent-updates",
        type=int,
        default=DEFAULT_CONCURRENT_UPDATES,
        help="N of each concurrent session",
    )
    parser.add_argument("--sessions", type=int, default=DEFAULT_SESSIONS)
    parser.add_argument(
        "--paced-turns",
        type=int,
        default=DEFAULT_PACED_TURNS,
        help=f"turns of {PACED_UPDATES} updates per paced session (0: no paced shape)",
    )
    parser.add_argument(
        "--paced-pause", type=float, default=DEFAULT_PAUSE, help="seconds between paced turns"
    )
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, help="timed runs per backend")
    parser.add_argument("--json", metavar="OUT", help="write the results as JSON to OUT")
    parser.add_argument("--postgres", metavar="URL", help="a PostgreSQL server of one's own")
    args = parser.parse_args(argv)

    print(
        f"Python {platform.python_version()} ({platform.python_implementation()}), "
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs"
    )
    print(
        f"flood: 1 session x {args.updates:,} updates, and {args.sessions} sessions x "
        f"{args.concurrent_updates:,} updates (one turn each, all at once)"
    )
    if args.paced_turns:
        print(
            f"paced: {args.sessions} sessions x {args.paced_turns} turns of {PACED_UPDATES}"
            f" updates, {1000 * args.paced_pause:.0f} ms between a session's turns"
        )
    print(f"median (range) of {args.runs} runs after one warm-up")
    started = time.perf_counter()
    try:
        results = run_all(args)
    except WrongResult as error:
        print(f"wrong result: {error}", file=sys.stderr)
        return 1
    print(table(results))
    print(f"({time.perf_counter() - started:.0f} s in all)")
    if args.json:
        document = {
            "python": platform.python_version(),
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "runs": args.runs,
            **results,
        }
        Path(args.json).write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
