"""The replay-memory benchmark (``tests/benchmarks/bench_replay.py``, full size in ``tox -e
bench``) runs at a small size: its capture projects to one completed file change a call, and
it reports its sizes. Its figures are measured there, never asserted here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_replay.py"


def test_the_replay_benchmark_projects_its_capture_and_reports_its_sizes(tmp_path: Path) -> None:
    out = tmp_path / "replay.json"
    done = subprocess.run(
        [sys.executable, str(BENCH), "--tools", "300", "--runs", "1", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert done.returncode == 0, done.stderr
    results = json.loads(out.read_text(encoding="utf-8"))
    assert [r["tools"] for r in results] == [30, 300]
    for r in results:
        assert r["capture_mb"] > 0
        assert r["timeline_mb"] > 0
        assert abs(r["ratio"] - r["peak_mb"] / r["timeline_mb"]) < 0.05 * r["ratio"] + 0.01
    # Ten times the calls, about ten times the timeline.
    assert 8 < results[1]["timeline_mb"] / results[0]["timeline_mb"] < 12
    assert "| 300 |" in done.stdout
