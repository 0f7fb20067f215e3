"""Many sessions in one process: 200 replay agents through ``connect`` into one store.

Every session is a real agent process, the replay agent (``python -m acp_adapters.replay``)
playing a capture this script writes, and the client side is one ``acp_adapters.connect``
each, all in this process's event loop, all writing into one store (SQLite in a temporary
folder by default; ``--store URL`` for another). A session's turn is a message streamed in
chunks, a tool call (started, then completed with its output) every 20 updates and a plan,
``--updates`` updates in all, paced at ``--rate`` updates a second (the replay agent's
``--speed 1`` on a capture whose lines are 1/rate seconds apart): the load of an orchestrator
whose agents all stream at once.

Three runs, each in a fresh child process (its peak RSS is its own):

* ``calm``: ``--sessions`` such sessions.
* ``hostile``: the same, but two of them are replaced by a hung agent and a flooding one.
  (The agents run at ``--nice 10``: on a small machine, hundreds of agent processes would
  otherwise take the CPU from the client being measured; their cost is theirs.)
  The hung agent is a calm one stopped (``SIGSTOP``) after its tenth update: its process
  stays, its pipes stay open, it never answers again; its session is closed once the others
  are done. The flooding agent plays ``--flood`` updates (chunks of one message) as fast as
  it can. Neither may delay the calm sessions' commits: their latencies are reported side by
  side with the calm run's.
* ``repeated``: the calm run with four times the updates (at the same rate: the turns last
  four times as long), where the extra updates change nothing that grows (a usage update, the
  session's title said again): the same timelines from four times the updates. The peak
  memory should follow the timelines, not the number of updates.

Latency: from an update's arrival (the time the client took it in, as its traffic records
it) to the return of the store commit that holds it, over every update of the calm
sessions (the hung and flooding agents' own are reported apart). Updates/s: every update
the sessions took in from the first prompt sent to the last calm turn's end, over that time.

Run from the repository root::

    python tests/benchmarks/bench_sessions.py [--sessions 200] [--updates 150] [--rate 10]
        [--flood 100000] [--store PATH_OR_URL] [--nice 10] [--freeze] [--json OUT]

Exits 1 when a session's result is wrong (a calm turn not ended, its timeline not what its
capture holds, an update not stored); the timings never fail the run.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import importlib.util
import json
import os
import platform
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

REPO: Final = Path(__file__).resolve().parents[2]
if importlib.util.find_spec("acp_adapters") is None:
    sys.path.insert(0, str(REPO / "framework"))

HERE: Final = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import anyio  # noqa: E402
from arrivals import update_arrival  # noqa: E402

import acp_adapters  # noqa: E402
from acp_adapters.store import Commit, Store, open_store  # noqa: E402

SESSION_ID: Final = "bench-session"
CHUNK: Final = "streamed text, twenty"  # 21 characters a chunk
TOOL_EVERY: Final = 20
HUNG_AFTER: Final = 10
RUNS: Final = ("calm", "hostile", "repeated")


# --- the captures ----------------------------------------------------------------------------


def _line(direction: str, at: float, message: dict[str, Any]) -> str:
    return json.dumps({"dir": direction, "t": round(at, 6), "msg": {"jsonrpc": "2.0", **message}})


def _update(update: dict[str, Any]) -> dict[str, Any]:
    return {"method": "session/update", "params": {"sessionId": SESSION_ID, "update": update}}


def turn_updates(count: int, *, repeated: int = 1) -> Iterator[dict[str, Any]]:
    """A turn of ``count`` updates that make the timeline; with ``repeated`` > 1, each is
    followed by ``repeated - 1`` that change nothing that grows."""
    made = 0
    tool = 0
    while made < count:
        if made == 0:
            update: dict[str, Any] = {
                "sessionUpdate": "plan",
                "entries": [
                    {"content": "read the code", "priority": "high", "status": "in_progress"},
                    {"content": "answer", "priority": "medium", "status": "pending"},
                ],
            }
        elif made % TOOL_EVERY == 1:
            tool += 1
            update = {
                "sessionUpdate": "tool_call",
                "toolCallId": f"read-{tool}",
                "title": f"Read src/module_{tool}.py",
                "kind": "read",
                "status": "in_progress",
            }
        elif made % TOOL_EVERY == 2:
            update = {
                "sessionUpdate": "tool_call_update",
                "toolCallId": f"read-{tool}",
                "status": "completed",
                "content": [
                    {"type": "content", "content": {"type": "text", "text": "x = 1\n" * 20}}
                ],
            }
        else:
            update = {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": CHUNK},
            }
        yield _update(update)
        made += 1
        for extra in range(repeated - 1):
            if extra % 2:
                yield _update({"sessionUpdate": "session_info_update", "title": "Benchmark"})
            else:
                yield _update(
                    {"sessionUpdate": "usage_update", "used": 1000 + made, "size": 200_000}
                )


def write_capture(path: Path, updates: list[dict[str, Any]], rate: float | None) -> Path:
    """A capture of one session, one prompt, ``updates``; ``rate`` updates a second (None:
    all at the same recorded time, for an agent played as fast as it goes)."""
    gap = 1 / rate if rate else 0.0
    lines = [
        _line("client->agent", 0.0, {"id": 0, "method": "initialize", "params": {}}),
        _line(
            "agent->client",
            0.0,
            {"id": 0, "result": {"protocolVersion": 1, "agentInfo": {"name": "bench"}}},
        ),
        _line("client->agent", 0.0, {"id": 1, "method": "session/new", "params": {}}),
        _line("agent->client", 0.0, {"id": 1, "result": {"sessionId": SESSION_ID}}),
        _line("client->agent", 1.0, {"id": 2, "method": "session/prompt", "params": {}}),
    ]
    at = 1.0
    for update in updates:
        at += gap
        lines.append(_line("agent->client", at, update))
    lines.append(_line("agent->client", at, {"id": 2, "result": {"stopReason": "end_turn"}}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@dataclass(frozen=True)
class Expected:
    """What a turn's timeline holds once its updates are in."""

    updates: int
    text_chars: int
    tools: int

    @classmethod
    def of(cls, updates: list[dict[str, Any]]) -> Expected:
        kinds = [u["params"]["update"]["sessionUpdate"] for u in updates]
        return cls(
            updates=len(updates),
            text_chars=kinds.count("agent_message_chunk") * len(CHUNK),
            tools=kinds.count("tool_call"),
        )


