"""Time our diff engine side by side with jsdiff 8.0.3, the reference it reproduces.

For each anchor (a fixed, seeded pair of files) this measures the median wall time of
``acp_adapters.diff_patch([entry])`` in this process and of jsdiff's ``createTwoFilesPatch``
with the same options in Node (``jsdiff_runner.mjs``), and checks that both produce the
same patch (sha256 of the text, or both give up at the 1000-edit cap).

Run from the repository root::

    python tests/benchmarks/bench_diff.py [--runs N] [--only a,c] [--json OUT]

Needs ``node`` and, on first use, ``npm``: jsdiff is installed with
``npm install --prefix CACHE diff@8.0.3`` where CACHE is ``$ACP_ADAPTERS_BENCH_CACHE`` or
``<repo>/.cache/bench/jsdiff-8.0.3``. Exits 1 when any anchor's output differs from
jsdiff's; the timing ratios never fail the run.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

REPO: Final = Path(__file__).resolve().parents[2]
HERE: Final = Path(__file__).resolve().parent

if importlib.util.find_spec("acp_adapters") is None:
    sys.path.insert(0, str(REPO / "framework"))

from acp_adapters import diff_patch  # noqa: E402

JSDIFF_VERSION: Final = "8.0.3"
SEED: Final = 20261130
PATH: Final = "src/bench_module.py"
# The short lines real code repeats; sprinkled in at REPEAT_RATE so that almost every line
# is unique (as in real files) yet the diff still meets some ambiguous matches.
REPEATED: Final = ("    }", "", "        pass", "    return None")
REPEAT_RATE: Final = 0.02
WORDS: Final = ("alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta")


# --- inputs ---------------------------------------------------------------------------------


class LineSource:
    """Code-like lines of about 70 characters, each made unique by a running counter."""

    def __init__(self, rng: random.Random, start: int = 0) -> None:
        self.rng = rng
        self.counter = start

    def unique(self) -> str:
        """One line no other call of this source returns."""
        self.counter += 1
        n, k, w = self.counter, self.rng.randrange(100), self.rng.choice(WORDS)
        templates = (
            f"def name_{n}(x, y={k}):  # handles the {w} case of the pipeline stage",
            f"    value_{n} = compute({k}, '{w}') + offset_{k} * scale_{n % 97}  # step",
            f"const item{n} = {{ id: {n}, tag: '{w}', weight: {k}, enabled: true }};",
            f"# note {n}: the {w} path keeps {k} entries around until flush is done",
            f"{n},{w},{k},{k * 3}.{k % 10},2026-11-30,status_{w},region-{k % 9},ok,final",
        )
        return self.rng.choice(templates)

    def lines(self, count: int, repeat_rate: float = REPEAT_RATE) -> list[str]:
        """``count`` lines, a ``repeat_rate`` share of them from the repeated short lines."""
        return [
            self.rng.choice(REPEATED) if self.rng.random() < repeat_rate else self.unique()
            for _ in range(count)
        ]


def text(lines: list[str]) -> str:
    """The file of these lines; every file ends with a newline."""
    return "".join(line + "\n" for line in lines)


def replaced(source: LineSource, lines: list[str], count: int) -> list[str]:
    """``lines`` with ``count`` scattered lines replaced by new unique lines.

    Each replacement is one deletion plus one insertion, so this is exactly 2 * count edits.
    """
    result = list(lines)
    for index in source.rng.sample(range(len(lines)), count):
        result[index] = source.unique()
    return result


def swapped(source: LineSource, lines: list[str], count: int) -> list[str]:
    """``lines`` with ``count`` non-overlapping adjacent pairs swapped.

    Pairs are picked among the aligned slots (2i, 2i+1) whose two lines are unique in the
    file, so each swap costs exactly 2 edits: a repeated line could be matched elsewhere
    and blur the count that puts an anchor just under or just over the cap.
    """
    repeated = set(REPEATED)
    slots = [
        i
        for i in range(0, len(lines) - 1, 2)
        if lines[i] not in repeated and lines[i + 1] not in repeated
    ]
    result = list(lines)
    for i in source.rng.sample(slots, count):
        result[i], result[i + 1] = result[i + 1], result[i]
    return result


def moved(source: LineSource, size: int, unique: int, filler: str) -> tuple[list[str], list[str]]:
    """Two files of ``filler`` lines holding the same ``unique`` lines at other places.

    The unique lines sit at random positions in the old file and, shuffled, at other
    random positions in the new one.
    """

    def place(lines: list[str]) -> list[str]:
        result = [filler] * size
        positions = sorted(source.rng.sample(range(size), unique))
        for position, line in zip(positions, lines, strict=True):
            result[position] = line
        return result

    specials = [source.unique() for _ in range(unique)]
    old = place(specials)
    source.rng.shuffle(specials)
    return old, place(specials)


def block_rewritten(source: LineSource, lines: list[str], start: int, count: int) -> list[str]:
    """``lines`` with the ``count`` lines from ``start`` replaced by as many new ones."""
    return lines[:start] + source.lines(count) + lines[start + count :]


def shifted(source: LineSource, size: int, unique: int, filler: str) -> tuple[list[str], list[str]]:
    """Like :func:`moved`, but each unique line moves a few lines and their order is kept."""
    positions = sorted(source.rng.sample(range(8, size - 8, 16), unique))
    specials = [source.unique() for _ in range(unique)]
    old = [filler] * size
    new = [filler] * size
    for position, line in zip(positions, specials, strict=True):
        old[position] = line
        new[position + source.rng.choice((-3, -2, 2, 3))] = line
    return old, new


@dataclass(frozen=True)
class Anchor:
    """One benchmark input: an ACP v1 diff entry (``old_text`` None is a new file)."""

    key: str
    description: str
    old_text: str | None
    new_text: str

    def entry(self) -> dict[str, object]:
        return {"type": "diff", "path": PATH, "oldText": self.old_text, "newText": self.new_text}

    @property
    def lines_old(self) -> int:
        return (self.old_text or "").count("\n")

    @property
    def lines_new(self) -> int:
        return self.new_text.count("\n")


Build = Callable[[LineSource], tuple[str | None, str]]


def _created(s: LineSource) -> tuple[str | None, str]:
    return None, text(s.lines(20_000))


def _emptied(s: LineSource) -> tuple[str | None, str]:
    return text(s.lines(20_000)), ""


def _replaced(size: int, count: int) -> Build:
    def build(s: LineSource) -> tuple[str | None, str]:
        old = s.lines(size)
        return text(old), text(replaced(s, old, count))

    return build


def _swapped(size: int, count: int) -> Build:
    def build(s: LineSource) -> tuple[str | None, str]:
        old = s.lines(size)
        return text(old), text(swapped(s, old, count))

    return build


def _rewritten(s: LineSource) -> tuple[str | None, str]:
    old = s.lines(20_000)
    # No repeated lines on the new side, so no line of the new file is in the old one.
    return text(old), text(s.lines(20_000, repeat_rate=0.0))


def _reversed(s: LineSource) -> tuple[str | None, str]:
    old = s.lines(20_000)
    return text(old), text(old[::-1])


def _moved(s: LineSource) -> tuple[str | None, str]:
    old, new = moved(s, 20_000, 600, "        pass")
    return text(old), text(new)


def _block(size: int, count: int) -> Build:
    def build(s: LineSource) -> tuple[str | None, str]:
        old = s.lines(size)
        return text(old), text(block_rewritten(s, old, size // 3, count))

    return build


def _shifted(s: LineSource) -> tuple[str | None, str]:
    old, new = shifted(s, 20_000, 600, "        pass")
    return text(old), text(new)


ANCHORS: Final[dict[str, tuple[str, Build]]] = {
    "a": ("20,000-line file created", _created),
    "b": ("20,000-line file emptied", _emptied),
    "c": ("20,000 lines, 10 scattered replacements", _replaced(20_000, 10)),
    "d": ("20,000-line total rewrite", _rewritten),
    "e450": ("2,000 lines, 450 scattered replacements", _replaced(2_000, 450)),
    "e550": ("2,000 lines, 550 scattered replacements", _replaced(2_000, 550)),
    "e'450": ("2,000 lines, 450 adjacent swaps", _swapped(2_000, 450)),
    "e'550": ("2,000 lines, 550 adjacent swaps", _swapped(2_000, 550)),
    "f": ("20,000 lines reversed", _reversed),
    "g": ("20,000 lines, 1 repeated + 600 unique moved", _moved),
    # Beyond the anchors: the searches our lower bounds help least.
    "h450": ("2,000 lines, one 450-line block rewritten", _block(2_000, 450)),
    "h550": ("2,000 lines, one 550-line block rewritten", _block(2_000, 550)),
    "i": ("20,000 lines, 100 scattered replacements", _replaced(20_000, 100)),
    "g2": ("20,000 lines, 1 repeated + 600 unique shifted", _shifted),
}


def build_anchor(key: str) -> Anchor:
    """The input of one anchor; the same on every run and whichever anchors are selected."""
    description, build = ANCHORS[key]
    # One generator per anchor (str seeds are hashed with sha512, not PYTHONHASHSEED), so
    # ``--only`` does not change the inputs of the anchors it keeps.
    old, new = build(LineSource(random.Random(f"{SEED}/{key}")))
    return Anchor(key, description, old, new)


# --- timing ---------------------------------------------------------------------------------


def sha256(value: str | None) -> str | None:
    return None if value is None else hashlib.sha256(value.encode("utf-8")).hexdigest()


def time_ours(anchor: Anchor, runs: int) -> tuple[float, str | None]:
    """Median milliseconds of ``diff_patch([entry])`` after one warm-up, and its output."""
    content = [anchor.entry()]
    output = diff_patch(content)
    times: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        diff_patch(content)
        times.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(times), output


def jsdiff_cache() -> Path:
    env = os.environ.get("ACP_ADAPTERS_BENCH_CACHE")
    return Path(env) if env else REPO / ".cache" / "bench" / f"jsdiff-{JSDIFF_VERSION}"


def ensure_jsdiff(cache: Path) -> None:
    """Install diff@8.0.3 under ``cache`` unless that exact version is already there."""
    manifest = cache / "node_modules" / "diff" / "package.json"
    if manifest.is_file() and json.loads(manifest.read_text())["version"] == JSDIFF_VERSION:
        return
    npm = shutil.which("npm")
    if npm is None:
        sys.exit(f"bench_diff: npm is needed to install diff@{JSDIFF_VERSION} into {cache}")
    cache.mkdir(parents=True, exist_ok=True)
    command = [npm, "install", "--no-audit", "--no-fund", "--prefix", str(cache)]
    # npm's chatter goes to stderr: stdout carries only the report.
    subprocess.run([*command, f"diff@{JSDIFF_VERSION}"], check=True, stdout=sys.stderr)


def node_binary() -> str:
    node = shutil.which("node")
    if node is None:
        sys.exit("bench_diff: node is needed to time jsdiff")
    return node


def time_jsdiff(
    anchors: list[Anchor], runs: int, cache: Path
) -> tuple[str, dict[str, tuple[float, str | None]]]:
    """jsdiff's version and, per anchor, its median milliseconds and output sha256."""
    cases = [
        {"key": a.key, "path": PATH, "oldText": a.old_text, "newText": a.new_text} for a in anchors
    ]
    with tempfile.TemporaryDirectory(prefix="bench_diff-") as tmp:
        source, target = Path(tmp) / "input.json", Path(tmp) / "output.json"
        source.write_text(json.dumps({"runs": runs, "cases": cases}), encoding="utf-8")
        runner = HERE / "jsdiff_runner.mjs"
        subprocess.run(
            [node_binary(), str(runner), str(source), str(target), str(cache)], check=True
        )
        report = json.loads(target.read_text(encoding="utf-8"))
    results = {key: (float(r["ms"]), r["sha256"]) for key, r in report["results"].items()}
    return str(report["diff_version"]), results


