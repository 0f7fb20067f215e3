"""Process families: a process this client starts, and every process that comes from it.

A process this client starts (the agent, a terminal's command) is the root of a
:class:`ProcessFamily`. It runs in a session and a process group of its own
(``start_new_session``), and its environment carries a mark
(:data:`FAMILY_VARIABLE`) that what it starts inherits. What it detaches leaves
its group (``setsid``, a double fork), but on Linux it is still found, in /proc,
and killed with the family (:func:`end_families`): a process belongs to a family
when it started after the root and

* its session or process group is the root's (a process id is not given out
  again while a session or a group of that number has a member), or
* its parents lead to the root, or to another member, or
* its environment carries the family's mark.

Each one is signalled through a pidfd opened after it was found and checked
again (its start time), so that a process that ended meanwhile and whose id
went to an unrelated process is never signalled. On other systems the family
is its process group only.

On Linux this process is made a child subreaper once (:func:`become_subreaper`,
process-wide): what a family leaves orphaned is reparented here rather than to
init, so its id stays this process's (a zombie) until it is reaped. Only the
members a sweep killed are reaped, by their own ids, never with ``waitpid(-1)``,
and never a process this client started itself (its asyncio or trio watcher
waits for it).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import signal
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import anyio

#: The environment variable that marks a family's processes: the marks of the
#: families a process descends from, joined by ``:`` (an agent that starts agents
#: of its own with this library adds one).
FAMILY_VARIABLE = "ACP_ADAPTERS_FAMILY"
#: How many times a sweep looks again for members started while it killed.
SWEEP_ROUNDS = 8
#: How long a sweep waits for the orphans it killed to be reaped.
REAP_SECONDS = 1.0

_PROC = "/proc"
_PR_SET_CHILD_SUBREAPER = 36
_subreaper: bool | None = None
#: The roots started here whose exit status a watcher (asyncio's, trio's) waits for:
#: never reaped by a sweep, even when another family's mark is in their environment.
_roots: set[int] = set()


def become_subreaper() -> bool:
    """Make this process a child subreaper (Linux, once, for the whole process); whether it is.

    Orphans of its descendants are then reparented to it rather than to init:
    their ids stay taken (by a zombie) until a sweep reaps them, so none is given
    to another process while it may still be signalled. It is never undone:
    orphans that no family claims stay zombies until this process exits.
    """
    global _subreaper
    if _subreaper is None:
        _subreaper = False
        if sys.platform.startswith("linux"):
            with contextlib.suppress(OSError, AttributeError):
                libc = ctypes.CDLL(None, use_errno=True)
                _subreaper = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    return _subreaper


@dataclass(frozen=True)
class ProcessInfo:
    """What /proc/PID/stat says of a process."""

    pid: int
    state: str
    ppid: int
    pgid: int
    sid: int
    #: When it started, in clock ticks since boot: with the pid, who it is.
    start: int

    @property
    def zombie(self) -> bool:
        return self.state in ("Z", "X")


def _stat(pid: int) -> ProcessInfo | None:
    try:
        with open(f"{_PROC}/{pid}/stat", "rb") as file:
            text = file.read().decode("ascii", "replace")
    except OSError:
        return None
    # The command's name (in parentheses) may hold spaces and parentheses itself.
    fields = text[text.rfind(")") + 2 :].split()
    try:
        return ProcessInfo(
            pid, fields[0], int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19])
        )
    except (IndexError, ValueError):
        return None


def _processes() -> dict[int, ProcessInfo]:
    try:
        names = os.listdir(_PROC)
    except OSError:
        return {}
    found = (_stat(int(name)) for name in names if name.isdigit())
    return {stat.pid: stat for stat in found if stat is not None}


def _marks(pid: int) -> set[str]:
    """The family marks in a process's environment (as it was when it started its program)."""
    try:
        with open(f"{_PROC}/{pid}/environ", "rb") as file:
            environ = file.read()
    except OSError:
        return set()
    prefix = FAMILY_VARIABLE.encode() + b"="
    for entry in environ.split(b"\0"):
        if entry.startswith(prefix):
            return set(entry[len(prefix) :].decode("ascii", "replace").split(":"))
    return set()


def processes_visible() -> bool:
    """Whether this system shows its processes in /proc (Linux): families beyond their group."""
    return os.path.isdir(f"{_PROC}/self")


class ProcessFamily:
    """A process this client starts (the root) and every process that comes from it."""

    def __init__(self) -> None:
        self.mark = secrets.token_hex(8)
        self.pid: int | None = None
        #: No member started before this (clock ticks since boot): taken before the root
        #: starts, since a root that exits at once may be collected before it can be read.
        self._floor = _ticks_now()
        self._start: int | None = None  # the root's own, if it could be read

    def environment(self, env: Mapping[str, str]) -> dict[str, str]:
        """``env`` with this family's mark added to those already there."""
        marked = dict(env)
        outer = marked.get(FAMILY_VARIABLE, "")
        marked[FAMILY_VARIABLE] = f"{outer}:{self.mark}" if outer else self.mark
        return marked

    def started(self, pid: int) -> None:
        """The root runs as ``pid``: its watcher, not a sweep, collects its exit status."""
        self.pid = pid
        stat = _stat(pid)
        self._start = stat.start if stat is not None and stat.start >= self._floor else None
        _roots.add(pid)

    def collected(self) -> None:
        """The root's exit status was collected (its id may be given out again)."""
        if self.pid is not None:
            _roots.discard(self.pid)

    def _claims(self, stat: ProcessInfo, table: Mapping[int, ProcessInfo], marks: set[str]) -> bool:
        root = self.pid
        if root is None or stat.pid == root or stat.start < self._floor:
            return False
        if root in (stat.sid, stat.pgid) or self.mark in marks:
            return True
        parent, steps = table.get(stat.ppid), 0
        while parent is not None and steps < len(table):
            if parent.pid == root:  # the root itself, not a process given its id since
                return self._start is not None and parent.start == self._start
            parent, steps = table.get(parent.ppid), steps + 1
        return False


