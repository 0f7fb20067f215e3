"""Time our client's session/update throughput side by side with the official ACP Python SDK.

Both clients drive the same scripted agent, ``flood_agent.py`` (stdlib JSON, no SDK, so
both read exactly the same bytes), which answers one ``session/prompt`` with N
``session/update`` notifications (40-character text chunks of one message, a read tool
call and its completion in every 50 updates, a plan in every 500) and then
``end_turn``. The timed span is from sending the prompt to the turn's return, in this
process; updates/s is N / seconds. The agent's start, ``initialize`` and ``session/new``
are outside it.

* ours: ``acp_adapters.connect(command=[python, flood_agent.py, N], policy="read-only")``
  and ``await session.prompt("go")``: the anyio transport, the wire models, the reducer
  and the projection into the timeline. The turn's items are checked: one assistant
  message with all the text, one item per tool call, completed.
* the SDK (``agent-client-protocol==0.12.1``, import name ``acp``): ``spawn_agent_process``
  and ``ClientSideConnection.prompt`` with a minimal ``Client`` whose ``session_update``
  keeps what a real client must keep: the text chunks of each message (a list of parts,
  joined once inside the timed span), the tool calls by id (an update merged into its
  call), the latest plan. Its counts are checked the same way.

Memory: the peak RSS (``ru_maxrss`` of a fresh child process that runs one turn of ours,
raw, in MiB) for a 100,000-update turn and for a 10,000-update turn (and, for reference
only, the SDK's for 100,000; printed, not in the JSON). The final timeline
holds one message of N * ~0.96 * 40 characters and N / 50 tool items, so the peak should
grow by about that much and not with the number of updates as such.

Each side is warmed up once, then the runs alternate (ours, SDK) and the medians are
reported. Run from the repository root::

    python tests/benchmarks/bench_updates.py [--updates 20000] [--runs 5] [--json OUT]
    python tests/benchmarks/bench_updates.py --profile [--updates N]   # cProfile of ours

Needs the SDK: ``pip install agent-client-protocol==0.12.1`` (exits 2 without it).
Exits 1 when a client's result is wrong; the timings never fail the run.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import importlib.util
import io
import json
import platform
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

REPO: Final = Path(__file__).resolve().parents[2]
HERE: Final = Path(__file__).resolve().parent
AGENT: Final = HERE / "flood_agent.py"
SDK_REQUIREMENT: Final = "agent-client-protocol==0.12.1"

if importlib.util.find_spec("acp_adapters") is None:
    sys.path.insert(0, str(REPO / "framework"))
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

if importlib.util.find_spec("acp") is None:
    print(f"the ACP Python SDK is not installed: pip install {SDK_REQUIREMENT}", file=sys.stderr)
    raise SystemExit(2)

from flood_agent import MESSAGE_ID, Expected, expected  # noqa: E402

# Each client is imported where it runs, so that a memory run loads only its own.
if TYPE_CHECKING:
    from acp.schema import AgentPlanUpdate, ToolCallStart

    import acp_adapters

DEFAULT_UPDATES: Final = 20_000
DEFAULT_RUNS: Final = 5
RSS_UPDATES: Final = (10_000, 100_000)


class WrongResult(Exception):
    """A client's result does not match what the agent sent."""


def check(what: str, got: object, want: object) -> None:
    if got != want:
        raise WrongResult(f"{what}: got {got!r}, expected {want!r}")


# --- ours ------------------------------------------------------------------------------------


def agent_command(count: int) -> list[str]:
    return [sys.executable, str(AGENT), str(count)]


def check_ours(items: list[acp_adapters.TimelineItem], want: Expected) -> None:
    """The turn's items: its prompt, one assistant message, one item per tool call, a plan."""
    import acp_adapters

    messages = [i for i in items if isinstance(i, acp_adapters.AssistantMessageItem)]
    check("ours: assistant messages", len(messages), 1)
    check("ours: assistant text length", len(messages[0].text), want.text_chars)
    tools = [i for i in items if i.tool_call_id is not None]
    check("ours: tool items", len(tools), want.tool_calls)
    check("ours: tool items completed", sum(i.status == "completed" for i in tools), len(tools))
    plans = sum(isinstance(i, acp_adapters.PlanItem) for i in items)
    check("ours: plan items", plans, 1 if want.plans else 0)
    check("ours: user messages", sum(isinstance(i, acp_adapters.UserMessageItem) for i in items), 1)