# --- one run -----------------------------------------------------------------------------------


@dataclass
class Latencies:
    """Seconds from each update's arrival to the commit that stored it, per thread."""

    by_thread: dict[str, list[float]] = field(default_factory=dict)
    #: How long each commit took, from the call to its return (seconds).
    commits: list[float] = field(default_factory=list)

    def measure(self, store: Store) -> None:
        """Time every commit of ``store`` (its ``commit`` wrapped on the instance)."""
        commit = store.commit

        async def timed(thread_id: str, batch: Commit) -> int:
            called = time.time()
            last = await commit(thread_id, batch)
            done = time.time()
            self.commits.append(done - called)
            found = self.by_thread.setdefault(thread_id, [])
            for entry in batch.events:
                at = update_arrival(entry)
                if at is not None:
                    found.append(done - at)
            return last

        store.commit = timed  # type: ignore[method-assign]


@dataclass
class Run:
    name: str
    sessions: int
    updates_per_session: int
    seconds: float = 0.0
    updates: int = 0
    calm: list[float] = field(default_factory=list)
    hung: list[float] = field(default_factory=list)
    flood: list[float] = field(default_factory=list)
    flood_updates: int = 0
    #: The flooding agent's updates taken in while the calm turns ran.
    flood_during: int = 0
    commits: int = 0
    #: The event loop thread's CPU time and the whole process's, over the run (seconds).
    loop_cpu: float = 0.0
    process_cpu: float = 0.0
    lag_p99: float = 0.0
    lag_max: float = 0.0
    commit_p50: float = 0.0
    commit_p99: float = 0.0
    timeline_bytes: int = 0
    peak_rss_mib: float = 0.0
    problems: list[str] = field(default_factory=list)


def replay_command(capture: Path, *, paced: bool, nice: int = 0) -> list[str]:
    speed = ["--speed", "1"] if paced else []
    lower = ["nice", "-n", str(nice)] if nice else []
    return [*lower, sys.executable, "-m", "acp_adapters.replay", "--match", "methods",
            "--timeout", "600", *speed, str(capture)]  # fmt: skip


