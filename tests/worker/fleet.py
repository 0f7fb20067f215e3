"""A fleet of worker processes on one store, fed by sender processes: the scale test's and
the benchmark's harness (``tests/worker/test_scale.py``, ``tests/benchmarks/bench_workers.py``).

Each thread is a folder of its own; the scripted agent (``tests/agents/queue_agent.py``)
logs each prompt it runs with its pid and folder, so that what ran, how many times and
whether two agents ever drove one thread at once can be read back.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from queue_helpers import AGENT, runs

#: What a sender process runs: it queues its prompts (``thread-index:text`` lines on stdin),
#: making each thread on first use.
SENDER = """
import sys, anyio
from acp_adapters.client import enqueue
from acp_adapters.store import open_store

async def main() -> None:
    store_url, agent, base = sys.argv[1], sys.argv[2], sys.argv[3]
    async with await open_store(store_url) as store:
        for line in sys.stdin:
            index, _, text = line.rstrip("\\n").partition(":")
            queued = await enqueue(
                store, f"t{index}", text, command=[sys.executable, agent], cwd=f"{base}/t{index}"
            )
            print(queued.id, flush=True)

anyio.run(main)
"""


@dataclass
class Fleet:
    """Workers and senders on ``store`` (a URL or a SQLite path), threads in ``base``."""

    store: str
    base: Path
    log: Path
    lease: float = 2.0
    concurrency: int = 4
    workers: list[subprocess.Popen[str]] = field(default_factory=list)

    def env(self) -> dict[str, str]:
        return {**os.environ, "QUEUE_AGENT_LOG": str(self.log)}

    def make_threads(self, count: int) -> None:
        for index in range(count):
            (self.base / f"t{index}").mkdir(parents=True, exist_ok=True)

    def start_worker(self) -> subprocess.Popen[str]:
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "acp_adapters",
                "worker",
                "--store",
                self.store,
                "--concurrency",
                str(self.concurrency),
                "--idle",
                "0.5",
                "--grace",
                "30",
                "--lease",
                str(self.lease),
            ],
            env=self.env(),
            stderr=subprocess.PIPE,
            text=True,
        )
        self.workers.append(worker)
        assert worker.stderr is not None
        ready = worker.stderr.readline()  # its first line: it is taking threads
        assert ready.startswith("worker: driving"), ready
        return worker

    def send(self, prompts: list[tuple[int, str]], senders: int) -> list[str]:
        """Queue ``(thread index, text)`` prompts from ``senders`` processes at once; the
        ids, in no particular order."""
        parts = [prompts[number::senders] for number in range(senders)]
        running = [
            subprocess.Popen(
                [sys.executable, "-c", SENDER, self.store, str(AGENT), str(self.base)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=self.env(),
            )
            for _ in parts
        ]
        ids: list[str] = []
        for process, part in zip(running, parts, strict=True):
            out, err = process.communicate(
                "".join(f"{index}:{text}\n" for index, text in part), timeout=300
            )
            assert process.returncode == 0, err
            ids += out.split()
        return ids

    def stop(self) -> None:
        for worker in self.workers:
            if worker.poll() is None:
                worker.send_signal(signal.SIGTERM)
        for worker in self.workers:
            try:
                worker.communicate(timeout=60)
            except subprocess.TimeoutExpired:  # noqa: PERF203 (one stuck worker)
                worker.kill()
                worker.communicate()

    def runs(self) -> list[dict[str, Any]]:
        return runs(self.log)


def wait_until(check: Any, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds} s")
        time.sleep(0.1)