# --- report ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    anchor: Anchor
    ours_ms: float
    jsdiff_ms: float
    same_output: bool
    rendered: bool

    @property
    def ratio(self) -> float:
        return self.ours_ms / self.jsdiff_ms if self.jsdiff_ms > 0 else float("inf")

    def as_json(self) -> dict[str, object]:
        return {
            "ours_ms": round(self.ours_ms, 3),
            "jsdiff_ms": round(self.jsdiff_ms, 3),
            "ratio": round(self.ratio, 2),
            "same_output": self.same_output,
            "rendered": self.rendered,
            "lines_old": self.anchor.lines_old,
            "lines_new": self.anchor.lines_new,
        }


def print_table(rows: list[Row], *, markdown: bool = False) -> None:
    header = ("anchor", "description", "ours ms", "jsdiff ms", "ratio", "same output", "result")
    cells = [
        (
            r.anchor.key,
            r.anchor.description,
            f"{r.ours_ms:.2f}",
            f"{r.jsdiff_ms:.2f}",
            f"{r.ratio:.2f}",
            "yes" if r.same_output else "NO",
            "rendered" if r.rendered else "gave up",
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in [header, *cells]) for i in range(len(header))]
    right = {2, 3, 4}  # numeric columns

    def line(row: tuple[str, ...]) -> str:
        return "  ".join(
            cell.rjust(w) if i in right else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()

    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join("---:" if i in right else "---" for i in range(len(header))) + "|")
        for row in cells:
            print("| " + " | ".join(row) + " |")
        return
    print(line(header))
    print("  ".join("-" * w for w in widths))
    for row in cells:
        print(line(row))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=11, help="timed runs per anchor (default 11)")
    parser.add_argument("--only", help="comma-separated anchors, e.g. a,c (default: all)")
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write the results here")
    parser.add_argument("--markdown", action="store_true", help="print the table in Markdown")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.only is not None:
        keys = [key.strip() for key in args.only.split(",") if key.strip()]
        unknown = [key for key in keys if key not in ANCHORS]
        if unknown or not keys:
            parser.error(f"--only: unknown anchors {unknown}; choose from {', '.join(ANCHORS)}")
        args.only = keys
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    keys: list[str] = args.only or list(ANCHORS)
    runs: int = args.runs
    node = node_binary()
    node_version = subprocess.run(
        [node, "--version"], check=True, capture_output=True, text=True
    ).stdout.strip()
    print(f"python {platform.python_version()} ({platform.python_implementation()})")
    print(f"node {node_version}")
    processor = platform.processor() or platform.machine()
    print(f"machine {processor}, {os.cpu_count()} CPUs, {platform.platform()}")

    cache = jsdiff_cache()
    ensure_jsdiff(cache)
    anchors = [build_anchor(key) for key in keys]
    version, theirs = time_jsdiff(anchors, runs, cache)
    print(f"jsdiff {version} from {cache}; median of {runs} runs after one warm-up\n")

    rows: list[Row] = []
    for anchor in anchors:
        ours_ms, output = time_ours(anchor, runs)
        jsdiff_ms, jsdiff_hash = theirs[anchor.key]
        rows.append(
            Row(anchor, ours_ms, jsdiff_ms, sha256(output) == jsdiff_hash, output is not None)
        )
    print_table(rows, markdown=args.markdown)

    if args.json is not None:
        payload = {row.anchor.key: row.as_json() for row in rows}
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0 if all(row.same_output for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
