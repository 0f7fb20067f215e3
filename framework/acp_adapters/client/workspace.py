"""The session's folders, and the file-system requests an agent may make in them.

What is guaranteed
    Nothing an agent asks through ``fs/read_text_file`` or ``fs/write_text_file``
    (:meth:`Workspace.read_text`, :meth:`Workspace.write_text`), and no disk read around an
    edit made with :meth:`Workspace.read_confined`, reads or writes a file outside the
    session's cwd and its additional directories (its *roots*) -- even while the agent
    changes the tree under the request: swaps a folder for a symlink to outside
    (``renameat2(RENAME_EXCHANGE)``), renames folders, sends requests in a pipeline. Symlinks
    inside the roots that lead inside them still work, relative or absolute; ``..`` works as
    long as it stays inside; anything that leads out is refused (-32000 ``outside the
    session's folders`` for the fs requests, ``None`` for :meth:`Workspace.read_confined`).

How
    Each root is opened once, as a directory descriptor, when the workspace is made. A path is
    first placed under a root: a relative one under the cwd, an absolute one under the root it
    lexically lies in (by the root's real path, or by the path it was given as); an absolute
    path under none is refused without touching the disk. The rest of the path is then
    resolved and opened in one step relative to that root's descriptor, so no name is ever
    judged first and opened later:

    * where the kernel has ``openat2(2)`` (Linux 5.6 and later), with ``RESOLVE_BENEATH |
      RESOLVE_NO_MAGICLINKS``: the kernel follows symlinks and ``..`` and refuses every step
      out of the root, atomically with respect to renames. Whether it is there is checked
      once per process (``ENOSYS``, or a seccomp filter's ``EPERM``, means no).
    * elsewhere, and when ``openat2`` refuses a step (``EXDEV``: it refuses an absolute
      symlink even when it points inside, and the walk can judge that), a walk of the path
      component by component: each folder is opened ``O_NOFOLLOW | O_DIRECTORY`` relative to
      the descriptor of the one before; a symlink is never followed by the kernel, but read
      (``readlink``) and its target walked in its place -- a relative target from the folder
      that holds the link, an absolute one from the root it lexically lies in (else it is
      refused); ``..`` goes back to the descriptor the walk came from and is refused at the
      root. At most 40 symlinks are followed, as the kernel does.

    Reads open the file ``O_NONBLOCK`` and judge the open descriptor (``fstat``): a FIFO, a
    device or a socket is refused without waiting for a writer, as is a file larger than the
    read allows. Writes are atomic and confined the same way: the folder that will hold the
    file is opened as above (missing folders made inside the root one at a time with
    ``mkdir`` relative to their parent's descriptor), the content goes to a temporary file
    created ``O_CREAT | O_EXCL | O_NOFOLLOW`` in that folder's descriptor, and a ``rename``
    within the same descriptor puts it in place. A symlink at the target is followed (the file
    it names inside the roots is replaced, the link kept); the rename replaces a name, never
    what a link there points to. A new file's mode follows the process umask (the kernel
    applies it to ``0o666``); an existing file keeps its mode.

Limits
    The guarantee is for the opens this module makes. :meth:`Workspace.resolve` and
    :meth:`Workspace.contains` judge a path by its real path at the time of the call, which is
    right for judging and for naming a terminal's cwd, but a caller that later opens the
    returned name races the agent. Hard links are not symlinks: a hard link the agent made
    inside the roots to a file outside them is a file inside (on Linux,
    ``fs.protected_hardlinks`` stops it linking files it could not write). Folders mounted
    inside a root are inside.
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

from ..transport import RpcError

#: JSON-RPC errors the fs methods answer with.
RESOURCE_NOT_FOUND = -32002
INVALID_PARAMS = -32602
FORBIDDEN = -32000

MissingFileRead = Literal["error", "empty"]

#: The largest file ``fs/read_text_file`` reads (bytes): its text goes out in one message.
READ_LIMIT = 32 * 1024 * 1024

_T = TypeVar("_T")

_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
#: A folder on the way: ``O_PATH`` where there is one, so a folder the agent may enter but not
#: list (mode ``--x``) can still be walked through, and nothing is opened for reading.
_FOLDER: int = getattr(os, "O_PATH", os.O_RDONLY) | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC
#: A file to read: never blocks (a FIFO), never becomes the controlling terminal (a tty).
_READ: int = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | _CLOEXEC
#: The temporary file of a write: a new name, never a symlink followed.
_CREATE: int = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
#: What an ``O_NOFOLLOW`` open of a symlink fails with: ``ELOOP`` (Linux, macOS), ``EMLINK``
#: (FreeBSD), ``ENOTDIR`` (with ``O_DIRECTORY``, Linux). The name is then read to know.
_LINK_ERRNOS = frozenset({errno.ELOOP, errno.EMLINK, errno.ENOTDIR})
#: As the kernel's ``MAXSYMLINKS``.
_MAX_LINKS = 40
#: How often a folder that vanishes between its ``mkdir`` and its open is made again.
_MKDIR_TRIES = 8

# --- openat2(2) ----------------------------------------------------------------------------

#: The syscall's number: the same on every Linux architecture (alpha aside).
_SYS_OPENAT2 = 437
_RESOLVE_NO_MAGICLINKS = 0x02
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


def _openat2(dirfd: int, path: str, flags: int) -> int:
    """``openat2(dirfd, path, {flags, 0, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS})``."""
    how = _OpenHow(flags, 0, _RESOLVE_BENEATH | _RESOLVE_NO_MAGICLINKS)
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


# --- reading an open file ------------------------------------------------------------------


class NotRegularFileError(OSError):
    """The path is a FIFO, a device or a socket: not a file to read."""


class FileTooLargeError(OSError):
    """The file is larger than the read allows."""

    def __init__(self, size: int) -> None:
        super().__init__(f"{size} bytes")
        self.size = size


def _read_descriptor(descriptor: int, name: str, limit: int) -> str:
    """The UTF-8 text of the open ``descriptor`` if it is a regular file of at most ``limit``."""
    facts = os.fstat(descriptor)
    if stat.S_ISDIR(facts.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
    if not stat.S_ISREG(facts.st_mode):
        raise NotRegularFileError(name)
    if facts.st_size > limit:
        raise FileTooLargeError(facts.st_size)
    with open(descriptor, encoding="utf-8", newline="", closefd=False) as handle:
        return handle.read(limit + 1)  # a file that grew since it was measured is cut


# --- the walk ------------------------------------------------------------------------------


class _OutsideError(Exception):
    """A step of the path would leave the session's folders."""


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


