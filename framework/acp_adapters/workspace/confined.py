"""File operations confined to a session's folders, that never follow a link out of them.

What is guaranteed
    Every open, write, rename and delete made through :class:`Roots` stays inside the
    session's folders (its *roots*: the cwd and the additional directories), even while
    the agent changes the tree under it: swaps a folder for a symlink to outside
    (``renameat2(RENAME_EXCHANGE)``), renames folders, races the check with the use. A
    FIFO, a socket or a device is never opened for reading (nor written): it is looked at
    through an ``O_PATH`` descriptor and refused. Reads are capped.

Two ways to treat the links met on the way
    ``links="inside"`` (the agent's ``fs/*`` requests): symlinks that lead inside the roots
    are followed, relative or absolute, and ``..`` that stays inside works; a link that
    leads out is refused. ``links="none"`` (checkpoints, revert, restore): no symlink is
    followed anywhere on the path; a link where a folder should be is refused, and a link at
    the path itself is the link (read as a link, replaced as a name, removed as a name).
    A checkpoint records a link as a link, so what a revert compares and writes is the same
    name the checkpoint saw, never the file a link made since points to.

How
    Each root is opened once, as a directory descriptor, when :class:`Roots` is made. A path
    is first placed under a root: a relative one under the cwd, an absolute one under the
    root it lexically lies in (by the root's real path, or by the path it was given as); an
    absolute path under none is refused without touching the disk. The rest of the path is
    then resolved and opened in one step relative to that root's descriptor, so no name is
    ever judged first and opened later:

    * where the kernel has ``openat2(2)`` (Linux 5.6 and later), with ``RESOLVE_BENEATH |
      RESOLVE_NO_MAGICLINKS`` (and ``RESOLVE_NO_SYMLINKS`` for ``links="none"``): the kernel
      refuses every step out of the root, atomically with respect to renames. Whether it is
      there is checked once per process (``ENOSYS``, or a seccomp filter's ``EPERM``, means
      no).
    * elsewhere, and when ``openat2`` refuses a step the walk can judge (``EXDEV``: an
      absolute symlink, even one pointing inside), a walk of the path component by
      component: each folder is opened ``O_NOFOLLOW | O_DIRECTORY`` relative to the
      descriptor of the one before; a symlink is never followed by the kernel, but read
      (``readlink``) and its target walked in its place -- a relative target from the folder
      that holds the link, an absolute one from the root it lexically lies in (else it is
      refused); ``..`` goes back to the descriptor the walk came from and is refused at the
      root. At most 40 symlinks are followed, as the kernel does.

    A file to read is opened ``O_PATH`` first and judged by ``fstat`` on that descriptor: a
    FIFO, a device or a socket is refused without ever being opened for reading (no FIFO
    waits for a writer, no device driver's open runs), as is a file larger than the read
    allows. A regular file is then opened for reading through its own descriptor
    (``/proc/self/fd/N``: the same file, whatever the name points at by then). Where there
    is no ``O_PATH`` (macOS, the BSDs), the file is opened ``O_RDONLY | O_NONBLOCK`` and
    judged on that descriptor.

    Writes are atomic and confined the same way: the folder that will hold the file is
    opened as above (missing folders made inside the root one at a time, relative to their
    parent's descriptor), the content goes to a temporary file created ``O_CREAT | O_EXCL |
    O_NOFOLLOW`` in that folder's descriptor, and a ``rename`` within the same descriptor
    puts it in place: a rename replaces a name, never what a link there points to. A write
    may be bound to what was there (:class:`Expected`): checked on the folder's descriptor
    just before the rename, it fails with :class:`ChangedError` when another file (or none)
    is there. Removing unlinks a name in its folder's descriptor, a regular file or a link,
    never a folder.

Limits
    Hard links are not symlinks: a hard link the agent made inside the roots to a file
    outside them is a file inside (on Linux, ``fs.protected_hardlinks`` stops it linking
    files it could not write). Folders mounted inside a root are inside. A folder the agent
    moves out of the roots while an operation holds its descriptor is still that folder:
    the kernel's guarantee is about resolution, and so is this one.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import secrets
import stat
import sys
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

_T = TypeVar("_T")

#: How the links on a path are treated (see the module's docstring).
Links = Literal["inside", "none"]

_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
_O_PATH: int = getattr(os, "O_PATH", 0)
#: A folder on the way: ``O_PATH`` where there is one, so a folder the agent may enter but not
#: list (mode ``--x``) can still be walked through, and nothing is opened for reading.
_FOLDER: int = (_O_PATH or os.O_RDONLY) | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC
#: A folder to list (``scandir``).
LISTABLE: int = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC
#: A file opened for reading: never blocks (a FIFO), never becomes the controlling terminal.
_READ: int = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | _CLOEXEC
#: Whether a file opened ``O_PATH`` can be opened for reading through its descriptor
#: (``/proc/self/fd/N``): Linux with /proc mounted.
_REOPENS: bool = bool(_O_PATH) and os.path.isdir("/proc/self/fd")
#: The first open of a file to read: ``O_PATH`` (nothing is opened for reading), else _READ.
_PROBE: int = (_O_PATH | _CLOEXEC) if _REOPENS else _READ
#: The temporary file of a write: a new name, never a symlink followed.
_CREATE: int = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
#: What an ``O_NOFOLLOW`` open of a symlink fails with: ``ELOOP`` (Linux, macOS), ``EMLINK``
#: (FreeBSD), ``ENOTDIR`` (with ``O_DIRECTORY``, Linux). The name is then read to know.
_LINK_ERRNOS = frozenset({errno.ELOOP, errno.EMLINK, errno.ENOTDIR})
#: As the kernel's ``MAXSYMLINKS``.
_MAX_LINKS = 40
#: How often a folder that vanishes between its ``mkdir`` and its open is made again.
_MKDIR_TRIES = 8
#: The longest name of one path component (bytes), as most file systems take it.
NAME_MAX = 255

# --- openat2(2) ----------------------------------------------------------------------------

#: The syscall's number: the same on every Linux architecture (alpha aside).
_SYS_OPENAT2 = 437
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
#: What openat2 answers that sends the path to the walk: ``EXDEV`` (a step out of the root,
#: or an absolute symlink: the walk judges it), ``EAGAIN`` (a rename raced a ``..``; the
#: walk's ``..`` does not race), ``ENOSYS``/``EPERM`` (gone since the first check: a
#: seccomp filter).
_WALK_INSTEAD = frozenset({errno.EXDEV, errno.EAGAIN, errno.ENOSYS, errno.EPERM})


class _OpenHow(ctypes.Structure):
    """``struct open_how`` of ``<linux/openat2.h>``."""

    _fields_ = (
        ("flags", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("resolve", ctypes.c_uint64),
    )


def _libc_syscall() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):  # no C library to ask (a static build)
        return None
    function.restype = ctypes.c_long
    return function


_syscall: Any = _libc_syscall()

#: Whether ``openat2(2)`` works in this process: ``None`` until the first open tries it, then
#: kept. Set it to ``False`` to use the walk everywhere (the tests do).
openat2_usable: bool | None = None if _syscall is not None else False


def _openat2(dirfd: int, path: str, flags: int, resolve: int = 0) -> int:
    """``openat2(dirfd, path, {flags, 0, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | resolve})``."""
    how = _OpenHow(flags, 0, _RESOLVE_BENEATH | _RESOLVE_NO_MAGICLINKS | resolve)
    name = os.fsencode(path)
    while True:
        descriptor = int(
            _syscall(
                ctypes.c_long(_SYS_OPENAT2),
                ctypes.c_int(dirfd),
                ctypes.c_char_p(name),
                ctypes.byref(how),
                ctypes.c_size_t(ctypes.sizeof(how)),
            )
        )
        if descriptor >= 0:
            return descriptor
        code = ctypes.get_errno()
        if code != errno.EINTR:
            raise OSError(code, os.strerror(code), path)


def _have_openat2(dirfd: int) -> bool:
    """Whether to open with openat2: tried once, on the first root, and remembered."""
    global openat2_usable
    if openat2_usable is None:
        try:
            os.close(_openat2(dirfd, ".", _FOLDER))
        except OSError:  # ENOSYS (before 5.6), EPERM (seccomp), EINVAL: all mean no
            openat2_usable = False
        else:
            openat2_usable = True
    return openat2_usable


# --- errors --------------------------------------------------------------------------------


class OutsideError(Exception):
    """A step of the path would leave the session's folders."""


