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
is checked before anything is unpacked; the archive is unpacked with every entry checked
(:mod:`.archives`). ``cmd`` must name a file inside the folder, present once unpacked; it
is made executable.

This module takes plain arguments (URL, sha256, ``cmd``, agent id, version, platform) and
imports no module of the registry package but :mod:`.archives` (and :mod:`.download`, when
it installs), so the registry's modules can import it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import platformdirs

from acp_adapters.errors import AcpAdaptersError

from .archives import (
    DRIVE_LETTER,
    INSTALLER_SUFFIXES,
    ArchiveKind,
    Refused,
    archive_kind,
    check_magic,
    check_tree,
    inside,
    quoted,
    unpack,
)

if TYPE_CHECKING:
    from .download import Progress

# The lock and the downloader are imported by the install itself: looking an install up
# (:func:`installed_binary`, which ``acp-adapters providers`` does) loads neither.

# ``archive_kind`` and ``INSTALLER_SUFFIXES`` are the archives' (:mod:`.archives`), still
# importable from here, where they were first.
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

_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,127}")
_PLATFORM = re.compile(r"[a-z0-9_]{1,32}-[a-z0-9_]{1,32}")
_SHA256 = re.compile(r"[0-9a-fA-F]{64}")
_WINDOWS_RESERVED = frozenset(
    ["CON", "PRN", "AUX", "NUL"] + [f"{p}{n}" for p in ("COM", "LPT") for n in range(1, 10)]
)


class InstallError(AcpAdaptersError):
    """Raised by :func:`install_binary` when an agent's binary cannot be installed.

    The message names the agent, its version and platform, and the reason (the download's
    failure, a sha256 mismatch, a refused archive entry, a missing ``cmd``...). ``agent_id``
    and ``reason`` hold those parts alone.
    """

    def __init__(self, agent_id: str, version: str, platform: str, reason: str) -> None:
        super().__init__(
            f"cannot install agent {quoted(agent_id)} {_plain(version)} ({_plain(platform)}): "
            f"{reason}"
        )
        self.agent_id = agent_id
        self.version = version
        self.platform = platform
        self.reason = reason


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
    except Refused:
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
    except (Refused, ValueError) as exc:
        raise refuse(str(exc)) from None
    if sha256 is not None and not _SHA256.fullmatch(sha256):
        raise refuse(f"the sha256 {quoted(sha256)} is not 64 hexadecimal digits")
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
    except Refused as exc:
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
            raise Refused(
                f"sha256 mismatch: the registry says {expected}, the archive "
                f"{quoted(archive_url)} has {actual}; nothing was unpacked"
            )
        check_magic(download, kind)
        if kind == "raw":
            target = staging.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(download, target)
        else:
            unpack(download, staging, kind, max_entries=max_entries, max_bytes=max_extracted_bytes)
        check_tree(staging)
        executable = _complete_cmd(staging, parts)
        if executable is None:
            raise Refused(_cmd_missing(staging, parts, cmd))
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
        raise Refused("the installed folder changed while it was installed")
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


def _plain(value: str) -> str:
    """A version or platform as shown in a message: as is when tame, else as :func:`quoted`."""
    return value if isinstance(value, str) and _SEGMENT.fullmatch(value) else quoted(str(value))


def _check_names(agent_id: str, version: str, platform: str) -> None:
    for what, value in (("agent id", agent_id), ("version", version)):
        if (
            not isinstance(value, str)
            or not _SEGMENT.fullmatch(value)
            or value.endswith(".")
            or ".." in value
            or value.split(".")[0].upper() in _WINDOWS_RESERVED
        ):
            raise Refused(f"the {what} {quoted(str(value))} is not a valid folder name")
    if not isinstance(platform, str) or not _PLATFORM.fullmatch(platform):
        raise Refused(f"the platform {quoted(str(platform))} is not of the form os-arch")


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


def _cmd_parts(cmd: str) -> tuple[str, ...]:
    if not isinstance(cmd, str) or not cmd:
        raise Refused("the cmd is empty")
    shown = quoted(cmd)
    if "\\" in cmd:
        raise Refused(f"the cmd {shown} contains a backslash")
    if cmd.startswith("/") or DRIVE_LETTER.match(cmd):
        raise Refused(f"the cmd {shown} is an absolute path")
    parts = tuple(p for p in cmd.split("/") if p not in ("", "."))
    if ".." in parts:
        raise Refused(f"the cmd {shown} goes outside the folder ('..')")
    if not parts or "\x00" in cmd:
        raise Refused(f"the cmd {shown} names no file")
    return parts


def _complete_cmd(folder: Path, parts: tuple[str, ...]) -> Path | None:
    """``folder/cmd`` when it is (or links to) a regular file inside ``folder``."""
    path = folder.joinpath(*parts)
    if not inside(folder, path) or not os.path.isfile(path):
        return None
    return path


def _cmd_missing(staging: Path, parts: tuple[str, ...], cmd: str) -> str:
    path = staging.joinpath(*parts)
    if os.path.lexists(path) and not inside(staging, path):
        return f"the cmd {quoted(cmd)} links outside the folder"
    if os.path.isdir(path):
        return f"the cmd {quoted(cmd)} is a folder in the archive, not a file"
    return f"the cmd {quoted(cmd)} is not in the archive"


def _make_executable(path: Path) -> None:
    real = Path(os.path.realpath(path))
    mode = stat.S_IMODE(real.stat().st_mode)
    real.chmod(mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH | stat.S_IRUSR)