async def run_sessions(args: argparse.Namespace, name: str, folder: Path) -> Run:
    repeated = 4 if name == "repeated" else 1
    rate = args.rate
    # The updates are written and let go: this process holds only what its sessions hold.
    updates = list(turn_updates(args.updates, repeated=repeated))
    calm_capture = write_capture(folder / f"{name}-calm.jsonl", updates, rate)
    calm_updates = len(updates)
    want = Expected.of(list(turn_updates(args.updates)))
    flood_updates = list(turn_updates(args.flood))
    flood_capture = write_capture(folder / f"{name}-flood.jsonl", flood_updates, None)
    flood_want = Expected.of(flood_updates)
    del updates, flood_updates
    kinds = ["calm"] * args.sessions
    if name == "hostile":
        kinds[-2:] = ["hung", "flood"]
    run = Run(name, args.sessions, calm_updates)
    workspace = folder / "workspace"
    workspace.mkdir(exist_ok=True)
    store = await open_store(args.store or folder / f"{name}.db")
    plugins = acp_adapters.get_plugin_manager()  # one for every session, as an embedder does
    latencies = Latencies()
    latencies.measure(store)
    sessions: list[Any] = [None] * len(kinds)
    connected = anyio.Event()
    calm_done = anyio.Event()
    ready = 0
    calm_left = kinds.count("calm")
    received = [0] * len(kinds)
    start = 0.0
    end = 0.0

    async def one(index: int, kind: str, scope: anyio.CancelScope) -> None:
        nonlocal ready, calm_left, end
        capture = flood_capture if kind == "flood" else calm_capture
        async with acp_adapters.connect(
            command=replay_command(capture, paced=kind != "flood", nice=args.nice),
            cwd=workspace,
            policy="read-only",
            store=store,
            disk_patches=False,
            pm=plugins,
        ) as session:
            sessions[index] = session
            pid = session.agent.process.process.pid

            def seen(event: Any) -> None:
                payload = event.payload
                if isinstance(payload, dict) and payload.get("method") == "session/update":
                    received[index] += 1
                    if kind == "hung" and received[index] == HUNG_AFTER:
                        os.kill(pid, signal.SIGSTOP)

            session.agent.on_traffic.subscribe(seen)
            ready += 1
            if ready == len(kinds):
                connected.set()
            await connected.wait()
            with scope:
                turn = await session.prompt("go")
                if kind == "calm" and turn.stop_reason != "end_turn":
                    run.problems.append(f"session {index}: the turn ended {turn.stop_reason}")
            if kind == "calm":
                calm_left -= 1
                if calm_left == 0:
                    end = time.perf_counter()
                    calm_done.set()

    lags: list[float] = []

    async def watch_the_loop() -> None:
        """How late the event loop wakes a task that sleeps 10 ms: what every session waits."""
        while not calm_done.is_set():
            asked = time.perf_counter()
            await anyio.sleep(0.01)
            lags.append(time.perf_counter() - asked - 0.01)

    scopes = [anyio.CancelScope() for _ in kinds]
    async with anyio.create_task_group() as group:
        for index, kind in enumerate(kinds):
            group.start_soon(one, index, kind, scopes[index])
        await connected.wait()
        if args.freeze:
            gc.freeze()  # what is here now (modules, sessions) is not looked at again
        start = time.perf_counter()
        loop_cpu = time.thread_time()
        process_cpu = time.process_time()
        group.start_soon(watch_the_loop)
        profiler = cProfile.Profile() if args.profile else None
        if profiler is not None:
            profiler.enable()
        await calm_done.wait()
        run.updates = sum(received)  # the updates taken in while the calm turns ran
        run.flood_during = sum(n for n, k in zip(received, kinds, strict=True) if k == "flood")
        run.loop_cpu = time.thread_time() - loop_cpu
        run.process_cpu = time.process_time() - process_cpu
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(args.profile)
        for index, kind in enumerate(kinds):
            if kind == "hung":
                scopes[index].cancel()
    run.seconds = end - start
    run.lag_p99 = quantile(lags, 0.99)
    run.lag_max = max(lags, default=0.0)
    run.commits = len(latencies.commits)
    run.commit_p50 = quantile(latencies.commits, 0.5)
    run.commit_p99 = quantile(latencies.commits, 0.99)
    for index, (kind, session) in enumerate(zip(kinds, sessions, strict=True)):
        thread_id = session.thread.id
        found = latencies.by_thread.get(thread_id, [])
        getattr(run, kind).extend(found)
        timeline = session.timeline
        run.timeline_bytes += len(json.dumps([i.model_dump(mode="json") for i in timeline]))
        if kind == "flood":
            run.flood_updates = received[index]
        if kind == "hung":
            continue
        expected = flood_want if kind == "flood" else want
        check_session(run, index, timeline, expected, len(found), received[index])
    await store.close()
    run.peak_rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return run