class LinkInPathError(OSError):
    """``links="none"``: a symlink where the path needs a folder, or (for a read) at the
    path itself."""

    def __init__(self, name: str = "") -> None:
        super().__init__(errno.ELOOP, "a symlink is on the path", name)


class NotRegularFileError(OSError):
    """The path is a FIFO, a device or a socket: not a file to read."""


class FileTooLargeError(OSError):
    """The file is larger than the read allows."""

    def __init__(self, size: int) -> None:
        super().__init__(f"{size} bytes")
        self.size = size


class ChangedError(OSError):
    """What is at the path is not what the operation was bound to (:class:`Expected`)."""

    def __init__(self, name: str, why: str) -> None:
        super().__init__(errno.ESTALE, why, name)
        self.why = why


@dataclass(frozen=True)
class Identity:
    """A file's identity: its device and inode (and, to tell a rewrite, its type)."""

    device: int
    inode: int

    @classmethod
    def of(cls, facts: os.stat_result) -> Identity:
        return cls(facts.st_dev, facts.st_ino)


@dataclass(frozen=True)
class Expected:
    """What a write or a removal is bound to find at its path, checked on the folder's
    descriptor just before it acts: no file (``absent``), the file of ``identity``, or a
    file whose stat says ``size``, ``mtime_ns`` and ``ctime_ns`` (unchanged since read)."""

    absent: bool = False
    identity: Identity | None = None
    size: int | None = None
    mtime_ns: int | None = None
    ctime_ns: int | None = None

    @classmethod
    def unchanged(cls, facts: os.stat_result) -> Expected:
        """The file of ``facts``, unchanged since (its identity, size and times)."""
        return cls(
            identity=Identity.of(facts),
            size=facts.st_size,
            mtime_ns=facts.st_mtime_ns,
            ctime_ns=facts.st_ctime_ns,
        )

    def check(self, name: str, facts: os.stat_result | None) -> None:
        """:raises ChangedError: ``facts`` (None: nothing there) are not what was expected."""
        if self.absent:
            if facts is not None:
                raise ChangedError(name, "a file is there now")
            return
        if facts is None:
            raise ChangedError(name, "the file is gone")
        if self.identity is not None and Identity.of(facts) != self.identity:
            raise ChangedError(name, "another file is behind the name now")
        if self.size is not None and facts.st_size != self.size:
            raise ChangedError(name, "the file changed")
        if self.mtime_ns is not None and facts.st_mtime_ns != self.mtime_ns:
            raise ChangedError(name, "the file changed")
        if self.ctime_ns is not None and facts.st_ctime_ns != self.ctime_ns:
            raise ChangedError(name, "the file changed")


