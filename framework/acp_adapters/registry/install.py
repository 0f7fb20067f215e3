"""Installing a registry agent's binary archive into a per-agent, per-version cache folder.

The layout is ``<cache>/<agent_id>/<version>/<platform>/`` holding what the archive
unpacks to, and beside it the completion marker ``<platform>.installed`` (JSON: the archive
URL, its sha256, ``cmd``), written last. An install downloads into a temporary file and
unpacks into a temporary sibling folder (``.<platform>.partial-*``), verifies the lot, then
renames that folder into place and writes the marker; all under a lock file
(``<cache>/.locks/<agent_id>/<version>/<platform>.lock``) so that two processes installing
the same agent at once give one install, the second waiting then finding it installed. A
folder without its marker (an install that died half way) never counts as installed and is
replaced by the next install; a failed install leaves the cache as it was (but for its lock
file).

Everything from the network is hostile. The archive's sha256, when the registry gives one,
is checked before anything is unpacked. Each entry is checked before it is written: no
absolute path, no ``..``, no drive letter or backslash, no link pointing outside the folder
or to an absolute path, no entry beneath a symbolic link, no device file, FIFO or socket;
the number of entries and the unpacked size are capped (zip and tar bombs). ``cmd`` must
name a file inside the folder, present once unpacked; it is made executable.

This module takes plain arguments (URL, sha256, ``cmd``, agent id, version, platform) and
imports nothing of the registry package, so the registry's modules can import it.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import json
import os
import re
import shutil
import stat
import tarfile
import tempfile
import unicodedata
import urllib.parse
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING, Any, Literal, Protocol, cast

import platformdirs

from acp_adapters.errors import AcpAdaptersError

if TYPE_CHECKING:
    from .download import Progress

# The lock and the downloader are imported by the install itself: looking an install up
# (:func:`installed_binary`, which ``acp-adapters providers`` does) loads neither.

__all__ = [
    "CACHE_ENV",
    "DEFAULT_INSTALL_TIMEOUT",
    "DEFAULT_MAX_ARCHIVE_BYTES",
    "DEFAULT_MAX_ENTRIES",
    "DEFAULT_MAX_EXTRACTED_BYTES",
    "INSTALLER_SUFFIXES",
    "InstallError",
    "archive_kind",
    "default_cache_dir",
    "install_binary",
    "installed_binary",
]

#: The environment variable naming acp-adapters' cache folder (agents go in its ``agents``).
CACHE_ENV = "ACP_ADAPTERS_CACHE"
#: The largest archive downloaded (512 MiB).
DEFAULT_MAX_ARCHIVE_BYTES = 512 * 1024 * 1024
#: The most an archive may unpack to (2 GiB).
DEFAULT_MAX_EXTRACTED_BYTES = 2 * 1024 * 1024 * 1024
#: The most entries an archive may hold.
DEFAULT_MAX_ENTRIES = 50_000
#: Seconds the whole download of an archive may take.
DEFAULT_INSTALL_TIMEOUT = 600.0
#: Installer formats, refused: acp-adapters does not run installers.
INSTALLER_SUFFIXES = (".dmg", ".pkg", ".deb", ".rpm", ".msi")

ArchiveKind = Literal["zip", "tar.gz", "tar.bz2", "raw"]

_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,127}")
_PLATFORM = re.compile(r"[a-z0-9_]{1,32}-[a-z0-9_]{1,32}")
_SHA256 = re.compile(r"[0-9a-fA-F]{64}")
_DRIVE = re.compile(r"[A-Za-z]:")
_WINDOWS_RESERVED = frozenset(
    ["CON", "PRN", "AUX", "NUL"] + [f"{p}{n}" for p in ("COM", "LPT") for n in range(1, 10)]
)
_MAGIC: dict[str, tuple[bytes, ...]] = {
    "zip": (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08"),
    "tar.gz": (b"\x1f\x8b",),
    "tar.bz2": (b"BZh",),
}
_MAGIC_NAME = {"zip": "a zip file", "tar.gz": "gzip data", "tar.bz2": "bzip2 data"}
_MAX_LINK_TARGET = 4096
_COPY_CHUNK = 1024 * 1024


class InstallError(AcpAdaptersError):
    """Raised by :func:`install_binary` when an agent's binary cannot be installed.

    The message names the agent, its version and platform, and the reason (the download's
    failure, a sha256 mismatch, a refused archive entry, a missing ``cmd``...). ``agent_id``
    and ``reason`` hold those parts alone.
    """

    def __init__(self, agent_id: str, version: str, platform: str, reason: str) -> None:
        super().__init__(
            f"cannot install agent {_text(agent_id)} {_plain(version)} ({_plain(platform)}): "
            f"{reason}"
        )
        self.agent_id = agent_id
        self.version = version
        self.platform = platform
        self.reason = reason


class _Refused(Exception):
    """An archive or cmd refused; turned into an :class:`InstallError` by the caller."""


def default_cache_dir() -> Path:
    """The folder binary agents are installed in when ``cache_dir`` is not given.

    That is ``$ACP_ADAPTERS_CACHE/agents`` when the environment variable is set (it names
    acp-adapters' cache folder as a whole), else the user's cache folder for acp-adapters
    (``platformdirs.user_cache_path("acp-adapters")``, e.g. ``~/.cache/acp-adapters`` on
    Linux) followed by ``agents``. The path is absolute; it may not exist yet.
    """
    configured = os.environ.get(CACHE_ENV)
    if configured:
        root = Path(configured).expanduser()
    else:
        root = platformdirs.user_cache_path("acp-adapters", appauthor=False)
    return (root / "agents").absolute()


def archive_kind(url: str) -> ArchiveKind:
    """The kind of archive ``url`` names, by the suffix of its path (the query is ignored).

    ``.zip`` gives ``"zip"``, ``.tar.gz``/``.tgz`` ``"tar.gz"``, ``.tar.bz2``/``.tbz2``
    ``"tar.bz2"``, anything else ``"raw"`` (the file is the executable itself). Raises
    ``ValueError`` for an installer format (``.dmg .pkg .deb .rpm .msi``).
    """
    path = urllib.parse.urlsplit(url).path.lower()
    for suffix in INSTALLER_SUFFIXES:
        if path.endswith(suffix):
            raise ValueError(f"installer formats ({suffix}) are not supported")
    if path.endswith(".zip"):
        return "zip"
    if path.endswith((".tar.gz", ".tgz")):
        return "tar.gz"
    if path.endswith((".tar.bz2", ".tbz2")):
        return "tar.bz2"
    return "raw"


def installed_binary(
    agent_id: str,
    version: str,
    platform: str,
    cmd: str,
    cache_dir: Path | str | None = None,
) -> Path | None:
    """The absolute path of ``cmd`` of a complete install of this agent, or ``None``.

    An install counts only with its completion marker present and ``cmd`` a file inside
    its folder; a folder left by an install that did not finish is not installed. Nothing
    is downloaded or changed. Invalid names give ``None``.
    """
    try:
        _check_names(agent_id, version, platform)
        parts = _cmd_parts(cmd)
    except _Refused:
        return None
    folder = _folder(_cache_root(cache_dir), agent_id, version, platform)
    if _read_marker(folder) is None:
        return None
    return _complete_cmd(folder, parts)


def install_binary(
    agent_id: str,
    version: str,
    platform: str,
    *,
    archive_url: str,
    sha256: str | None = None,
    cmd: str,
    cache_dir: Path | str | None = None,
    allow_loopback_http: bool = False,
    progress: Progress | None = None,
    max_bytes: int = DEFAULT_MAX_ARCHIVE_BYTES,
    timeout: float = DEFAULT_INSTALL_TIMEOUT,
    max_extracted_bytes: int = DEFAULT_MAX_EXTRACTED_BYTES,
    max_entries: int = DEFAULT_MAX_ENTRIES,
    lock_timeout: float | None = None,
) -> Path:
    """Install an agent's binary archive (once) and return the absolute path of its ``cmd``.

    ``agent_id``, ``version`` and ``platform`` (``linux-x86_64``...) name the cache folder
    ``<cache_dir>/<agent_id>/<version>/<platform>/`` (``cache_dir`` defaults to
    :func:`default_cache_dir`). When that install is already complete, and was made from
    the same ``archive_url`` (and ``sha256``, when given), its ``cmd`` is returned and
    nothing is downloaded. Otherwise, under the install lock: ``archive_url`` is
    downloaded over HTTPS (``http://`` only to a loopback host with
    ``allow_loopback_http``), at most ``max_bytes`` within ``timeout`` seconds, reporting
    to ``progress(done_bytes, total_or_None)``; its sha256 is checked against ``sha256``
    when given, before anything is unpacked; it is unpacked by its kind (see
    :func:`archive_kind`; a raw binary is installed as ``cmd``) with every entry checked,
    at most ``max_entries`` entries and ``max_extracted_bytes`` bytes; ``cmd`` (say
    ``./bin/agent``) must then be a file inside the folder, and is made executable.
    ``lock_timeout`` (default: ``timeout`` plus 5 minutes) bounds the wait for another
    process installing the same agent.

    Raises :class:`InstallError` naming the agent and the reason; the cache is then left
    as it was.
    """

    def refuse(reason: str) -> InstallError:
        return InstallError(agent_id, version, platform, reason)

    try:
        _check_names(agent_id, version, platform)
        parts = _cmd_parts(cmd)
        kind = archive_kind(archive_url)
    except (_Refused, ValueError) as exc:
        raise refuse(str(exc)) from None
    if sha256 is not None and not _SHA256.fullmatch(sha256):
        raise refuse(f"the sha256 {_text(sha256)} is not 64 hexadecimal digits")
    expected = sha256.lower() if sha256 is not None else None

    root = _cache_root(cache_dir)
    folder = _folder(root, agent_id, version, platform)
    found = _current(folder, parts, archive_url, expected)
    if found is not None:
        return found

    import filelock

    from .download import DownloadError

    lock_path = root / ".locks" / agent_id / version / f"{platform}.lock"
    created = _missing_parents(folder)
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        lock = filelock.FileLock(
            str(lock_path), timeout=lock_timeout if lock_timeout is not None else timeout + 300
        )
        with lock:
            found = _current(folder, parts, archive_url, expected)
            if found is not None:
                return found
            return _install_locked(
                folder,
                parts,
                kind,
                archive_url=archive_url,
                expected=expected,
                cmd=cmd,
                allow_loopback_http=allow_loopback_http,
                progress=progress,
                max_bytes=max_bytes,
                timeout=timeout,
                max_extracted_bytes=max_extracted_bytes,
                max_entries=max_entries,
            )
    except filelock.Timeout:
        _remove_empty(created)
        raise refuse(
            f"another process holds the install lock {lock_path} for more than {lock.timeout:g} s"
        ) from None
    except DownloadError as exc:
        _remove_empty(created)
        raise refuse(str(exc)) from None
    except _Refused as exc:
        _remove_empty(created)
        raise refuse(str(exc)) from None
    except OSError as exc:
        _remove_empty(created)
        raise refuse(f"the cache folder could not be written ({exc})") from None
    except BaseException:
        _remove_empty(created)
        raise


# -- the install, under its lock ----------------------------------------------------------------


def _install_locked(
    folder: Path,
    parts: tuple[str, ...],
    kind: ArchiveKind,
    *,
    archive_url: str,
    expected: str | None,
    cmd: str,
    allow_loopback_http: bool,
    progress: Progress | None,
    max_bytes: int,
    timeout: float,
    max_extracted_bytes: int,
    max_entries: int,
) -> Path:
    from .download import download_to

    parent = folder.parent
    parent.mkdir(parents=True, exist_ok=True)
    marker = _marker_path(folder)
    # What an earlier install left half way: never counted, replaced now.
    with contextlib.suppress(FileNotFoundError):
        marker.unlink()
    for stale in parent.glob(f".{folder.name}.*"):
        _remove(stale)
    _remove(folder)

    fd, download_name = tempfile.mkstemp(prefix=f".{folder.name}.download-", dir=parent)
    os.close(fd)
    download = Path(download_name)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.partial-", dir=parent))
    try:
        _, actual, _ = download_to(
            archive_url,
            download,
            max_bytes=max_bytes,
            timeout=timeout,
            allow_loopback_http=allow_loopback_http,
            progress=progress,
        )
        if expected is not None and actual != expected:
            raise _Refused(
                f"sha256 mismatch: the registry says {expected}, the archive "
                f"{_text(archive_url)} has {actual}; nothing was unpacked"
            )
        _check_magic(download, kind)
        if kind == "raw":
            target = staging.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(download, target)
        elif kind == "zip":
            _unzip(download, staging, max_entries=max_entries, max_bytes=max_extracted_bytes)
        else:
            _untar(
                download,
                staging,
                kind,
                max_entries=max_entries,
                max_bytes=max_extracted_bytes,
            )
        _check_tree(staging)
        executable = _complete_cmd(staging, parts)
        if executable is None:
            raise _Refused(_cmd_missing(staging, parts, cmd))
        _make_executable(executable)
        os.replace(staging, folder)
        _write_marker(
            folder,
            {
                "archive": archive_url,
                "sha256": actual,
                "cmd": cmd,
                "verified": expected is not None,
            },
        )
    except BaseException:
        _remove(staging)
        raise
    finally:
        with contextlib.suppress(FileNotFoundError):
            download.unlink()
    result = _complete_cmd(folder, parts)
    if result is None:  # pragma: no cover - the folder was just verified
        raise _Refused("the installed folder changed while it was installed")
    return result


def _current(
    folder: Path, parts: tuple[str, ...], archive_url: str, expected: str | None
) -> Path | None:
    """``cmd`` of the complete install in ``folder`` when it matches the request, or None."""
    marker = _read_marker(folder)
    if marker is None or marker.get("archive") != archive_url:
        return None
    if expected is not None and marker.get("sha256") != expected:
        return None
    return _complete_cmd(folder, parts)


# -- names and paths --------------------------------------------------------------------------


def _text(value: str) -> str:
    """A value from the registry as shown in a message: quoted, control characters escaped."""
    return repr(value)


def _plain(value: str) -> str:
    """A version or platform as shown in a message: as is when tame, else as :func:`_text`."""
    return value if isinstance(value, str) and _SEGMENT.fullmatch(value) else _text(str(value))


def _check_names(agent_id: str, version: str, platform: str) -> None:
    for what, value in (("agent id", agent_id), ("version", version)):
        if (
            not isinstance(value, str)
            or not _SEGMENT.fullmatch(value)
            or value.endswith(".")
            or ".." in value
            or value.split(".")[0].upper() in _WINDOWS_RESERVED
        ):
            raise _Refused(f"the {what} {_text(str(value))} is not a valid folder name")
    if not isinstance(platform, str) or not _PLATFORM.fullmatch(platform):
        raise _Refused(f"the platform {_text(str(platform))} is not of the form os-arch")


def _cache_root(cache_dir: Path | str | None) -> Path:
    root = default_cache_dir() if cache_dir is None else Path(cache_dir).expanduser()
    return Path(os.path.realpath(root))


def _folder(root: Path, agent_id: str, version: str, platform: str) -> Path:
    return root / agent_id / version / platform


def _marker_path(folder: Path) -> Path:
    return folder.parent / f"{folder.name}.installed"


def _read_marker(folder: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(_marker_path(folder).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not folder.is_dir() or folder.is_symlink():
        return None
    return data


def _write_marker(folder: Path, data: dict[str, Any]) -> None:
    marker = _marker_path(folder)
    fd, name = tempfile.mkstemp(prefix=f".{folder.name}.marker-", dir=folder.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=2, sort_keys=True)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(name, marker)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise


def _missing_parents(folder: Path) -> list[Path]:
    """The folders above ``folder`` that do not exist yet, deepest first."""
    return [parent for parent in (folder.parent, folder.parent.parent) if not parent.exists()]


def _remove_empty(folders: list[Path]) -> None:
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _entry_parts(name: str, what: str = "archive entry") -> tuple[str, ...]:
    """The path components of an archive entry's name, refusing anything not inside."""
    shown = _text(name)
    if not name or "\x00" in name:
        raise _Refused(f"{what} {shown} has an empty or NUL-bearing name")
    if "\\" in name:
        raise _Refused(f"{what} {shown} contains a backslash")
    if name.startswith("/"):
        raise _Refused(f"{what} {shown} is an absolute path")
    if _DRIVE.match(name):
        raise _Refused(f"{what} {shown} has a drive letter")
    parts = tuple(p for p in name.split("/") if p not in ("", "."))
    if ".." in parts:
        raise _Refused(f"{what} {shown} goes outside the folder ('..')")
    return parts


def _cmd_parts(cmd: str) -> tuple[str, ...]:
    if not isinstance(cmd, str) or not cmd:
        raise _Refused("the cmd is empty")
    shown = _text(cmd)
    if "\\" in cmd:
        raise _Refused(f"the cmd {shown} contains a backslash")
    if cmd.startswith("/") or _DRIVE.match(cmd):
        raise _Refused(f"the cmd {shown} is an absolute path")
    parts = tuple(p for p in cmd.split("/") if p not in ("", "."))
    if ".." in parts:
        raise _Refused(f"the cmd {shown} goes outside the folder ('..')")
    if not parts or "\x00" in cmd:
        raise _Refused(f"the cmd {shown} names no file")
    return parts


def _inside(root: Path, path: str | os.PathLike[str]) -> bool:
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def _complete_cmd(folder: Path, parts: tuple[str, ...]) -> Path | None:
    """``folder/cmd`` when it is (or links to) a regular file inside ``folder``."""
    path = folder.joinpath(*parts)
    if not _inside(folder, path) or not os.path.isfile(path):
        return None
    return path


def _cmd_missing(staging: Path, parts: tuple[str, ...], cmd: str) -> str:
    path = staging.joinpath(*parts)
    if os.path.lexists(path) and not _inside(staging, path):
        return f"the cmd {_text(cmd)} links outside the folder"
    if os.path.isdir(path):
        return f"the cmd {_text(cmd)} is a folder in the archive, not a file"
    return f"the cmd {_text(cmd)} is not in the archive"


def _make_executable(path: Path) -> None:
    real = Path(os.path.realpath(path))
    mode = stat.S_IMODE(real.stat().st_mode)
    real.chmod(mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH | stat.S_IRUSR)


def _check_magic(path: Path, kind: ArchiveKind) -> None:
    if kind == "raw":
        return
    with open(path, "rb") as archive:
        head = archive.read(4)
    if not head.startswith(_MAGIC[kind]):
        raise _Refused(
            f"the archive is named .{kind} but is not {_MAGIC_NAME[kind]} (it starts with {head!r})"
        )


# -- unpacking ----------------------------------------------------------------------------------


_Kind = Literal["dir", "file", "link"]


class _Unpacker:
    """Writes checked entries into ``root``, tracking what each path is."""

    def __init__(self, root: Path, *, max_entries: int, max_bytes: int) -> None:
        self.root = root
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.entries = 0
        self.written = 0
        self.seen: dict[tuple[str, ...], _Kind] = {}
        self.links: list[tuple[str, Path]] = []

    @staticmethod
    def _key(parts: tuple[str, ...]) -> tuple[str, ...]:
        # Case- and normalisation-insensitive, as on macOS and Windows file systems.
        return tuple(unicodedata.normalize("NFC", p).casefold() for p in parts)

    def count(self) -> None:
        self.entries += 1
        if self.entries > self.max_entries:
            raise _Refused(f"the archive has more than {self.max_entries} entries")

    def too_big(self) -> _Refused:
        return _Refused(f"the archive unpacks to more than {self.max_bytes} bytes")

    def charge(self, size: int) -> None:
        if self.written + size > self.max_bytes:
            raise self.too_big()

    def place(self, name: str, parts: tuple[str, ...], kind: _Kind) -> Path:
        """Check ``parts`` may become a ``kind`` and create its parent folders."""
        key = self._key(parts)
        for depth in range(1, len(parts)):
            above = self.seen.get(key[:depth])
            shown_above = _text("/".join(parts[:depth]))
            if above == "link":
                raise _Refused(
                    f"archive entry {_text(name)} lies beneath the symlink {shown_above}"
                )
            if above == "file":
                raise _Refused(f"archive entry {_text(name)} lies beneath the file {shown_above}")
            if above is None:
                self.seen[key[:depth]] = "dir"
        existing = self.seen.get(key)
        if existing is not None and not (existing == "dir" and kind == "dir"):
            raise _Refused(f"archive entry {_text(name)} appears twice (or differs only in case)")
        self.seen[key] = kind
        path = self.root.joinpath(*parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def directory(self, name: str, parts: tuple[str, ...]) -> None:
        if not parts:
            return
        path = self.place(name, parts, "dir")
        path.mkdir(exist_ok=True)

    def file(self, name: str, parts: tuple[str, ...], source: IO[bytes], executable: bool) -> None:
        if not parts:
            raise _Refused(f"archive entry {_text(name)} is a file named like the folder")
        path = self.place(name, parts, "file")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        flags |= getattr(os, "O_BINARY", 0)
        fd = os.open(path, flags, 0o755 if executable else 0o644)
        with os.fdopen(fd, "wb") as out:
            while True:
                chunk = source.read(min(_COPY_CHUNK, self.max_bytes - self.written + 1))
                if not chunk:
                    break
                self.charge(len(chunk))
                self.written += len(chunk)
                out.write(chunk)

    def symlink(self, name: str, parts: tuple[str, ...], target: str) -> None:
        shown = _text(name)
        if not parts:
            raise _Refused(f"symlink {shown} is named like the folder")
        if not target or "\x00" in target:
            raise _Refused(f"symlink {shown} has an empty target")
        if "\\" in target:
            raise _Refused(f"symlink {shown} has a backslash in its target {_text(target)}")
        if target.startswith("/") or _DRIVE.match(target):
            raise _Refused(f"symlink {shown} points to an absolute path ({_text(target)})")
        resolved = PurePosixPath(*parts[:-1], target).parts
        depth = 0
        for part in resolved:
            depth += -1 if part == ".." else 0 if part == "." else 1
            if depth < 0:
                raise _Refused(f"symlink {shown} points outside the folder ({_text(target)})")
        path = self.place(name, parts, "link")
        os.symlink(target, path)
        self.links.append((name, path))

    def hardlink(self, name: str, parts: tuple[str, ...], target: str) -> None:
        shown = _text(name)
        if not target or "\\" in target or target.startswith("/") or _DRIVE.match(target):
            raise _Refused(f"hardlink {shown} points to an absolute path ({_text(target)})")
        target_parts = tuple(p for p in target.split("/") if p not in ("", "."))
        if ".." in target_parts:
            raise _Refused(f"hardlink {shown} points outside the folder ({_text(target)})")
        if self.seen.get(self._key(target_parts)) != "file":
            raise _Refused(
                f"hardlink {shown} points to {_text(target)}, which is not a file unpacked "
                "before it"
            )
        source = self.root.joinpath(*target_parts)
        executable = bool(os.stat(source, follow_symlinks=False).st_mode & stat.S_IXUSR)
        with open(source, "rb") as data:
            self.file(name, parts, data, executable)

    def check_links(self) -> None:
        """Every symlink, resolved on disk through the others, stays inside the folder."""
        for name, path in self.links:
            if not _inside(self.root, path):
                target = os.readlink(path)
                raise _Refused(f"symlink {_text(name)} points outside the folder ({_text(target)})")


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class _Capped:
    """A read-only stream that refuses to yield more than ``limit`` bytes."""

    def __init__(self, stream: _Readable, limit: int, refusal: _Refused) -> None:
        self._stream = stream
        self._left = limit
        self._refusal = refusal

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            size = self._left + 1
        data = self._stream.read(min(size, self._left + 1))
        self._left -= len(data)
        if self._left < 0:
            raise self._refusal
        return data


def _untar(
    archive: Path,
    root: Path,
    kind: ArchiveKind,
    *,
    max_entries: int,
    max_bytes: int,
) -> None:
    unpacker = _Unpacker(root, max_entries=max_entries, max_bytes=max_bytes)
    # The decompressed stream is capped too (the contents, and headers and padding at most
    # 64 KiB an entry): a header that claims gigabytes is refused before it is all read.
    stream_cap = max_bytes + (max_entries + 2) * 65536
    with open(archive, "rb") as raw:
        decompressed: gzip.GzipFile | bz2.BZ2File = (
            gzip.GzipFile(fileobj=raw, mode="rb")
            if kind == "tar.gz"
            else bz2.BZ2File(raw, mode="rb")
        )
        with decompressed:
            capped = cast(IO[bytes], _Capped(decompressed, stream_cap, unpacker.too_big()))
            try:
                with tarfile.open(fileobj=capped, mode="r|") as tar:
                    for member in _members(tar, unpacker):
                        _untar_member(tar, member, unpacker)
            except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
                raise _Refused(f"the archive is not a valid {kind} archive ({exc})") from None
            except OSError as exc:
                if exc.errno is not None:  # the file system's, not the decompressor's
                    raise
                raise _Refused(f"the archive is not a valid {kind} archive ({exc})") from None
    unpacker.check_links()


def _members(tar: tarfile.TarFile, unpacker: _Unpacker) -> Iterator[tarfile.TarInfo]:
    while True:
        member = tar.next()
        if member is None:
            return
        unpacker.count()
        yield member


def _untar_member(tar: tarfile.TarFile, member: tarfile.TarInfo, unpacker: _Unpacker) -> None:
    name = member.name
    if member.isdir():
        unpacker.directory(name, _entry_parts(name))
        return
    if member.issym():
        unpacker.symlink(name, _entry_parts(name, "symlink"), member.linkname)
        return
    if member.islnk():
        unpacker.hardlink(name, _entry_parts(name, "hardlink"), member.linkname)
        return
    if member.ischr() or member.isblk():
        raise _Refused(f"archive entry {_text(name)} is a device file")
    if member.isfifo():
        raise _Refused(f"archive entry {_text(name)} is a FIFO")
    if not member.isreg():
        raise _Refused(f"archive entry {_text(name)} has an unsupported type {member.type!r}")
    parts = _entry_parts(name)
    unpacker.charge(member.size)
    data = tar.extractfile(member)
    if data is None:  # pragma: no cover - a regular member always has data
        raise _Refused(f"archive entry {_text(name)} has no data")
    with data:
        unpacker.file(name, parts, data, bool(member.mode & stat.S_IXUSR))


def _unzip(archive: Path, root: Path, *, max_entries: int, max_bytes: int) -> None:
    unpacker = _Unpacker(root, max_entries=max_entries, max_bytes=max_bytes)
    try:
        with zipfile.ZipFile(archive) as zf:
            infos = zf.infolist()
            if len(infos) > max_entries:
                raise _Refused(f"the archive has more than {max_entries} entries")
            if sum(info.file_size for info in infos) > max_bytes:
                raise unpacker.too_big()
            for info in infos:
                unpacker.count()
                _unzip_member(zf, info, unpacker)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError) as exc:
        raise _Refused(f"the archive is not a valid zip archive ({exc})") from None
    except RuntimeError as exc:  # an encrypted entry
        raise _Refused(f"the archive cannot be unpacked ({exc})") from None
    unpacker.check_links()


def _unzip_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, unpacker: _Unpacker) -> None:
    name = info.orig_filename
    if name != info.filename:  # zipfile cut the name at a NUL or turned separators around
        _entry_parts(name)
        name = info.filename
    mode = info.external_attr >> 16 if info.create_system == 3 else 0
    file_type = stat.S_IFMT(mode)
    if file_type == stat.S_IFLNK:
        parts = _entry_parts(name, "symlink")
        with zf.open(info) as data:
            raw = data.read(_MAX_LINK_TARGET + 1)
        if len(raw) > _MAX_LINK_TARGET:
            raise _Refused(f"symlink {_text(name)} has a target over {_MAX_LINK_TARGET} bytes")
        try:
            target = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise _Refused(f"symlink {_text(name)} has a target that is not UTF-8") from None
        unpacker.symlink(name, parts, target)
        return
    if file_type in (stat.S_IFCHR, stat.S_IFBLK):
        raise _Refused(f"archive entry {_text(name)} is a device file")
    if file_type == stat.S_IFIFO:
        raise _Refused(f"archive entry {_text(name)} is a FIFO")
    if file_type == stat.S_IFSOCK:
        raise _Refused(f"archive entry {_text(name)} is a socket")
    if info.is_dir() or file_type == stat.S_IFDIR:
        unpacker.directory(name, _entry_parts(name))
        return
    parts = _entry_parts(name)
    unpacker.charge(info.file_size)
    with zf.open(info) as data:
        unpacker.file(name, parts, data, bool(mode & stat.S_IXUSR))


def _check_tree(root: Path) -> None:
    """What was unpacked holds regular files, folders and links that stay inside only."""
    for folder, dirnames, filenames in os.walk(root, followlinks=False):
        for entry in (*dirnames, *filenames):
            path = Path(folder, entry)
            info = os.lstat(path)
            shown = _text(path.relative_to(root).as_posix())
            if stat.S_ISLNK(info.st_mode):
                if not _inside(root, path):
                    target = _text(os.readlink(path))
                    raise _Refused(f"symlink {shown} points outside the folder ({target})")
            elif not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
                raise _Refused(f"archive entry {shown} is not a regular file or folder")