async def ours_once(
    count: int, profiler: cProfile.Profile | None = None, keep: list[Any] | None = None
) -> float:
    """One turn of ``count`` updates through our client; the seconds it took.

    ``keep`` receives the turn's items (for the memory run to weigh the timeline).
    """
    import acp_adapters

    with tempfile.TemporaryDirectory(prefix="bench-updates-") as cwd:
        pm = acp_adapters.get_plugin_manager(load_entrypoints=False, environ={})
        async with acp_adapters.connect(
            command=agent_command(count), cwd=cwd, policy="read-only", pm=pm
        ) as session:
            if profiler is not None:
                profiler.enable()
            start = time.perf_counter()
            turn = await session.prompt("go")
            seconds = time.perf_counter() - start
            if profiler is not None:
                profiler.disable()
            check("ours: stop reason", turn.stop_reason, "end_turn")
            check("ours: problems", session.problems, [])
            check_ours(turn.items, expected(count))
            if keep is not None:
                keep.extend(turn.items)
    return seconds


# --- the SDK ---------------------------------------------------------------------------------


@dataclass
class KeepingClient:
    """A minimal ACP ``Client`` for the SDK: it keeps every update as a real client must."""

    #: Text parts of each message, by message id (joined by :meth:`text`).
    parts: dict[str | None, list[str]] = field(default_factory=dict)
    tool_calls: dict[str, ToolCallStart] = field(default_factory=dict)
    plan: AgentPlanUpdate | None = None
    updates: int = 0
    other: int = 0

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        """Keep one update (a model of ``acp.schema``, told apart by its ``sessionUpdate``)."""
        self.updates += 1
        kind = update.session_update
        if kind == "agent_message_chunk":
            text = getattr(update.content, "text", None)
            if isinstance(text, str):
                self.parts.setdefault(update.message_id, []).append(text)
        elif kind == "tool_call":
            self.tool_calls[update.tool_call_id] = update
        elif kind == "tool_call_update":
            changed = {
                name: getattr(update, name)
                for name in update.model_fields_set
                if name not in ("session_update", "tool_call_id", "field_meta")
            }
            call = self.tool_calls.get(update.tool_call_id)
            if call is None:
                from acp.schema import ToolCallStart

                call = ToolCallStart(
                    session_update="tool_call", tool_call_id=update.tool_call_id, title=""
                )
            self.tool_calls[update.tool_call_id] = call.model_copy(update=changed)
        elif kind == "plan":
            self.plan = update
        else:
            self.other += 1

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        import acp

        raise acp.RequestError.method_not_found("session/request_permission")

    def text(self, message_id: str | None) -> str:
        return "".join(self.parts.get(message_id, ()))


def check_sdk(client: KeepingClient, text: str, want: Expected) -> None:
    check("sdk: updates seen", client.updates, want.updates)
    check("sdk: messages", list(client.parts), [MESSAGE_ID])
    check("sdk: text length", len(text), want.text_chars)
    check("sdk: tool calls", len(client.tool_calls), want.tool_calls)
    completed = sum(c.status == "completed" for c in client.tool_calls.values())
    check("sdk: tool calls completed", completed, want.tool_calls)
    check("sdk: a plan", client.plan is not None, want.plans > 0)
    check("sdk: other updates", client.other, 0)


async def sdk_once(count: int) -> float:
    """One turn of ``count`` updates through the SDK's client connection; the seconds."""
    import acp

    client = KeepingClient()
    with tempfile.TemporaryDirectory(prefix="bench-updates-") as cwd:
        async with acp.spawn_agent_process(
            cast(acp.Client, client), sys.executable, str(AGENT), str(count), cwd=cwd
        ) as (connection, _process):
            await connection.initialize(protocol_version=1)
            new = await connection.new_session(cwd=cwd, mcp_servers=[])
            start = time.perf_counter()
            answer = await connection.prompt(
                session_id=new.session_id, prompt=[acp.text_block("go")]
            )
            text = client.text(MESSAGE_ID)
            seconds = time.perf_counter() - start
    check("sdk: stop reason", answer.stop_reason, "end_turn")
    check_sdk(client, text, expected(count))
    return seconds


# --- memory ----------------------------------------------------------------------------------