# --- reading an open file ------------------------------------------------------------------


def _reopen_for_reading(probe: int) -> int:
    """A descriptor open for reading on the file ``probe`` (an ``O_PATH`` one) names."""
    if not _REOPENS:
        return os.dup(probe)  # the probe is open for reading already
    return os.open(f"/proc/self/fd/{probe}", _READ)


def read_open(probe: int, name: str, limit: int) -> bytes:
    """The bytes of the file ``probe`` names if it is a regular file of at most ``limit``.

    ``probe`` may be an ``O_PATH`` descriptor: the file is opened for reading only once it is
    known to be a regular file (see the module's docstring).
    """
    facts = os.fstat(probe)
    if stat.S_ISDIR(facts.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
    if stat.S_ISLNK(facts.st_mode):
        raise LinkInPathError(name)
    if not stat.S_ISREG(facts.st_mode):
        raise NotRegularFileError(name)
    if facts.st_size > limit:
        raise FileTooLargeError(facts.st_size)
    reader = _reopen_for_reading(probe)
    try:
        chunks: list[bytes] = []
        left = limit + 1  # a file that grew since it was measured is cut
        while left > 0:
            chunk = os.read(reader, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(reader)
    data = b"".join(chunks)
    if len(data) > limit:
        raise FileTooLargeError(len(data))
    return data


def hash_open(probe: int, name: str, algorithm: Callable[[], Any], limit: int) -> tuple[str, int]:
    """The digest (hex) and size of the regular file ``probe`` names, read a piece at a
    time (memory does not follow its size), at most ``limit`` bytes."""
    facts = os.fstat(probe)
    if not stat.S_ISREG(facts.st_mode):
        raise NotRegularFileError(name)
    if facts.st_size > limit:
        raise FileTooLargeError(facts.st_size)
    reader = _reopen_for_reading(probe)
    digest = algorithm()
    size = 0
    try:
        while True:
            chunk = os.read(reader, 1 << 20)
            if not chunk:
                break
            size += len(chunk)
            if size > limit:
                raise FileTooLargeError(size)
            digest.update(chunk)
    finally:
        os.close(reader)
    return digest.hexdigest(), size


# --- the walk ------------------------------------------------------------------------------


class _SymlinkError(Exception):
    """The last component is a symlink: the walk goes on with its target."""

    def __init__(self, target: str) -> None:
        super().__init__(target)
        self.target = target


#: What the walk does with the last component: ``leaf(folder_descriptor, name)``. It may
#: raise :class:`_SymlinkError` to have the walk follow a symlink found there.
_Leaf = Callable[[int, str], _T]


def _symlink_target(folder: int, name: str) -> str | None:
    """The target of the symlink ``name`` in ``folder``; None if it is not one (now)."""
    try:
        return os.readlink(name, dir_fd=folder)
    except OSError:  # EINVAL: not a symlink; ENOENT: gone; either way the open's error stands
        return None


def _open_leaf(flags: int, links: Links) -> _Leaf[int]:
    """A leaf that opens the last component with ``flags``, following no symlink itself:
    a link there is followed by the walk (``inside``) or opened as the link (``none``, with
    ``O_PATH``; else refused)."""

    def leaf(folder: int, name: str) -> int:
        try:
            descriptor = os.open(name, flags | _NOFOLLOW, dir_fd=folder)
        except OSError as error:
            if error.errno not in _LINK_ERRNOS:
                raise
            target = _symlink_target(folder, name)
            if target is None:
                raise
            if links == "none":
                raise LinkInPathError(name) from None
            raise _SymlinkError(target) from None
        if links == "inside" and flags & _O_PATH and _O_PATH:
            # O_PATH | O_NOFOLLOW opens a symlink itself, without ELOOP: follow it here.
            try:
                is_link = stat.S_ISLNK(os.fstat(descriptor).st_mode)
            except OSError:
                os.close(descriptor)
                raise
            if is_link:
                os.close(descriptor)
                target = _symlink_target(folder, name)
                if target is None:
                    raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), name)
                raise _SymlinkError(target)
        return descriptor

    return leaf