def _open_leaf(flags: int) -> _Leaf[int]:
    """A leaf that opens the last component with ``flags``, following no symlink itself."""

    def leaf(folder: int, name: str) -> int:
        try:
            return os.open(name, flags | _NOFOLLOW, dir_fd=folder)
        except OSError as error:
            target = _symlink_target(folder, name) if error.errno in _LINK_ERRNOS else None
            if target is None:
                raise
            raise _SymlinkError(target) from None

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


def _temporary_name(name: str) -> str:
    """A name beside ``name`` for its temporary file, short enough for any file system."""
    stem = os.fsencode(name)[:200].decode("utf-8", "ignore")  # NAME_MAX is 255 bytes
    return f".{stem}.{secrets.token_hex(6)}"


def _close_all(descriptors: list[int]) -> None:
    for descriptor in descriptors:
        with contextlib.suppress(OSError):
            os.close(descriptor)
    descriptors.clear()


def _checked_path(path: object) -> str:
    if not isinstance(path, str) or not path or "\x00" in path:
        raise RpcError(INVALID_PARAMS, "path must be a non-empty string")
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no file system name holds it
        raise RpcError(INVALID_PARAMS, "path is not valid Unicode text") from None
    return path


def _replace_at(folder: int, name: str, data: bytes) -> None:
    """Put ``data`` in place of the file ``name`` in ``folder`` (a leaf of the walk)."""
    if name == ".":  # the path named a folder: "sub/.", or a symlink's target "dir/"
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    try:
        facts: os.stat_result | None = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        facts = None
    if facts is not None and stat.S_ISLNK(facts.st_mode):
        # Follow it to the file it names (the old content's mode, the link kept), judged as
        # every step is. A link swapped in after this only has its name replaced.
        raise _SymlinkError(os.readlink(name, dir_fd=folder))
    if facts is not None and stat.S_ISDIR(facts.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    mode = None if facts is None else stat.S_IMODE(facts.st_mode)
    for _ in range(8):
        temporary = _temporary_name(name)
        try:
            # A new file: the kernel applies the umask (and a folder's default ACL) to 0o666,
            # as for any file this process makes; nothing reads the umask, so nothing races it.
            # An existing file's mode goes on at once, before any content is written.
            descriptor = os.open(
                temporary, _CREATE, 0o666 if mode is None else 0o600, dir_fd=folder
            )
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST))
    try:
        try:
            if mode is not None:
                os.fchmod(descriptor, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(descriptor, view) :]
        finally:
            os.close(descriptor)
        os.rename(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=folder)
        raise