def check_session(
    run: Run, index: int, timeline: Any, want: Expected, stored: int, received: int
) -> None:
    messages = [i for i in timeline if isinstance(i, acp_adapters.AssistantMessageItem)]
    tools = [i for i in timeline if i.tool_call_id is not None]
    text = sum(len(m.text) for m in messages)
    if text != want.text_chars:
        run.problems.append(f"session {index}: {text} characters, expected {want.text_chars}")
    if len(tools) != want.tools or any(t.status != "completed" for t in tools):
        run.problems.append(f"session {index}: tool items {[t.status for t in tools]}")
    if stored != received:
        run.problems.append(f"session {index}: {received} updates taken in, {stored} stored")


# --- reporting -------------------------------------------------------------------------------


def quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's median over ``runs`` (the figures of one scenario, a run a round)."""
    merged: dict[str, Any] = {}
    for key, value in runs[0].items():
        values = [run[key] for run in runs]
        present = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
        if present:
            middle = quantile(present, 0.5)
            merged[key] = round(middle, 1) if isinstance(middle, float) else middle
        else:
            merged[key] = value
    merged["problems"] = [p for run in runs for p in run["problems"]]
    return merged


def figures(run: Run) -> dict[str, Any]:
    return {
        "sessions": run.sessions,
        "updates_per_session": run.updates_per_session,
        "updates": run.updates,
        "seconds": round(run.seconds, 3),
        "updates_per_second": round(run.updates / run.seconds) if run.seconds else 0,
        "calm_p50_ms": round(quantile(run.calm, 0.50) * 1000, 1),
        "calm_p99_ms": round(quantile(run.calm, 0.99) * 1000, 1),
        "calm_max_ms": round(max(run.calm, default=float("nan")) * 1000, 1),
        "calm_updates_stored": len(run.calm),
        "loop_cpu_percent": round(100 * run.loop_cpu / run.seconds) if run.seconds else 0,
        "process_cpu_percent": round(100 * run.process_cpu / run.seconds) if run.seconds else 0,
        "loop_lag_p99_ms": round(run.lag_p99 * 1000, 1),
        "loop_lag_max_ms": round(run.lag_max * 1000, 1),
        "commits": run.commits,
        "commit_call_p50_ms": round(run.commit_p50 * 1000, 1),
        "commit_call_p99_ms": round(run.commit_p99 * 1000, 1),
        "flood_updates": run.flood_updates,
        "flood_updates_during_calm": run.flood_during,
        "flood_p99_ms": round(quantile(run.flood, 0.99) * 1000, 1) if run.flood else None,
        "hung_updates_stored": len(run.hung),
        "timeline_mib": round(run.timeline_bytes / 2**20, 2),
        "peak_rss_mib": round(run.peak_rss_mib, 1),
        "problems": run.problems[:20],
    }


def child(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="bench-sessions-") as folder:
        run = anyio.run(run_sessions, args, args.child, Path(folder))
    print(json.dumps(figures(run)))
    return 0