@dataclass
class _Root:
    """One of the session's folders: its real path, the paths naming it, its descriptor."""

    path: Path
    #: The path's components by each name it goes by (the real path, the path as given).
    names: tuple[tuple[str, ...], ...]
    descriptor: int | None = None


def _components(absolute: str) -> tuple[str, ...]:
    return tuple(part for part in absolute.split("/") if part not in ("", "."))


def _below(prefix: tuple[str, ...], parts: list[str]) -> list[str] | None:
    """What of ``parts`` (an absolute path's, split at ``/``) is below ``prefix``; None: not under.

    Only empty and ``.`` components are skipped while matching: ``..`` is never undone
    lexically (it is walked, from the root).
    """
    at = 0
    for name in prefix:
        while at < len(parts) and parts[at] in ("", "."):
            at += 1
        if at == len(parts) or parts[at] != name:
            return None
        at += 1
    return parts[at:]


def _joined(parts: Sequence[str]) -> str:
    """A relative path to give openat2 (never absolute: that is always EXDEV)."""
    return "/".join(parts).lstrip("/") or "."


def temporary_name(name: str) -> str:
    """A name beside ``name`` for its temporary file, short enough for any file system."""
    stem = os.fsencode(name)[:200].decode("utf-8", "ignore")  # NAME_MAX is 255 bytes
    return f".{stem}.{secrets.token_hex(6)}"