def text_lines(text: str, start: int, count: int | None) -> str:
    """Lines ``start`` (0-based) to ``start + count`` of ``text``, each with its ending.

    Lines end at "\n" only (a "\r" or U+2028 stays inside its line). The ends are found
    with ``str.find``, and only the lines asked for are copied: one line of a 30 MiB file
    costs what that line costs, not a list of every line.
    """
    begin = 0
    for _ in range(start):
        found = text.find("\n", begin)
        if found < 0:
            return ""
        begin = found + 1
    if count is None:
        return text[begin:]
    end = begin
    for _ in range(count):
        found = text.find("\n", end)
        if found < 0:
            return text[begin:]
        end = found + 1
    return text[begin:end]


class Workspace:
    """The folders a session may touch, and the confined reads and writes in them.

    The fs requests use :meth:`read_text` and :meth:`write_text`. The disk reads around an
    edit use :meth:`read_confined` (``str | None``: ``None`` for a path that is missing, not a
    regular UTF-8 file within the limit, or outside). :meth:`resolve` and :meth:`contains`
    judge a path by its real path now (a terminal's cwd; a quick filter); never open what they
    judged by name. The roots' descriptors are closed by :meth:`close`, or when the workspace
    is garbage.
    """

    def __init__(self, cwd: str | os.PathLike[str], additional: tuple[str, ...] = ()) -> None:
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
        """Close the roots' descriptors (a later request opens them again)."""
        _close_all(self._descriptors)
        for root in self._roots:
            root.descriptor = None

    def _descriptor(self, root: _Root) -> int:
        if root.descriptor is None:
            root.descriptor = os.open(root.path, _FOLDER)
            self._descriptors.append(root.descriptor)
        return root.descriptor

    # --- judging by name ---------------------------------------------------------------

    def contains(self, path: str | os.PathLike[str]) -> bool:
        """Whether ``path``'s real path, now, is inside the roots (a filter, not a guard)."""
        real = Path(os.path.realpath(path))
        return any(real == root or root in real.parents for root in self.roots)

    def _place(self, path: str) -> tuple[_Root, list[str]]:
        """The root ``path`` is under, and its components below that root, unresolved."""
        parts = path.split("/")
        if not path.startswith("/"):
            return self._roots[0], parts
        for prefix, root in self._placing:
            rest = _below(prefix, parts)
            if rest is not None:
                return root, rest
        raise _OutsideError(path)

    def resolve(self, path: object) -> Path:
        """The real path of ``path`` if it is inside the workspace; else an RPC error.

        For judging and naming (a terminal's cwd): the path is placed as the opens place it
        (an absolute path lexically under a root) and its real path, now, judged. Do not open
        the result by name: the fs requests open through :meth:`read_text`, :meth:`write_text`
        and :meth:`read_confined`, which do not race the agent.
        """
        checked = _checked_path(path)
        try:
            root, rest = self._place(checked)
        except _OutsideError:
            raise RpcError(FORBIDDEN, f"{checked} is outside the session's folders") from None
        real = Path(os.path.realpath(root.path.joinpath(*rest)))
        if not any(real == r or r in real.parents for r in self.roots):
            raise RpcError(FORBIDDEN, f"{checked} is outside the session's folders")
        return real

    # --- the confined opens ------------------------------------------------------------

    def _walk(
        self, root: _Root, parts: Sequence[str], leaf: _Leaf[_T], *, create: bool = False
    ) -> tuple[_T, Path]:
        """Resolve ``parts`` below ``root`` a component at a time; ``leaf`` gets the last.

        Returns what ``leaf`` returned and the real path of the folder it was given.
        :raises _OutsideError: a step (``..`` at the root, a symlink's absolute target under
            no root) would leave the roots.
        """
        pending = deque(parts)
        held: list[tuple[int, str]] = []  # folders opened below `root`, and their names
        links = 0
        made = 0
        try:
            while True:
                part = pending.popleft() if pending else "."
                last = not pending
                if part == "..":
                    if not held:
                        raise _OutsideError(part)
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
                links += 1
                if links > _MAX_LINKS:
                    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
                if not target:
                    raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT))
                if target.startswith("/"):
                    # Judged lexically against the roots, then walked from that root's
                    # descriptor: where the link's folder really is does not matter.
                    root, steps = self._place(target)
                    _close_all([descriptor for descriptor, _ in held])
                    held.clear()
                else:
                    steps = target.split("/")
                pending.extendleft(reversed(steps))
        finally:
            _close_all([descriptor for descriptor, _ in held])

    def _open(self, path: str, flags: int) -> int:
        """``path`` opened with ``flags``, confined to the roots (openat2, else the walk)."""
        root, rest = self._place(path)
        base = self._descriptor(root)
        if _have_openat2(base):
            try:
                return _openat2(base, _joined(rest), flags)
            except OSError as error:
                if error.errno not in _WALK_INSTEAD:
                    raise
        return self._walk(root, rest, _open_leaf(flags))[0]

    def _replace(self, path: str, data: bytes) -> Path:
        """Write ``data`` to ``path`` atomically, confined; returns the file's real path."""
        root, rest = self._place(path)
        base = self._descriptor(root)
        name = rest[-1] if rest else "."
        if name not in ("", ".", "..") and _have_openat2(base):
            try:
                folder = _openat2(base, _joined(rest[:-1]), _FOLDER)
            except OSError as error:
                # ENOENT: folders to make, which the walk does one at a time.
                if error.errno not in _WALK_INSTEAD and error.errno != errno.ENOENT:
                    raise
            else:
                try:
                    _replace_at(folder, name, data)
                    return _folder_path(folder, root.path.joinpath(*rest[:-1])) / name
                except _SymlinkError:
                    pass  # a symlink at the target: the walk follows it, judging each step
                finally:
                    os.close(folder)
        written, folder_path = self._walk(root, rest, _replace_leaf(data), create=True)
        return folder_path / written

    # --- what the session asks -----------------------------------------------------------

    def read_confined(self, path: object, limit: int) -> str | None:
        """The text of ``path`` if it is a regular UTF-8 file of at most ``limit`` bytes inside
        the roots, read without racing the agent; None otherwise (missing, unreadable, a FIFO
        or a device, too large, not UTF-8, outside, not a path).

        For the disk reads around an edit: a relative path is taken from the cwd, an absolute
        one must lie lexically under a root.
        """
        if not isinstance(path, str) or not path or "\x00" in path:
            return None
        try:
            descriptor = self._open(path, _READ)
        except (_OutsideError, OSError, ValueError):  # ValueError: no file name holds it
            return None
        try:
            return _read_descriptor(descriptor, path, limit)
        except (OSError, UnicodeDecodeError):
            return None
        finally:
            os.close(descriptor)

    def read_known(self, path: object, limit: int) -> tuple[bool, str | None]:
        """What the disk says of ``path`` for a true patch: ``(True, text)``, ``(True, None)``
        when no such file exists, ``(False, None)`` when a file is there but cannot be
        read as text here (too large, not UTF-8, not a regular file, outside, unreadable).

        Read as :meth:`read_confined` reads, without racing the agent.
        """
        if not isinstance(path, str) or not path or "\x00" in path:
            return False, None
        try:
            descriptor = self._open(path, _READ)
        except FileNotFoundError:
            return True, None
        except (_OutsideError, OSError, ValueError):
            return False, None
        try:
            return True, _read_descriptor(descriptor, path, limit)
        except (OSError, UnicodeDecodeError):
            return False, None
        finally:
            os.close(descriptor)

    def read_text(
        self,
        path: object,
        *,
        line: object = None,
        limit: object = None,
        missing: MissingFileRead = "error",
    ) -> str:
        """The file's text, from 1-based ``line`` and at most ``limit`` lines when given."""
        checked = _checked_path(path)
        try:
            self._place(checked)
        except _OutsideError:
            raise RpcError(FORBIDDEN, f"{checked} is outside the session's folders") from None
        for name, value in (("line", line), ("limit", limit)):
            bad = isinstance(value, bool) or not isinstance(value, int) or value < 0
            if value is not None and bad:
                raise RpcError(INVALID_PARAMS, f"{name} must be a non-negative integer")
        try:
            descriptor = self._open(checked, _READ)
            try:
                text = _read_descriptor(descriptor, checked, READ_LIMIT)
            finally:
                os.close(descriptor)
        except _OutsideError:
            raise RpcError(FORBIDDEN, f"{checked} is outside the session's folders") from None
        except FileNotFoundError:
            if missing == "empty":
                return ""
            raise RpcError(
                RESOURCE_NOT_FOUND, f"Resource not found: {checked}", {"uri": checked}
            ) from None
        except IsADirectoryError:
            raise RpcError(INVALID_PARAMS, f"{checked} is a directory") from None
        except NotRegularFileError:
            raise RpcError(INVALID_PARAMS, f"{checked} is not a regular file") from None
        except FileTooLargeError as error:
            raise RpcError(
                INVALID_PARAMS,
                f"{checked} is too large to read ({error.size} bytes; the limit is {READ_LIMIT})",
            ) from None
        except UnicodeDecodeError:
            raise RpcError(INVALID_PARAMS, f"{checked} is not UTF-8 text") from None
        except OSError as error:
            raise RpcError(INVALID_PARAMS, f"cannot read {checked}: {error.strerror}") from None
        if line is None and limit is None:
            return text
        start = max((line if isinstance(line, int) else 1) - 1, 0)
        return text_lines(text, start, limit if isinstance(limit, int) else None)

    def write_text(self, path: object, content: object) -> Path:
        """Write atomically: a temporary file beside the target, then a rename onto it.

        Both in the descriptor of the target's folder, reached as reads reach a file; missing
        folders are made inside the roots. Returns the real path written.
        """
        if not isinstance(content, str):
            raise RpcError(INVALID_PARAMS, "content must be a string")
        checked = _checked_path(path)
        try:
            self._place(checked)
        except _OutsideError:
            raise RpcError(FORBIDDEN, f"{checked} is outside the session's folders") from None
        if checked.endswith("/"):
            raise RpcError(
                INVALID_PARAMS, f"{checked} ends with a /: it names a folder, not a file"
            )
        # Judged before any folder is made: a write refused for its name leaves nothing.
        name = checked.rsplit("/", 1)[-1]
        if name in (".", ".."):
            raise RpcError(INVALID_PARAMS, f"{checked} is a directory, not a file")
        if any(len(os.fsencode(part)) > _NAME_MAX for part in checked.split("/")):
            raise RpcError(INVALID_PARAMS, f"cannot write {checked}: File name too long")
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: no UTF-8 holds it
            raise RpcError(INVALID_PARAMS, "content is not valid Unicode text") from None
        try:
            return self._replace(checked, data)
        except _OutsideError:
            raise RpcError(FORBIDDEN, f"{checked} is outside the session's folders") from None
        except IsADirectoryError:
            raise RpcError(INVALID_PARAMS, f"{checked} is a directory") from None
        except OSError as error:
            # ENAMETOOLONG, ENOTDIR (a component is a file), EACCES, ENOSPC...: named by the
            # path asked for; the temporary file's name is nobody's business.
            raise RpcError(INVALID_PARAMS, f"cannot write {checked}: {error.strerror}") from None


#: The longest name of one path component (bytes), as most file systems take it.
_NAME_MAX = 255


def _replace_leaf(data: bytes) -> _Leaf[str]:
    """A leaf that writes ``data`` in place of the last component; it returns the name."""

    def leaf(folder: int, name: str) -> str:
        _replace_at(folder, name, data)
        return name

    return leaf


def _folder_path(descriptor: int, lexical: Path) -> Path:
    """Where the open folder is (Linux says, in /proc); else the path it was reached by."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{descriptor}"))
    except OSError:
        return Path(os.path.normpath(lexical))