def _is_root(stat: ProcessInfo, ours: int) -> bool:
    """Whether ``stat`` is a root started here, which its own watcher collects."""
    return stat.ppid == ours and stat.pid in _roots


def _ticks_now() -> int:
    """Now, in the clock ticks since boot that /proc/PID/stat counts start times in; a tick
    early, for the rounding of /proc/uptime."""
    try:
        with open(f"{_PROC}/uptime", "rb") as file:
            uptime = float(file.read().split()[0])
        return max(0, int(uptime * os.sysconf("SC_CLK_TCK")) - 1)
    except (OSError, ValueError, IndexError):
        return 0


def family_members(families: Sequence[ProcessFamily]) -> dict[int, ProcessInfo]:
    """Every process (but the roots and this one) that belongs to one of ``families`` now.

    What descends from a root only by its parents (it left the root's session and
    dropped the mark) is found only while those parents live: take this before the
    root is asked to exit, and hand it to :func:`end_families` afterwards.
    """
    if not processes_visible():
        return {}
    table = _processes()
    table.pop(os.getpid(), None)
    # Nothing that started before every root can belong to one of them.
    oldest = min(family._floor for family in families)
    ours = os.getpid()
    members: dict[int, ProcessInfo] = {}
    for stat in table.values():
        if stat.start < oldest or _is_root(stat, ours):
            continue
        marks = _marks(stat.pid) if not stat.zombie else set()
        if any(family._claims(stat, table, marks) for family in families):
            members[stat.pid] = stat
    # A descendant of a member (which may have left the root's session) is a member too.
    grew = True
    while grew:
        grew = False
        for stat in table.values():
            parent = members.get(stat.ppid)
            if (
                parent is not None
                and stat.pid not in members
                and not _is_root(stat, ours)
                and stat.start >= parent.start
            ):
                members[stat.pid] = stat
                grew = True
    return members


def _kill(member: ProcessInfo) -> bool:
    """SIGKILL ``member`` if it is still the process that was found; whether it was sent."""
    pidfd_open = getattr(os, "pidfd_open", None)
    send = getattr(signal, "pidfd_send_signal", None)
    descriptor: int | None = None
    if pidfd_open is not None and send is not None:
        with contextlib.suppress(OSError):
            descriptor = pidfd_open(member.pid)
    try:
        now = _stat(member.pid)
        if now is None or now.start != member.start:
            return False  # gone; its id may be someone else's now
        if descriptor is not None and send is not None:
            send(descriptor, signal.SIGKILL)
        else:
            os.kill(member.pid, signal.SIGKILL)
        return True
    except OSError:
        return False
    finally:
        if descriptor is not None:
            os.close(descriptor)


def _reap(killed: Mapping[int, ProcessInfo]) -> set[int]:
    """Reap the killed members that are this process's orphans and have ended; those left."""
    left: set[int] = set()
    ours = os.getpid()
    for pid, found in killed.items():
        now = _stat(pid)
        if now is None or now.start != found.start or _is_root(now, ours):
            continue  # gone, or not the same process
        if now.ppid != ours:
            if now.ppid in killed:
                left.add(pid)  # reparented here once its parent, killed too, has ended
            continue  # else another process's to collect
        if not now.zombie:
            left.add(pid)
            continue
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
    return left


async def end_families(
    families: Iterable[ProcessFamily], *, known: Mapping[int, ProcessInfo] | None = None
) -> int:
    """Kill every member of ``families`` (Linux; elsewhere nothing: their groups are the
    roots' owners' to kill), and those ``known`` from an earlier :func:`family_members`
    that still run; reap the orphans among them; how many were killed.

    The roots are not signalled here: their owners end them, and their watchers
    collect them.
    """
    chosen = [family for family in families if family.pid is not None]
    if not chosen or not processes_visible():
        return 0
    killed: dict[int, ProcessInfo] = {}
    earlier = dict(known or {})
    for _ in range(SWEEP_ROUNDS):
        found = {**earlier, **await anyio.to_thread.run_sync(family_members, chosen)}
        earlier = {}
        alive = [
            member
            for member in found.values()
            if not member.zombie
            and (member.pid not in killed or killed[member.pid].start != member.start)
        ]
        if not alive:
            break
        for member in alive:
            if _kill(member):
                killed[member.pid] = member
        await anyio.sleep(0.005)  # what they forked meanwhile shows up in the next look
    if _subreaper:
        with anyio.move_on_after(REAP_SECONDS):
            while _reap(killed):
                await anyio.sleep(0.01)
    return len(killed)