def _close_all(descriptors: list[int]) -> None:
    for descriptor in descriptors:
        with contextlib.suppress(OSError):
            os.close(descriptor)
    descriptors.clear()


def lstat_at(folder: int, name: str) -> os.stat_result | None:
    """What is at ``name`` in ``folder``, the name itself (a link as a link); None: nothing."""
    try:
        return os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return None


def replace_at(
    folder: int,
    name: str,
    data: bytes,
    *,
    mode: int | None = None,
    follow: bool = True,
    expected: Expected | None = None,
    link_target: str | None = None,
) -> None:
    """Put ``data`` (or, with ``link_target``, a symlink) in place of ``name`` in ``folder``.

    A symlink at ``name`` is followed when ``follow`` (the walk follows it, judging each
    step: :class:`_SymlinkError`), else replaced as a name. ``mode``: the new file's mode
    (default: an existing file keeps its own, a new one follows the umask). ``expected``
    is checked just before the rename.
    """
    if name in (".", ""):  # the path named a folder: "sub/.", or a symlink's target "dir/"
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    facts = lstat_at(folder, name)
    if facts is not None and stat.S_ISLNK(facts.st_mode) and follow:
        # Follow it to the file it names (the old content's mode, the link kept), judged as
        # every step is. A link swapped in after this only has its name replaced.
        raise _SymlinkError(os.readlink(name, dir_fd=folder))
    if facts is not None and stat.S_ISDIR(facts.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    if mode is None and facts is not None and stat.S_ISREG(facts.st_mode):
        mode = stat.S_IMODE(facts.st_mode)
    for _ in range(8):
        temporary = temporary_name(name)
        try:
            if link_target is not None:
                os.symlink(link_target, temporary, dir_fd=folder)
                descriptor = None
            else:
                # A new file: the kernel applies the umask (and a folder's default ACL) to
                # 0o666, as for any file this process makes; nothing reads the umask, so
                # nothing races it. A given mode goes on at once, before any content.
                descriptor = os.open(
                    temporary, _CREATE, 0o666 if mode is None else 0o600, dir_fd=folder
                )
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST))
    try:
        if descriptor is not None:
            try:
                if mode is not None:
                    os.fchmod(descriptor, mode)
                view = memoryview(data)
                while view:
                    view = view[os.write(descriptor, view) :]
            finally:
                os.close(descriptor)
        if expected is not None:
            expected.check(name, lstat_at(folder, name))
        os.rename(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=folder)
        raise


