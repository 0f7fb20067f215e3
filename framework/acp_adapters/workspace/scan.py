"""Snapshots of a workspace's folders into its object store: the stat pass behind a checkpoint.

:class:`Scanner` keeps, in memory, what the last pass found of every folder and file (its
``stat``, and the object it was stored as). A pass lists a folder again only when the
folder's own ``stat`` changed since (an entry added, removed or renamed) or the ignore
rules that apply to it did, and reads a file again only when its ``stat`` (inode, size,
modification and change times, mode) changed: an unchanged workspace costs one ``stat``
per file and per folder, and writes nothing. A folder or a file that changed less than
:data:`RACY_SECONDS` before the pass that saw it is looked at again by the next pass (a
change within the file system's clock tick leaves its times as they were: git calls this
"racily clean").

Nothing is followed: a symlink is recorded as a link (its target), never read through; a
FIFO, a socket or a device is left out without being opened for reading; every file is
opened relative to its folder's descriptor, ``O_PATH | O_NOFOLLOW``, judged, and only then
read (see :mod:`.confined`). What a pass leaves out is said in the checkpoint's notes:

* a file over ``max_file_bytes`` (32 MiB by default) is recorded by size and hash only;
* once a checkpoint has stored ``max_total_bytes`` of new content (512 MiB), the rest is
  recorded by size and hash only;
* a file over ``max_hash_bytes`` (1 GiB) is not even hashed: it is judged by its size and
  times;
* past ``max_files`` entries (200,000), or ``max_depth`` folders deep (200), the pass
  stops listing.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import json
import os
import stat
import sys
import time
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .confined import (
    LISTABLE,
    FileTooLargeError,
    NotRegularFileError,
    Roots,
    hash_open,
    lstat_at,
    read_open,
)
from .ignore import MAX_IGNORE_FILE, Rules, compile_rules, root_rules, signature
from .objects import (
    CheckpointError,
    CheckpointRecord,
    ObjectStore,
    TreeEntry,
    blob_id,
    checkpoint_id,
)
from .stat_helper import Facts, HelperGone, StatHelper

#: A folder or file that changed this recently before a pass is looked at again by the next.
RACY_SECONDS = 2.0
_RACY_NS = int(RACY_SECONDS * 1e9)
#: The pending objects of a pass are written when they reach this size (bytes).
_FLUSH_BYTES = 32 * 1024 * 1024
#: The memory of the folders is saved in the store (besides when the scanner closes) once
#: this many files were read since, or a fifth of the workspace if that is more: a first pass
#: that read everything is kept at once, a turn's few changes are not written again and again.
_SAVE_AFTER = 2000
#: A workspace of this many files has a helper process take half of each stat pass, where
#: there are cores for it (``stat_helper``).
HELPER_FILES = 4000
#: Whether a helper can help here: Linux (its ``O_PATH``), and a second core.
_HELPS = sys.platform.startswith("linux") and (os.cpu_count() or 1) > 1

_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
_O_PATH: int = getattr(os, "O_PATH", 0)
_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)
_LIST: int = LISTABLE | _NOFOLLOW
_PROBE: int = (
    (_O_PATH | _NOFOLLOW | _CLOEXEC)
    if _O_PATH and os.path.isdir("/proc/self/fd")
    else (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _NOFOLLOW | _CLOEXEC)
)

#: The mode of a link's entry (as git writes it).
LINK_MODE = 0o120000


@dataclass(frozen=True)
class CheckpointLimits:
    """How much one checkpoint reads and keeps (see the module's docstring)."""

    max_file_bytes: int = 32 * 1024 * 1024
    max_total_bytes: int = 512 * 1024 * 1024
    max_hash_bytes: int = 1024 * 1024 * 1024
    max_hash_total_bytes: int = 4 * 1024 * 1024 * 1024
    max_files: int = 200_000
    max_depth: int = 200


@dataclass
class _Folder:
    """What the last pass found of one folder."""

    #: The folder's own stat when it was listed (None: list it again).
    listed: tuple[int, int, int] | None = None
    rules_token: tuple[object, ...] = ()
    #: Each file's stat as the last pass read it (None: read it again, it was racily clean
    #: or is new), and its entry.
    facts: dict[str, tuple[int, int, int, int, int] | None] = field(default_factory=dict)
    entries: dict[str, TreeEntry] = field(default_factory=dict)
    folders: dict[str, _Folder] = field(default_factory=dict)
    #: Its tree, while nothing in it changed.
    tree: str | None = None
    ignore_file: tuple[object, object] | None = None  # (signature, compiled rules)


def _facts(facts: os.stat_result) -> tuple[int, int, int, int, int]:
    """What tells a file changed without reading it (``_Scanner._files`` compares these)."""
    return (facts.st_ino, facts.st_size, facts.st_mtime_ns, facts.st_ctime_ns, facts.st_mode)


def _stat_id(facts: os.stat_result) -> str:
    """What names a file that was not hashed: its stat (``stat-`` and a SHA-256 of it), so
    that a change of its size or times is a change of the checkpoint."""
    seen = f"{facts.st_dev}:{facts.st_ino}:{facts.st_size}:{facts.st_mtime_ns}:{facts.st_ctime_ns}"
    return "stat-" + hashlib.sha256(seen.encode()).hexdigest()


@dataclass
class _Pass:
    """One pass's counters and notes."""

    now_ns: int
    limits: CheckpointLimits
    files: int = 0
    stored_bytes: int = 0
    pending_bytes: int = 0
    notes: dict[str, str] = field(default_factory=dict)
    stopped: bool = False
    #: How many files were read (their stat had changed), how many names were listed, how
    #: many bytes were hashed.
    read: int = 0
    listed: int = 0
    hashed: int = 0
    #: The folders whose files the helper looks at in this pass.
    helped: dict[tuple[int, str], _Folder] = field(default_factory=dict)

    def racy(self, mtime_ns: int, ctime_ns: int) -> bool:
        return max(mtime_ns, ctime_ns) >= self.now_ns - _RACY_NS

    def note(self, key: str, text: str) -> None:
        self.notes.setdefault(key, text)


class Scanner:
    """A workspace's folders, checkpointed into its :class:`ObjectStore`."""

    def __init__(
        self,
        roots: Roots,
        store: ObjectStore,
        *,
        ignore: Sequence[str] = (),
        limits: CheckpointLimits | None = None,
    ) -> None:
        self.roots = roots
        self.store = store
        self.ignore = tuple(ignore)
        self.limits = limits or CheckpointLimits()
        self._folders: list[_Folder] = [self._load(root) for root in roots.roots]
        #: How many files were read since the memory of the folders was last saved.
        self._unsaved = 0
        #: How many files the last pass read (their stat had changed, or they were new).
        self.last_read = 0
        #: The helper process that takes half of each stat pass of a large workspace, the
        #: folders it looks at (by root and relative path), and those it must be told of
        #: again (their names or stats changed here).
        self._helper: StatHelper | None = None
        self._helper_broken = not _HELPS
        self._assigned: dict[tuple[int, str], _Folder] = {}
        self._tell: set[tuple[int, str]] = set()
        self._forget: list[tuple[int, str, str]] = []
        #: Whether the scanner was closed (a closed one starts no helper).
        self._closed = False

    def close(self) -> None:
        """Keep what the passes found in the store (when they read anything since it was
        last kept), and end the helper process, if one runs (the scanner goes on without
        it)."""
        self._closed = True
        self._stop_helper()
        if self._unsaved:
            with contextlib.suppress(CheckpointError):
                self.save()

    def _stop_helper(self) -> None:
        helper, self._helper = self._helper, None
        self._assigned.clear()
        self._tell.clear()
        self._forget.clear()
        if helper is not None:
            helper.close()

    # --- the memory of the folders, kept in the store between processes ---------------------

    def _load(self, root: Path) -> _Folder:
        """What an earlier process found of ``root`` (the store keeps it), else nothing: the
        first pass of a process costs a stat pass too, not a read of every file."""
        try:
            kept = self.store.meta(f"index:{root}")
            return (
                _decoded(json.loads(zlib.decompress(base64.b64decode(kept)))) if kept else _Folder()
            )
        except (ValueError, TypeError, KeyError, IndexError, zlib.error, CheckpointError):
            return _Folder()  # unreadable: the first pass reads the files again

    def save(self) -> None:
        """Keep what the passes found of the folders in the store, for the next process."""
        meta = {
            f"index:{root}": base64.b64encode(
                zlib.compress(json.dumps(_encoded(folder), separators=(",", ":")).encode(), 1)
            ).decode("ascii")
            for root, folder in zip(self.roots.roots, self._folders, strict=True)
        }
        self.store.flush(meta=meta)
        self._unsaved = 0

    # --- a checkpoint ---------------------------------------------------------------------

    def checkpoint(self) -> CheckpointRecord:
        """A checkpoint of every root now: a stat pass, the changed files stored."""
        work = _Pass(time.time_ns(), self.limits)
        helper = self._helper_for(work)
        walked: list[_Folder | None] = []
        for index, root in enumerate(self.roots.roots):
            try:
                descriptor = os.open(".", _LIST, dir_fd=self.roots.root_descriptor(index))
            except OSError as error:
                work.note(f"root:{root}", f"{root} could not be read ({error.strerror})")
                self._folders[index] = _Folder()
                walked.append(None)
                continue
            try:
                rules = self._root_rules(descriptor)
                self._folder(descriptor, self._folders[index], (index, ""), rules, 0, work)
                walked.append(self._folders[index])
            finally:
                os.close(descriptor)
        if helper is not None:
            self._helped(helper, work)
        trees = [
            (str(root), self._trees(folder) if folder is not None else self.store.add_tree(()))
            for root, folder in zip(self.roots.roots, walked, strict=True)
        ]
        notes = tuple(work.notes.values())
        files = sum(_count(folder) for folder in self._folders)
        self._unsaved += work.read
        self.last_read = work.read
        record = CheckpointRecord(
            checkpoint_id(trees, files, notes), time.time(), tuple(trees), files, notes
        )
        self.store.flush(record)
        if self._unsaved >= max(_SAVE_AFTER, files // 5):
            self.save()
        return record

    # --- the helper process ---------------------------------------------------------------

    def _helper_for(self, work: _Pass) -> StatHelper | None:
        """The helper for this pass, started (and its folders given) once the workspace is
        large enough; None: this process stats every file."""
        if self._helper_broken or self._closed:
            return None
        total = sum(_count(folder) for folder in self._folders)
        if total < HELPER_FILES:
            return None
        try:
            if self._helper is None:
                descriptors = [self.roots.root_descriptor(i) for i in range(len(self.roots.roots))]
                self._helper = StatHelper(descriptors)
            self._assign()
            update = []
            for key in sorted(self._tell):
                folder = self._assigned.get(key)
                if folder is not None:
                    names = list(folder.facts)
                    update.append((key[0], key[1], names, [folder.facts[n] for n in names]))
            dropped = [key for key in self._tell if key not in self._assigned]
            self._helper.ask(update=update, drop=dropped, forget=self._forget)
        except (OSError, HelperGone):
            self._helper_broken = True
            self._stop_helper()
            return None
        self._tell.clear()
        self._forget = []
        work.helped = dict(self._assigned)
        return self._helper

    def _assign(self) -> None:
        """Give the helper about half of the files: whole folders, the largest first, each to
        the side with fewer (a folder, once given, stays the helper's while it is there)."""
        found: dict[tuple[int, str], _Folder] = {}
        for index, folder in enumerate(self._folders):
            _each_folder(folder, (index, ""), found)
        for key in [key for key in self._assigned if found.get(key) is not self._assigned[key]]:
            del self._assigned[key]  # gone, or another folder there now: given again below
            self._tell.add(key)
        helper = sum(len(folder.facts) for folder in self._assigned.values())
        mine = sum(len(folder.facts) for folder in found.values()) - helper
        for key, folder in sorted(found.items(), key=lambda pair: (-len(pair[1].facts), pair[0])):
            if key in self._assigned or not folder.facts:
                continue
            if helper + len(folder.facts) <= mine:
                self._assigned[key] = folder
                self._tell.add(key)
                helper += len(folder.facts)
                mine -= len(folder.facts)

    def _helped(self, helper: StatHelper, work: _Pass) -> None:
        """The helper's half of the pass: the files whose stat it saw change are read here;
        its folders this process had to list again (or the helper could not open), and
        every one of them if the helper is gone, are looked at here."""
        try:
            changed, failed = helper.answer()
        except HelperGone:
            self._helper_broken = True
            self._stop_helper()
            changed, failed = [], list(work.helped)
        by_folder: dict[tuple[int, str], list[tuple[str, Facts | None]]] = {}
        for key, name, facts in changed:
            by_folder.setdefault(key, []).append((name, facts))
        for key in failed:
            self._tell.add(key)
            by_folder[key] = []  # looked at whole, here
        for key, seen in by_folder.items():
            folder = work.helped.get(key)
            if folder is None:
                continue  # listed again here this pass, and looked at then
            try:
                descriptor = self._open_folder(key)
            except OSError:
                folder.listed = None  # gone since, or not a folder: listed again next pass
                folder.tree = None
                continue
            try:
                if key in failed or self._helper is None:
                    if self._files(descriptor, folder, work, counted=True):
                        folder.tree = None
                    continue
                for name, facts in seen:
                    if name not in folder.facts:
                        continue
                    if self._reported(descriptor, folder, key, name, facts, work):
                        folder.tree = None
            finally:
                os.close(descriptor)

    def _reported(
        self,
        descriptor: int,
        folder: _Folder,
        key: tuple[int, str],
        name: str,
        facts: Facts | None,
        work: _Pass,
    ) -> bool:
        """A file the helper saw change: read it here. Whether its entry changed."""
        try:
            now = os.stat(name, dir_fd=descriptor, follow_symlinks=False)
        except FileNotFoundError:
            now = None
        changed = self._changed_file(descriptor, folder, name, now, work)
        if name not in folder.facts:
            self._tell.add(key)  # its names changed: the helper is told them again
        elif folder.facts[name] is None:
            self._forget.append((key[0], key[1], name))  # racily clean: looked at again
        elif folder.facts[name] != facts:
            self._tell.add(key)  # it changed again between the two looks
        return changed

    def _open_folder(self, key: tuple[int, str]) -> int:
        """A folder of the walk opened again from its root, following no link."""
        index, relative = key
        here = os.open(".", _LIST, dir_fd=self.roots.root_descriptor(index))
        for part in relative.split("/") if relative else ():
            try:
                inner = os.open(part, _LIST, dir_fd=here)
            finally:
                os.close(here)
            here = inner
        return here

    def _trees(self, folder: _Folder) -> str:
        """The tree of a folder, made again where something in it changed."""
        dirty = folder.tree is None
        for child in folder.folders.values():
            before = child.tree
            dirty = self._trees(child) != before or dirty
        if dirty or folder.tree is None:
            folder.tree = self._tree(folder)
        return folder.tree

    def _root_rules(self, descriptor: int) -> Rules:
        """A root's own rules: its ``.git/info/exclude`` and the session's list."""
        exclude: bytes | None = None
        facts = None
        with contextlib.suppress(OSError):
            git = os.open(".git", LISTABLE | _NOFOLLOW, dir_fd=descriptor)
            try:
                info = os.open("info", LISTABLE | _NOFOLLOW, dir_fd=git)
                try:
                    facts = lstat_at(info, "exclude")
                    exclude = self._small_file(info, "exclude")
                finally:
                    os.close(info)
            finally:
                os.close(git)
        return root_rules(self.ignore, exclude, signature(facts))

    @staticmethod
    def _small_file(folder: int, name: str) -> bytes | None:
        """An ignore file's bytes (a regular file of at most :data:`MAX_IGNORE_FILE`)."""
        try:
            probe = os.open(name, _PROBE, dir_fd=folder)
        except OSError:
            return None
        try:
            return read_open(probe, name, MAX_IGNORE_FILE)
        except OSError:
            return None
        finally:
            os.close(probe)

    def _folder_rules(self, descriptor: int, folder: _Folder, relative: str, rules: Rules) -> Rules:
        """The rules for the children of a folder: ``rules`` and its own ``.gitignore``."""
        facts = lstat_at(descriptor, ".gitignore")
        mark = signature(facts if facts is not None and stat.S_ISREG(facts.st_mode) else None)
        if folder.ignore_file is None or folder.ignore_file[0] != mark:
            spec = None
            if mark is not None:
                data = self._small_file(descriptor, ".gitignore")
                if data is not None:
                    spec = compile_rules(data.decode("utf-8", "replace").splitlines())
            folder.ignore_file = (mark, spec)
        return rules.below(relative, folder.ignore_file[1], mark)  # type: ignore[arg-type]

    def _folder(
        self,
        descriptor: int,
        folder: _Folder,
        key: tuple[int, str],
        rules: Rules,
        depth: int,
        work: _Pass,
    ) -> None:
        """Pass over one folder (open as ``descriptor``): list it if it changed, look at its
        files (or leave them to the helper), go into its folders. What changed has its tree
        (and its parents') made again after the pass (:meth:`_trees`)."""
        relative = key[1]
        rules = self._folder_rules(descriptor, folder, relative, rules)
        own = os.fstat(descriptor)
        listed = (own.st_ino, own.st_mtime_ns, own.st_ctime_ns)
        relisted = folder.listed != listed or folder.rules_token != rules.token
        if relisted:
            if self._list(descriptor, folder, relative, rules, work):
                folder.tree = None
            racy = work.racy(own.st_mtime_ns, own.st_ctime_ns)
            # Listed again next pass when racily clean, or when the cap cut this listing.
            folder.listed = None if racy or work.stopped else listed
            folder.rules_token = rules.token
        if key in work.helped and not relisted:
            work.files += len(folder.facts)  # the helper looks at them
        else:
            if key in work.helped:
                del work.helped[key]  # its names changed: looked at here, told next pass
                self._tell.add(key)
            if self._files(descriptor, folder, work):
                folder.tree = None
        for name, child in list(folder.folders.items()):
            if work.stopped:
                break
            if depth + 1 >= work.limits.max_depth:
                work.note("depth", f"folders deeper than {work.limits.max_depth} were left out")
                del folder.folders[name]
                folder.tree = None
                continue
            try:
                opened = os.open(name, _LIST, dir_fd=descriptor)
            except OSError:
                # Gone (or made a link, or a file) since it was listed: listed again next pass.
                del folder.folders[name]
                folder.listed = None
                folder.tree = None
                continue
            try:
                path = f"{relative}/{name}" if relative else name
                self._folder(opened, child, (key[0], path), rules, depth + 1, work)
            finally:
                os.close(opened)

    def _list(
        self, descriptor: int, folder: _Folder, relative: str, rules: Rules, work: _Pass
    ) -> bool:
        """List a folder again: its files and folders as they are named now, the ignored
        ones left out. Whether the names changed."""
        files: list[str] = []
        folders: dict[str, _Folder] = {}
        limit = 2 * work.limits.max_files  # the ignored names count too: each is listed
        with os.scandir(descriptor) as entries:
            for entry in entries:
                work.listed += 1
                if work.listed > limit:
                    # Past the cap: this folder keeps what an earlier pass listed (no file
                    # is taken for deleted), and the pass stops.
                    work.stopped = True
                    work.note("listed", f"past {limit} names listed the pass stopped")
                    return False
                name = entry.name
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                path = f"{relative}/{name}" if relative else name
                if rules.ignored(path, is_dir):
                    continue
                if is_dir:
                    folders[name] = folder.folders.get(name) or _Folder()
                else:
                    files.append(name)
        changed = set(files) != set(folder.facts) or set(folders) != set(folder.folders)
        # A new name is read by its first look (below, in the same pass).
        folder.facts = {name: folder.facts.get(name) for name in files}
        folder.entries = {n: e for n, e in folder.entries.items() if n in folder.facts}
        folder.folders = folders
        if changed:
            folder.tree = None
        return changed

    def _files(
        self, descriptor: int, folder: _Folder, work: _Pass, *, counted: bool = False
    ) -> bool:
        """Look at a folder's files: a stat each, a read of those that changed. Whether an
        entry changed (``counted``: the pass counted them already)."""
        known = folder.facts
        if not counted:
            if work.files + len(known) > work.limits.max_files:
                work.stopped = True
                work.note("files", f"past {work.limits.max_files} files the pass stopped")
                return False
            work.files += len(known)
        look = os.stat
        again: list[tuple[str, os.stat_result | None]] = []
        # The hot loop of an unchanged workspace: one fstatat and one comparison a file.
        for name, facts in known.items():
            try:
                seen = look(name, dir_fd=descriptor, follow_symlinks=False)
            except FileNotFoundError:
                again.append((name, None))
                continue
            if facts != (
                seen.st_ino,
                seen.st_size,
                seen.st_mtime_ns,
                seen.st_ctime_ns,
                seen.st_mode,
            ):
                again.append((name, seen))
        changed = False
        for name, now in again:
            changed = self._changed_file(descriptor, folder, name, now, work) or changed
        return changed

    def _changed_file(
        self,
        descriptor: int,
        folder: _Folder,
        name: str,
        facts: os.stat_result | None,
        work: _Pass,
    ) -> bool:
        """A file whose stat changed (or that was racily clean, or is gone): read it.
        Whether its entry changed."""
        before = folder.entries.pop(name, None)
        if facts is None or stat.S_ISDIR(facts.st_mode):
            # Gone, or a folder now where the listing had a file: listed again next pass.
            del folder.facts[name]
            folder.listed = None
            return True
        found = self._read(descriptor, name, facts, work)
        work.read += 1
        if found is None:  # a FIFO, a socket, a device, or gone: not recorded
            del folder.facts[name]
            return before is not None
        entry, read = found
        racy = work.racy(read.st_mtime_ns, read.st_ctime_ns)
        folder.facts[name] = None if racy else _facts(read)
        folder.entries[name] = entry
        return entry != before

    def _read(
        self, descriptor: int, name: str, facts: os.stat_result, work: _Pass
    ) -> tuple[TreeEntry, os.stat_result] | None:
        """The entry of what is at ``name`` now, read through an ``O_PATH`` descriptor."""
        if not (stat.S_ISREG(facts.st_mode) or stat.S_ISLNK(facts.st_mode)):
            return None
        try:
            probe = os.open(name, _PROBE, dir_fd=descriptor)
        except OSError:
            return None
        try:
            return self._entry(probe, descriptor, name, work)
        except (OSError, ValueError):
            return None
        finally:
            os.close(probe)

    def _entry(
        self, probe: int, descriptor: int, name: str, work: _Pass
    ) -> tuple[TreeEntry, os.stat_result] | None:
        facts = os.fstat(probe)
        limits = work.limits
        if stat.S_ISLNK(facts.st_mode):
            try:
                target = os.readlink("", dir_fd=probe)  # the link this descriptor holds
            except OSError:
                target = os.readlink(name, dir_fd=descriptor)
            data = os.fsencode(target)
            return TreeEntry(name, "link", LINK_MODE, self._keep(data, work), len(data)), facts
        if not stat.S_ISREG(facts.st_mode):
            return None
        mode = stat.S_IMODE(facts.st_mode)
        size = facts.st_size
        if size > limits.max_hash_bytes:
            work.note(
                "unhashed",
                f"files over {limits.max_hash_bytes} bytes are judged by size and times only",
            )
            return TreeEntry(name, "file", mode, _stat_id(facts), size, False, "unhashed"), facts
        if work.hashed + size > limits.max_hash_total_bytes:
            work.note(
                "hash_budget",
                f"past {limits.max_hash_total_bytes} bytes read in one pass, files are "
                "judged by size and times only",
            )
            return TreeEntry(name, "file", mode, _stat_id(facts), size, False, "unhashed"), facts
        work.hashed += size
        if size > limits.max_file_bytes or work.stored_bytes + size > limits.max_total_bytes:
            why = "too_large" if size > limits.max_file_bytes else "total_cap"
            if why == "too_large":
                work.note(
                    "too_large",
                    f"files over {limits.max_file_bytes} bytes are recorded by size and hash only",
                )
            else:
                work.note(
                    "total_cap",
                    f"past {limits.max_total_bytes} bytes of new content, files are "
                    "recorded by size and hash only",
                )
            try:
                oid, size = hash_open(probe, name, hashlib.sha256, limits.max_hash_bytes)
            except FileTooLargeError:  # it grew past the hash limit meanwhile
                return TreeEntry(
                    name, "file", mode, _stat_id(facts), size, False, "unhashed"
                ), facts
            return TreeEntry(name, "file", mode, oid, size, False, why), facts
        try:
            data = read_open(probe, name, limits.max_file_bytes)
        except FileTooLargeError:  # it grew since: judged by its stat, read again next pass
            return TreeEntry(name, "file", mode, _stat_id(facts), size, False, "unhashed"), facts
        except NotRegularFileError:
            return None
        oid = self._keep(data, work)
        work.stored_bytes += len(data)
        return TreeEntry(name, "file", mode, oid, len(data)), facts

    def _keep(self, data: bytes, work: _Pass) -> str:
        oid = blob_id(data)
        if not self.store.has(oid):
            self.store.add_blob(data, oid)
            work.pending_bytes += len(data)
            if work.pending_bytes > _FLUSH_BYTES:
                self.store.flush()
                work.pending_bytes = 0
        return oid

    def _tree(self, folder: _Folder) -> str:
        entries = list(folder.entries.values())
        entries += [
            TreeEntry(name, "dir", 0, child.tree)
            for name, child in folder.folders.items()
            if child.tree is not None
        ]
        return self.store.add_tree(entries)

    # --- one path ------------------------------------------------------------------------

    def look(self, path: str) -> tuple[bool, TreeEntry | None]:
        """What is at ``path`` now (a file or a link, stored as a pass stores it), for the
        files a tool call names: ``(True, entry)``, ``(True, None)`` when nothing is there;
        ``(False, None)`` when the path is not the checkpoints' to say (outside the roots,
        under an ignored folder or a link, left out by the rules)."""
        place = self.roots.lexical(path)
        if place is None:
            return False, None
        index, parts = place
        if not parts:
            return False, None
        work = _Pass(time.time_ns(), self.limits)
        descriptor = os.open(".", _LIST, dir_fd=self.roots.root_descriptor(index))
        try:
            rules = self._root_rules(descriptor)
            folder: _Folder | None = self._folders[index]
            relative = ""
            for part in parts[:-1]:
                own = folder or _Folder()
                rules = self._folder_rules(descriptor, own, relative, rules)
                relative = f"{relative}/{part}" if relative else part
                if rules.ignored(relative, True):
                    return False, None
                try:
                    inner = os.open(part, _LIST, dir_fd=descriptor)
                except FileNotFoundError:
                    return True, None
                except OSError as error:
                    if error.errno in (errno.ENOTDIR, errno.ELOOP):
                        return False, None  # a file or a link where the folder was
                    raise
                os.close(descriptor)
                descriptor = inner
                folder = folder.folders.get(part) if folder is not None else None
            rules = self._folder_rules(descriptor, folder or _Folder(), relative, rules)
            name = parts[-1]
            relative = f"{relative}/{name}" if relative else name
            facts = lstat_at(descriptor, name)
            if facts is not None and stat.S_ISDIR(facts.st_mode):
                return False, None
            if rules.ignored(relative, False):
                return False, None
            if facts is None:
                return True, None
            found = self._read(descriptor, name, facts, work)
            self.store.flush()
            return (True, found[0]) if found is not None else (False, None)
        finally:
            os.close(descriptor)


def _each_folder(
    folder: _Folder, key: tuple[int, str], found: dict[tuple[int, str], _Folder]
) -> None:
    found[key] = folder
    for name, child in folder.folders.items():
        _each_folder(child, (key[0], f"{key[1]}/{name}" if key[1] else name), found)


def _count(folder: _Folder) -> int:
    """The files and links a folder's tree holds."""
    return len(folder.entries) + sum(_count(child) for child in folder.folders.values())


def _tuples(value: Any) -> Any:
    """JSON's lists made tuples again, all the way down (a folder's rules token)."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def _encoded(folder: _Folder) -> dict[str, Any]:
    return {
        "l": folder.listed,
        "t": folder.rules_token,
        "f": {
            name: [facts, folder.entries[name].encoded() if name in folder.entries else None]
            for name, facts in folder.facts.items()
        },
        "d": {name: _encoded(child) for name, child in folder.folders.items()},
        "h": folder.tree,
    }


def _decoded(value: dict[str, Any]) -> _Folder:
    folder = _Folder(
        listed=_tuples(value["l"]),
        rules_token=_tuples(value["t"]),
        tree=value["h"] if isinstance(value["h"], str) else None,
    )
    for name, (facts, entry) in value["f"].items():
        folder.facts[str(name)] = _tuples(facts)
        if entry is not None:
            folder.entries[str(name)] = TreeEntry.decoded(entry)
    folder.folders = {str(name): _decoded(child) for name, child in value["d"].items()}
    return folder


# --- reading checkpoints back ----------------------------------------------------------------


def tree_files(store: ObjectStore, tree: str, prefix: str = "") -> Iterator[tuple[str, TreeEntry]]:
    """Every file and link of a tree, by path (``/``-separated, under ``prefix``)."""
    for entry in store.tree(tree):
        path = f"{prefix}/{entry.name}" if prefix else entry.name
        if entry.kind == "dir":
            if entry.oid is not None:
                yield from tree_files(store, entry.oid, path)
        else:
            yield path, entry


def entry_at(store: ObjectStore, tree: str, parts: Sequence[str]) -> TreeEntry | None:
    """The file or link at ``parts`` of a tree; None when there is none."""
    current = tree
    for number, part in enumerate(parts):
        entry = next((e for e in store.tree(current) if e.name == part), None)
        if entry is None:
            return None
        if number == len(parts) - 1:
            return None if entry.kind == "dir" else entry
        if entry.kind != "dir" or entry.oid is None:
            return None
        current = entry.oid
    return None


def diff_trees(
    store: ObjectStore, old: str | None, new: str | None, prefix: str = ""
) -> Iterator[tuple[str, TreeEntry | None, TreeEntry | None]]:
    """The files and links that differ between two trees: ``(path, old, new)`` (None: not
    there), in path order. Folders that are the same tree are not looked into."""
    if old == new:
        return
    before = {e.name: e for e in store.tree(old)} if old is not None else {}
    after = {e.name: e for e in store.tree(new)} if new is not None else {}
    for name in sorted(set(before) | set(after)):
        one, other = before.get(name), after.get(name)
        path = f"{prefix}/{name}" if prefix else name
        if one == other:
            continue
        one_dir = one is not None and one.kind == "dir"
        other_dir = other is not None and other.kind == "dir"
        if one_dir or other_dir:
            yield from diff_trees(
                store,
                one.oid if one_dir and one is not None else None,
                other.oid if other_dir and other is not None else None,
                path,
            )
            if one is not None and not one_dir:
                yield path, one, None
            if other is not None and not other_dir:
                yield path, None, other
            continue
        yield path, one, other


__all__ = [
    "LINK_MODE",
    "RACY_SECONDS",
    "CheckpointLimits",
    "Scanner",
    "diff_trees",
    "entry_at",
    "tree_files",
]