def peak_rss_mb() -> float:
    """This process's peak resident set size so far, in MiB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def child_peak_rss(count: int, side: str = "ours") -> tuple[float, float]:
    """A fresh process runs one turn of ``count`` updates through ``side``.

    Its peak RSS, and the size of the turn's timeline as JSON (ours only), in MiB.
    """
    child = [sys.executable, str(Path(__file__).resolve()), "--rss-child", str(count)]
    done = subprocess.run([*child, "--rss-side", side], capture_output=True, text=True)
    if done.returncode != 0:
        raise WrongResult(f"the {side} memory run ({count} updates) failed: {done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return float(result["peak_rss_mb"]), float(result["timeline_mb"])


# --- running ---------------------------------------------------------------------------------


def median_seconds(
    runs: int, sides: dict[str, Callable[[], Coroutine[Any, Any, float]]]
) -> dict[str, float]:
    """Warm each side up once, then run them alternately ``runs`` times; median seconds."""
    for run in sides.values():
        asyncio.run(run())
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(runs):
        for name, run in sides.items():
            times[name].append(asyncio.run(run()))
    return {name: statistics.median(seconds) for name, seconds in times.items()}


def profile_ours(count: int, top: int) -> None:
    """One turn of ours under cProfile (the prompt's span only); the top costs by own time."""
    asyncio.run(ours_once(count))  # warm-up
    profiler = cProfile.Profile()
    seconds = asyncio.run(ours_once(count, profiler))
    print(f"ours, {count} updates: {seconds:.3f} s ({count / seconds:,.0f} updates/s)")
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    print(out.getvalue())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--updates", type=int, default=DEFAULT_UPDATES, help="N per turn")
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, help="timed runs per side")
    parser.add_argument("--json", metavar="OUT", help="write the results as JSON to OUT")
    parser.add_argument("--no-rss", action="store_true", help="skip the memory measurements")
    parser.add_argument("--profile", action="store_true", help="cProfile one turn of ours")
    parser.add_argument("--top", type=int, default=25, help="rows of the --profile tables")
    parser.add_argument("--rss-child", type=int, metavar="N", help=argparse.SUPPRESS)
    parser.add_argument(
        "--rss-side", choices=("ours", "sdk"), default="ours", help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)

    if args.rss_child is not None:
        items: list[Any] = []
        try:
            if args.rss_side == "sdk":
                asyncio.run(sdk_once(args.rss_child))
            else:
                asyncio.run(ours_once(args.rss_child, keep=items))
        except WrongResult as error:
            print(f"wrong result: {error}", file=sys.stderr)
            return 1
        peak = peak_rss_mb()
        # The final timeline's weight, as JSON: what the peak should follow.
        timeline = sum(len(item.model_dump_json()) for item in items) / (1024 * 1024)
        print(json.dumps({"peak_rss_mb": peak, "timeline_mb": timeline}))
        return 0
    if args.profile:
        profile_ours(args.updates, args.top)
        return 0

    count, runs = args.updates, args.runs
    try:
        sdk_version = version("agent-client-protocol")
    except PackageNotFoundError:
        sdk_version = "unknown"
    print(
        f"Python {platform.python_version()} ({platform.python_implementation()}), "
        f"{platform.system()} {platform.machine()}; SDK agent-client-protocol {sdk_version}"
    )
    print(f"{count} updates per turn, median of {runs} runs after one warm-up")
    try:
        # Memory first: Linux carries the peak RSS of the process that forks over into the
        # child's ru_maxrss, so the children are started while this one is still small.
        rss = {} if args.no_rss else {n: child_peak_rss(n) for n in RSS_UPDATES}
        sdk_rss = None if args.no_rss else child_peak_rss(max(RSS_UPDATES), "sdk")[0]
        medians = median_seconds(
            runs, {"ours": lambda: ours_once(count), "sdk": lambda: sdk_once(count)}
        )
    except WrongResult as error:
        print(f"wrong result: {error}", file=sys.stderr)
        return 1
    ours_rate, sdk_rate = count / medians["ours"], count / medians["sdk"]
    ratio = ours_rate / sdk_rate

    rows = [
        ("ours updates/s", f"{ours_rate:,.0f}", f"{medians['ours']:.3f} s per turn"),
        ("SDK updates/s", f"{sdk_rate:,.0f}", f"{medians['sdk']:.3f} s per turn"),
        ("ratio ours/SDK", f"{ratio:.2f}", ""),
    ]
    for n, (mb, timeline_mb) in rss.items():
        note = f"ours, a fresh process; its timeline is {timeline_mb:.1f} MiB as JSON"
        rows.append((f"peak RSS, {n:,} updates", f"{mb:.1f} MiB", note))
    if sdk_rss is not None:
        rows.append(
            (f"(SDK peak RSS, {max(RSS_UPDATES):,})", f"{sdk_rss:.1f} MiB", "for reference only")
        )
    width = max(len(r[0]) for r in rows)
    value_width = max(len(r[1]) for r in rows)
    for name, value, note in rows:
        print(f"  {name:<{width}}  {value:>{value_width}}  {note}".rstrip())

    if args.json:
        result = {
            "ours_updates_per_s": ours_rate,
            "sdk_updates_per_s": sdk_rate,
            "ratio": ratio,
            "peak_rss_mb_100k": rss[100_000][0] if rss else None,
            "peak_rss_mb_10k": rss[10_000][0] if rss else None,
            "timeline_mb_100k": rss[100_000][1] if rss else None,
            "timeline_mb_10k": rss[10_000][1] if rss else None,
            "updates": count,
            "runs": runs,
        }
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