ROWS: Final = (
    ("sessions", "sessions", "{:,}"),
    ("updates_per_session", "updates a session", "{:,}"),
    ("updates", "updates taken in", "{:,}"),
    ("updates_per_second", "updates/s", "{:,}"),
    ("calm_p50_ms", "calm commit p50 (ms)", "{:,.1f}"),
    ("calm_p99_ms", "calm commit p99 (ms)", "{:,.1f}"),
    ("calm_max_ms", "calm commit max (ms)", "{:,.1f}"),
    ("loop_cpu_percent", "event loop thread's CPU (%)", "{:,}"),
    ("process_cpu_percent", "this process's CPU (%)", "{:,}"),
    ("loop_lag_p99_ms", "event loop lag p99 (ms)", "{:,.1f}"),
    ("loop_lag_max_ms", "event loop lag max (ms)", "{:,.1f}"),
    ("commits", "store commits", "{:,}"),
    ("commit_call_p50_ms", "a commit's call, p50 (ms)", "{:,.1f}"),
    ("commit_call_p99_ms", "a commit's call, p99 (ms)", "{:,.1f}"),
    ("flood_updates", "flooding agent's updates", "{:,}"),
    ("flood_updates_during_calm", "  of them, while calm ran", "{:,}"),
    ("flood_p99_ms", "flooding agent's p99 (ms)", "{}"),
    ("hung_updates_stored", "hung agent's updates stored", "{:,}"),
    ("timeline_mib", "timelines (MiB of JSON)", "{:,.2f}"),
    ("peak_rss_mib", "peak RSS (MiB)", "{:,.1f}"),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--updates", type=int, default=150, help="updates of a calm turn")
    parser.add_argument("--rate", type=float, default=10.0, help="a calm agent's updates/s")
    parser.add_argument("--flood", type=int, default=100_000, help="the flooding agent's")
    parser.add_argument("--store", help="a store's path or URL (default: a temporary SQLite)")
    parser.add_argument(
        "--nice", type=int, default=10, help="the agents' niceness (0: as this process's)"
    )
    parser.add_argument("--runs", nargs="+", choices=RUNS, default=list(RUNS))
    parser.add_argument(
        "--repeat", type=int, default=1, help="rounds of the runs; the medians are reported"
    )
    parser.add_argument("--json", type=Path, help="write the figures here as JSON")
    parser.add_argument(
        "--freeze",
        action="store_true",
        help="gc.freeze() once the sessions are open, as docs/embedding.md suggests",
    )
    parser.add_argument("--child", choices=RUNS, help=argparse.SUPPRESS)
    parser.add_argument("--profile", help=argparse.SUPPRESS)  # with --child: cProfile to FILE
    args = parser.parse_args(argv)
    if args.child:
        return child(args)
    # The agents: as many processes as sessions, each with its pipes.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = min(hard, max(soft, 16 * args.sessions + 256))
    resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    options = [
        f"--sessions={args.sessions}",
        f"--updates={args.updates}",
        f"--rate={args.rate}",
        f"--flood={args.flood}",
        f"--nice={args.nice}",
        *(["--freeze"] if args.freeze else []),
        *([f"--store={args.store}"] if args.store else []),
    ]
    # Each round runs every scenario once, one after the other: what the machine does
    # meanwhile falls on all of them alike, and the medians of the rounds are reported.
    rounds: list[dict[str, Any]] = []
    for _ in range(args.repeat):
        round_: dict[str, Any] = {}
        for name in args.runs:
            done = subprocess.run(
                [sys.executable, __file__, "--child", name, *options],
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                print(done.stderr[-4000:], file=sys.stderr)
                return 1
            round_[name] = json.loads(done.stdout.strip().splitlines()[-1])
        rounds.append(round_)
    results = {name: medians([r[name] for r in rounds]) for name in args.runs}
    print(
        f"Python {platform.python_version()} ({platform.python_implementation()}), "
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs; "
        f"store: {args.store or 'SQLite (temporary)'}; "
        + (f"medians of {args.repeat} rounds" if args.repeat > 1 else "one round")
    )
    print(f"{'':32}" + "".join(f"{name:>14}" for name in results))
    for key, label, shape in ROWS:
        cells = []
        for figures_of in results.values():
            value = figures_of.get(key)
            cells.append(f"{'-' if value is None else shape.format(value):>14}")
        print(f"  {label:30}" + "".join(cells))
    ratios: dict[str, list[float]] = {}
    for round_ in rounds:
        if "calm" in round_ and "hostile" in round_:
            calm, hostile = round_["calm"], round_["hostile"]
            ratios.setdefault("hostile_over_calm_p50", []).append(
                hostile["calm_p50_ms"] / calm["calm_p50_ms"]
            )
            ratios.setdefault("hostile_over_calm_p99", []).append(
                hostile["calm_p99_ms"] / calm["calm_p99_ms"]
            )
        if "calm" in round_ and "repeated" in round_:
            ratios.setdefault("repeated_over_calm_rss", []).append(
                round_["repeated"]["peak_rss_mib"] / round_["calm"]["peak_rss_mib"]
            )
    labels = {
        "hostile_over_calm_p50": "calm p50, hostile / calm",
        "hostile_over_calm_p99": "calm p99, hostile / calm",
        "repeated_over_calm_rss": "peak RSS, repeated / calm",
    }
    for key, values in ratios.items():
        each = ", ".join(f"{v:.2f}" for v in values)
        shown = f"{quantile(values, 0.5):.2f}" + (f"  ({each})" if len(values) > 1 else "")
        print(f"  {labels[key]:30}{shown}")
    results["ratios"] = {key: round(quantile(values, 0.5), 3) for key, values in ratios.items()}
    results["rounds"] = rounds
    problems = [
        f"{name}: {p}" for round_ in rounds for name, r in round_.items() for p in r["problems"]
    ]
    for problem in problems:
        print(f"WRONG {problem}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
