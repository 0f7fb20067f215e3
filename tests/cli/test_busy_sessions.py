"""``run -s NAME`` on a session another process drives: queued behind it (the default),
refused (``--busy fail``, exit 10), or queued without waiting (``--no-wait``); and
``sessions send`` / ``sessions follow``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

AGENT = Path(__file__).parent.parent / "agents" / "queue_agent.py"
CLI = [sys.executable, "-m", "acp_adapters"]


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "ACP_ADAPTERS_STORE": str(tmp_path / "store.db"),
        "QUEUE_AGENT_LOG": str(tmp_path / "log.jsonl"),
    }


def _cli(tmp_path: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], cwd=cwd, env=_env(tmp_path), capture_output=True, text=True, timeout=120
    )


def _runs(tmp_path: Path) -> list[dict[str, object]]:
    log = tmp_path / "log.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_a_second_run_queues_behind_the_first_or_is_refused(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    agent = f"{sys.executable} {AGENT}"
    with subprocess.Popen(
        [*CLI, "run", "-s", "q", "--command", agent, "--format", "jsonl", "sleep 3 slow"],
        cwd=work,
        env=_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as first:
        deadline = time.monotonic() + 30
        while not _runs(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.05)
        refused = _cli(
            tmp_path, "run", "-s", "q", "--command", agent, "--busy", "fail", "x", cwd=work
        )
        assert refused.returncode == 10
        assert f"pid {first.pid}" in refused.stderr  # the owner: the first run
        assert "driven by" in refused.stderr
        assert "--busy fail" in refused.stderr
        queued = _cli(
            tmp_path, "run", "-s", "q", "--command", agent, "--format", "jsonl", "another", cwd=work
        )
        out, _ = first.communicate(timeout=60)
    assert first.returncode == 0, out
    assert queued.returncode == 0, queued.stderr
    lines = [json.loads(line) for line in queued.stdout.splitlines()]
    said = [
        line["text"]
        for line in lines
        if line.get("type") == "item" and line["kind"] == "assistant_message"
    ]
    assert said[-1] == "done: another"
    assert "error" not in [line.get("kind") for line in lines]
    starts = [r for r in _runs(tmp_path) if r["event"] == "start"]
    assert [r["prompt"] for r in starts] == ["sleep 3 slow", "another"]
    # One after the other: the second turn started after the first ended.
    ends = [r for r in _runs(tmp_path) if r["event"] == "end"]
    assert float(starts[1]["t"]) >= float(ends[0]["t"])  # type: ignore[arg-type]


def test_no_wait_and_send_queue_and_print_the_prompt_s_id(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    agent = f"{sys.executable} {AGENT}"
    queued = _cli(tmp_path, "run", "-s", "n", "--command", agent, "--no-wait", "first", cwd=work)
    assert queued.returncode == 0, queued.stderr
    (first_id,) = queued.stdout.split()
    assert len(first_id) == 32
    sent = _cli(tmp_path, "sessions", "send", "n", "second", cwd=work)
    assert sent.returncode == 0, sent.stderr
    assert len(sent.stdout.strip()) == 32
    assert sent.stdout.strip() != first_id
    assert _runs(tmp_path) == []  # nothing ran: no one drives the session yet
    # A run of the session takes it: the queue first, in order, then its own prompt.
    ran = _cli(tmp_path, "run", "-s", "n", "--command", agent, "third", cwd=work)
    assert ran.returncode == 0, ran.stderr
    assert [r["prompt"] for r in _runs(tmp_path) if r["event"] == "start"] == [
        "first",
        "second",
        "third",
    ]
    followed = _cli(
        tmp_path, "sessions", "follow", "n", "--until-idle", "--format", "jsonl", cwd=work
    )
    assert followed.returncode == 0, followed.stderr
    texts = [
        json.loads(line).get("text")
        for line in followed.stdout.splitlines()
        if json.loads(line)["kind"] == "assistant_message"
    ]
    assert [t for t in texts if t and t.startswith("done")][-3:] == [
        "done: first",
        "done: second",
        "done: third",
    ]