def folder_path(descriptor: int, lexical: Path) -> Path:
    """Where the open folder is (Linux says, in /proc); else the path it was reached by."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{descriptor}"))
    except OSError:
        return Path(os.path.normpath(lexical))


class Roots:
    """The folders a session may touch, each open as a descriptor, and the confined
    operations in them (see the module's docstring).

    The roots' descriptors are closed by :meth:`close`, or when the object is garbage.
    """

    def __init__(self, cwd: str | os.PathLike[str], additional: Sequence[str] = ()) -> None:
        given = (os.fspath(cwd), *additional)
        self.cwd = Path(os.path.realpath(given[0]))
        self.roots = (self.cwd, *(Path(os.path.realpath(p)) for p in given[1:]))
        self._roots = [
            _Root(
                real,
                tuple(dict.fromkeys((_components(str(real)), _components(os.path.abspath(p))))),
            )
            for real, p in zip(self.roots, given, strict=True)
        ]
        # Outermost first: a path under two nested roots walks from the outer one, so a ".."
        # that stays inside it is not refused.
        self._placing = sorted(
            ((prefix, root) for root in self._roots for prefix in root.names),
            key=lambda pair: len(pair[0]),
        )
        self._descriptors: list[int] = []
        self._finalizer = weakref.finalize(self, _close_all, self._descriptors)
        for root in self._roots:
            # Open now, so later renames of the roots' own paths change nothing; a root that
            # is not there yet is opened when first used.
            with contextlib.suppress(OSError):
                self._descriptor(root)

    def close(self) -> None:
        """Close the roots' descriptors (a later operation opens them again)."""
        _close_all(self._descriptors)
        for root in self._roots:
            root.descriptor = None

    def _descriptor(self, root: _Root) -> int:
        if root.descriptor is None:
            root.descriptor = os.open(root.path, _FOLDER)
            self._descriptors.append(root.descriptor)
        return root.descriptor

    def root_descriptor(self, index: int) -> int:
        """The descriptor of root ``index`` (0: the cwd), opened when first used."""
        return self._descriptor(self._roots[index])

    # --- judging by name ---------------------------------------------------------------

    def contains(self, path: str | os.PathLike[str]) -> bool:
        """Whether ``path``'s real path, now, is inside the roots (a filter, not a guard)."""
        real = Path(os.path.realpath(path))
        return any(real == root or root in real.parents for root in self.roots)

    def place(self, path: str) -> tuple[_Root, list[str]]:
        """The root ``path`` is under, and its components below that root, unresolved.

        :raises OutsideError: an absolute path lexically under no root.
        """
        parts = path.split("/")
        if not path.startswith("/"):
            return self._roots[0], parts
        for prefix, root in self._placing:
            rest = _below(prefix, parts)
            if rest is not None:
                return root, rest
        raise OutsideError(path)

    def lexical(self, path: str) -> tuple[int, tuple[str, ...]] | None:
        """The root (its index) ``path`` lexically lies in and its components below it, ``.``
        and empty parts dropped; None for a path under no root or one with ``..``."""
        try:
            root, rest = self.place(path)
        except OutsideError:
            return None
        parts = tuple(part for part in rest if part not in ("", "."))
        if ".." in parts:
            return None
        return self._roots.index(root), parts

    def resolve(self, path: str) -> Path | None:
        """The real path of ``path`` if it is inside the roots now; None otherwise (for
        judging and naming, never to open by name)."""
        try:
            root, rest = self.place(path)
        except OutsideError:
            return None
        real = Path(os.path.realpath(root.path.joinpath(*rest)))
        if not any(real == r or r in real.parents for r in self.roots):
            return None
        return real

    # --- the confined resolution -------------------------------------------------------

    def _walk(
        self,
        root: _Root,
        parts: Sequence[str],
        leaf: _Leaf[_T],
        *,
        create: bool = False,
        links: Links = "inside",
    ) -> tuple[_T, Path]:
        """Resolve ``parts`` below ``root`` a component at a time; ``leaf`` gets the last.

        Returns what ``leaf`` returned and the real path of the folder it was given.
        :raises OutsideError: a step (``..`` at the root, a symlink's absolute target under
            no root) would leave the roots.
        :raises LinkInPathError: ``links="none"`` and a folder of the path is a symlink.
        """
        pending = deque(parts)
        held: list[tuple[int, str]] = []  # folders opened below `root`, and their names
        followed = 0
        made = 0
        try:
            while True:
                part = pending.popleft() if pending else "."
                last = not pending
                if part == "..":
                    if not held:
                        raise OutsideError(part)
                    os.close(held.pop()[0])
                    if not last:
                        continue
                    part = "."
                elif part in ("", "."):
                    if not last:
                        continue
                    part = "."
                here = held[-1][0] if held else self._descriptor(root)
                target: str | None
                try:
                    if last:
                        return leaf(here, part), root.path.joinpath(*(n for _, n in held))
                    held.append((os.open(part, _FOLDER | _NOFOLLOW, dir_fd=here), part))
                    continue
                except _SymlinkError as link:
                    target = link.target
                except FileNotFoundError:
                    if not create or last or made >= _MKDIR_TRIES:
                        raise
                    made += 1
                    with contextlib.suppress(FileExistsError):  # made meanwhile: fine too
                        os.mkdir(part, dir_fd=here)
                    pending.appendleft(part)
                    continue
                except OSError as error:
                    target = _symlink_target(here, part) if error.errno in _LINK_ERRNOS else None
                    if target is None:
                        raise
                    if links == "none":
                        raise LinkInPathError(part) from None
                followed += 1
                if followed > _MAX_LINKS:
                    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
                if not target:
                    raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT))
                if target.startswith("/"):
                    # Judged lexically against the roots, then walked from that root's
                    # descriptor: where the link's folder really is does not matter.
                    root, steps = self.place(target)
                    _close_all([descriptor for descriptor, _ in held])
                    held.clear()
                else:
                    steps = target.split("/")
                pending.extendleft(reversed(steps))
        finally:
            _close_all([descriptor for descriptor, _ in held])

    def open(self, path: str, flags: int, *, links: Links = "inside") -> int:
        """``path`` opened with ``flags``, confined to the roots (openat2, else the walk).

        ``links="none"`` with ``O_PATH | O_NOFOLLOW`` in ``flags`` opens a symlink at the
        path itself as the link.
        :raises OutsideError: the path leads out of the roots.
        """
        root, rest = self.place(path)
        base = self._descriptor(root)
        if _have_openat2(base):
            resolve = _RESOLVE_NO_SYMLINKS if links == "none" else 0
            try:
                return _openat2(base, _joined(rest), flags, resolve)
            except OSError as error:
                if links == "none" and error.errno == errno.ELOOP:
                    raise LinkInPathError(path) from None
                if error.errno not in _WALK_INSTEAD:
                    raise
        return self._walk(root, rest, _open_leaf(flags, links), links=links)[0]

    def probe(self, path: str, *, links: Links = "inside") -> int:
        """A descriptor on what is at ``path`` that opens nothing for reading (``O_PATH``
        where there is one): to judge it with ``fstat`` before reading."""
        flags = _PROBE | (_NOFOLLOW if links == "none" else 0)
        return self.open(path, flags, links=links)

    def read_bytes(self, path: str, limit: int, *, links: Links = "inside") -> bytes:
        """The bytes of the regular file at ``path``, at most ``limit`` of them.

        :raises OutsideError: the path leads out of the roots.
        :raises NotRegularFileError: a FIFO, a device, a socket (never opened for reading).
        :raises FileTooLargeError: larger than ``limit``.
        :raises LinkInPathError: ``links="none"`` and a link is on the path, or at it.
        :raises OSError: missing (``FileNotFoundError``), a folder, unreadable.
        """
        probe = self.probe(path, links=links)
        try:
            return read_open(probe, path, limit)
        finally:
            os.close(probe)

    def lstat(self, path: str) -> os.stat_result | None:
        """What is at ``path`` itself (``links="none"``): a link as a link; None: nothing
        there (or a folder on the way is missing, or is a file).

        :raises OutsideError: the path leads out of the roots.
        :raises LinkInPathError: a folder on the way is a symlink.
        """
        try:
            descriptor, name, _ = self.folder(path, links="none")
        except FileNotFoundError:
            return None
        except NotADirectoryError:  # a file where a folder should be: nothing is at the path
            return None
        try:
            return lstat_at(descriptor, name)
        finally:
            os.close(descriptor)

    def identity(self, path: str) -> Identity | None:
        """The identity of the file ``path`` names now, following the links inside the roots
        as the ``fs/*`` requests do; None when there is none (or it leads out)."""
        try:
            probe = self.probe(path)
        except (OutsideError, OSError, ValueError):
            return None
        try:
            return Identity.of(os.fstat(probe))
        finally:
            os.close(probe)

    def _openat2_folder(self, root: _Root, rest: list[str], links: Links, path: str) -> int | None:
        """The folder holding the last of ``rest``, opened by openat2 in one step; None when
        there is no openat2, or the walk must judge (a link it refuses, folders to make)."""
        base = self._descriptor(root)
        if not _have_openat2(base):
            return None
        resolve = _RESOLVE_NO_SYMLINKS if links == "none" else 0
        try:
            return _openat2(base, _joined(rest[:-1]), _FOLDER, resolve)
        except OSError as error:
            if links == "none" and error.errno == errno.ELOOP:
                raise LinkInPathError(path) from None
            # ENOENT: folders to make, which the walk does one at a time.
            if error.errno not in _WALK_INSTEAD and error.errno != errno.ENOENT:
                raise
        return None

    def folder(
        self, path: str, *, create: bool = False, links: Links = "inside"
    ) -> tuple[int, str, Path]:
        """The open folder that holds ``path``, the name in it, and the folder's real path.

        ``create``: missing folders are made, one at a time, inside the root.
        :raises OutsideError: the path leads out of the roots.
        """
        root, rest = self.place(path)
        name = rest[-1] if rest else "."
        if name in ("", ".", ".."):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        opened = self._openat2_folder(root, rest, links, path)
        if opened is not None:
            return opened, name, folder_path(opened, root.path.joinpath(*rest[:-1]))

        def hold(folder: int, leaf_name: str) -> int:
            return os.dup(folder)

        walked, real = self._walk(root, [*rest[:-1], "."], hold, create=create, links=links)
        return walked, name, real

    def replace(
        self,
        path: str,
        data: bytes,
        *,
        links: Links = "inside",
        mode: int | None = None,
        expected: Expected | None = None,
        link_target: str | None = None,
    ) -> Path:
        """Write ``data`` to ``path`` atomically, confined; returns the file's real path.

        ``links="inside"``: a symlink at the path is followed to the file it names inside
        the roots (the link kept); ``links="none"``: no link is followed, one at the path is
        replaced. ``link_target``: a symlink to that target is put there instead of a file.
        """
        root, rest = self.place(path)
        name = rest[-1] if rest else "."

        def leaf(folder: int, leaf_name: str) -> str:
            replace_at(
                folder,
                leaf_name,
                data,
                mode=mode,
                follow=links == "inside",
                expected=expected,
                link_target=link_target,
            )
            return leaf_name

        if name not in ("", ".", ".."):
            folder = self._openat2_folder(root, rest, links, path)
            if folder is not None:
                try:
                    leaf(folder, name)
                    return folder_path(folder, root.path.joinpath(*rest[:-1])) / name
                except _SymlinkError:
                    pass  # a symlink at the target: the walk follows it, judging each step
                finally:
                    os.close(folder)
        written, real = self._walk(root, rest, leaf, create=True, links=links)
        return real / written

    def remove(self, path: str, *, expected: Expected | None = None) -> None:
        """Remove the file or the link at ``path`` (``links="none"``: a link itself, never
        what it points to; never a folder).

        :raises FileNotFoundError: nothing is there.
        :raises IsADirectoryError: a folder is there.
        :raises ChangedError: it is not what ``expected`` says.
        """
        descriptor, name, _ = self.folder(path, links="none")
        try:
            facts = lstat_at(descriptor, name)
            if expected is not None:
                expected.check(name, facts)
            if facts is None:
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
            if stat.S_ISDIR(facts.st_mode):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
            os.unlink(name, dir_fd=descriptor)
        finally:
            os.close(descriptor)


__all__ = [
    "LISTABLE",
    "NAME_MAX",
    "ChangedError",
    "Expected",
    "FileTooLargeError",
    "Identity",
    "LinkInPathError",
    "Links",
    "NotRegularFileError",
    "OutsideError",
    "Roots",
    "folder_path",
    "hash_open",
    "lstat_at",
    "read_open",
    "replace_at",
    "temporary_name",
]
