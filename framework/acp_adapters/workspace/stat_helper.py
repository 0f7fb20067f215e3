"""A helper process that takes half of a stat pass, so that a large workspace's checkpoint
uses two cores: CPython runs one ``stat`` at a time in a process (the GIL), git's own
stat pass runs on every core.

The helper is a child of this process (``python -I -S -c SOURCE``, standard library only),
given the roots' directory descriptors (``pass_fds``) and, over its stdin, the folders it
looks at: each folder's relative path, the names of its files and their stat as the
scanner last saw them. Each pass it opens each folder again from its root, component by
component (``O_PATH | O_DIRECTORY | O_NOFOLLOW``: a link where a folder was is a folder it
cannot open, which it says), ``fstatat``s every name (never following a link, never opening
a file) and answers the names whose stat changed, with the new stat. It reads nothing and
writes nothing: the scanner reads what changed itself, with its own confined opens.

Anything that goes wrong (the helper died, answered nothing in time, answered something
else) ends the helper: the scanner does that pass's stats itself, and every pass after.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

#: The helper's whole program.
SOURCE = r"""
import json, os, sys
roots = [int(fd) for fd in sys.argv[1:]]
FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
folders = {}

def opened(root, relative):
    here = os.open(".", FLAGS, dir_fd=roots[root])
    for part in relative.split("/") if relative else ():
        try:
            inner = os.open(part, FLAGS, dir_fd=here)
        finally:
            os.close(here)
        here = inner
    return here

for line in sys.stdin:
    asked = json.loads(line)
    for root, relative, names, facts in asked.get("update", ()):
        folders[(root, relative)] = {
            name: tuple(seen) if seen is not None else None for name, seen in zip(names, facts)
        }
    for root, relative in asked.get("drop", ()):
        folders.pop((root, relative), None)
    for root, relative, name in asked.get("forget", ()):
        known = folders.get((root, relative))
        if known is not None and name in known:
            known[name] = None
    changed, failed = [], []
    look = os.stat
    for (root, relative), known in folders.items():
        try:
            here = opened(root, relative)
        except OSError:
            failed.append([root, relative])
            continue
        try:
            for name, facts in known.items():
                try:
                    s = look(name, dir_fd=here, follow_symlinks=False)
                except OSError:
                    known[name] = None
                    changed.append([root, relative, name, None])
                    continue
                seen = (s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns, s.st_mode)
                if seen != facts:
                    known[name] = seen
                    changed.append([root, relative, name, list(seen)])
        finally:
            os.close(here)
    sys.stdout.write(json.dumps({"changed": changed, "failed": failed}) + "\n")
    sys.stdout.flush()
"""

#: How long a pass's answer may take (seconds) before the helper is given up.
ANSWER_SECONDS = 60.0
#: The answer's largest line (bytes): a helper that says more is given up.
MAX_ANSWER = 64 * 1024 * 1024

Key = tuple[int, str]
Facts = tuple[int, int, int, int, int]
#: A name whose stat changed: its folder, its name, its new stat (None: gone).
Changed = tuple[Key, str, "Facts | None"]


class HelperGone(Exception):
    """The helper died, or answered nothing in time, or something other than an answer."""


class StatHelper:
    """The helper process (see the module's docstring)."""

    def __init__(self, root_descriptors: Sequence[int]) -> None:
        descriptors = [int(d) for d in root_descriptors]
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", SOURCE, *map(str, descriptors)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            pass_fds=descriptors,
            close_fds=True,
        )
        self._buffer = b""

    def ask(
        self,
        *,
        update: Sequence[tuple[int, str, Sequence[str], Sequence[Facts | None]]] = (),
        drop: Sequence[Key] = (),
        forget: Sequence[tuple[int, str, str]] = (),
    ) -> None:
        """Start a pass: the folders whose names and stats changed first, then the pass."""
        request: dict[str, Any] = {
            "update": [[root, rel, list(names), list(facts)] for root, rel, names, facts in update],
            "drop": [list(key) for key in drop],
            "forget": [list(one) for one in forget],
        }
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(json.dumps(request).encode() + b"\n")
            stdin.flush()
        except OSError as error:
            raise HelperGone(f"the stat helper does not take requests: {error}") from error

    def answer(
        self, timeout: float = ANSWER_SECONDS
    ) -> tuple[list[tuple[Key, str, Facts | None]], list[Key]]:
        """The pass's answer: each changed name (its folder, its new stat or None: gone), and
        the folders it could not open."""
        line = self._line(timeout)
        try:
            told = json.loads(line)
            changed = [
                ((int(root), str(rel)), str(name), None if seen is None else _facts(seen))
                for root, rel, name, seen in told["changed"]
            ]
            failed = [(int(root), str(rel)) for root, rel in told["failed"]]
        except (ValueError, TypeError, KeyError) as error:
            raise HelperGone(f"the stat helper answered something else: {error}") from error
        return changed, failed

    def _line(self, timeout: float) -> bytes:
        stdout = self.process.stdout
        assert stdout is not None
        descriptor = stdout.fileno()
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([descriptor], [], [], timeout)
            if not ready:
                raise HelperGone(f"the stat helper answered nothing in {timeout} s")
            chunk = os.read(descriptor, 1 << 20)
            if not chunk:
                raise HelperGone("the stat helper exited")
            self._buffer += chunk
            if len(self._buffer) > MAX_ANSWER:
                raise HelperGone("the stat helper's answer is too long")
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def close(self) -> None:
        """End the helper (its stdin closed: it exits; else it is killed) and reap it."""
        process = self.process
        with contextlib.suppress(OSError):
            if process.stdin is not None:
                process.stdin.close()
        try:
            process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


def _facts(seen: Sequence[Any]) -> Facts:
    ino, size, mtime, ctime, mode = (int(value) for value in seen)
    return (ino, size, mtime, ctime, mode)


__all__ = ["ANSWER_SECONDS", "HelperGone", "StatHelper"]
