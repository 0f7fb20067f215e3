"""Archives for the install tests, good and hostile, built in memory.

An archive is a list of entries (:class:`File`, :class:`Dir`, :class:`Symlink`,
:class:`Hardlink`, :class:`Fifo`, :class:`Device`) packed by :func:`tar_gz`,
:func:`tar_bz2` or :func:`zip_archive`, the names written exactly as given (``../x`` and
``/etc/x`` included: nothing is cleaned here).
"""

from __future__ import annotations

import hashlib
import io
import stat
import sys
import tarfile
import warnings
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "AGENT_OUTPUT",
    "AGENT_SCRIPT",
    "Device",
    "Dir",
    "Entry",
    "Fifo",
    "File",
    "Hardlink",
    "Symlink",
    "agent_entries",
    "sha256_hex",
    "tar_bz2",
    "tar_gz",
    "zip_archive",
]

#: What the small agent script prints when run.
AGENT_OUTPUT = "hello from the installed agent"
#: A small executable script (run by this Python through its shebang line).
AGENT_SCRIPT = f"#!{sys.executable}\nprint({AGENT_OUTPUT!r})\n".encode()


@dataclass(frozen=True)
class File:
    name: str
    data: bytes = b""
    mode: int = 0o644


@dataclass(frozen=True)
class Dir:
    name: str
    mode: int = 0o755


@dataclass(frozen=True)
class Symlink:
    name: str
    target: str


@dataclass(frozen=True)
class Hardlink:
    name: str
    target: str


@dataclass(frozen=True)
class Fifo:
    name: str


@dataclass(frozen=True)
class Device:
    name: str
    block: bool = False


Entry = File | Dir | Symlink | Hardlink | Fifo | Device


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def agent_entries(cmd: str = "bin/agent", *, executable: bool = True) -> list[Entry]:
    """A good archive's entries: a folder, the agent script at ``cmd``, a README."""
    entries: list[Entry] = []
    if "/" in cmd:
        entries.append(Dir(cmd.rsplit("/", 1)[0]))
    entries.append(File(cmd, AGENT_SCRIPT, 0o755 if executable else 0o644))
    entries.append(File("README.txt", b"an agent\n"))
    return entries


def _tar(entries: Sequence[Entry], mode: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode, format=tarfile.PAX_FORMAT) as tar:  # type: ignore[call-overload]
        for entry in entries:
            info = tarfile.TarInfo(entry.name)
            data: bytes | None = None
            if isinstance(entry, File):
                info.size, info.mode, data = len(entry.data), entry.mode, entry.data
            elif isinstance(entry, Dir):
                info.type, info.mode = tarfile.DIRTYPE, entry.mode
            elif isinstance(entry, Symlink):
                info.type, info.linkname, info.mode = tarfile.SYMTYPE, entry.target, 0o777
            elif isinstance(entry, Hardlink):
                info.type, info.linkname = tarfile.LNKTYPE, entry.target
            elif isinstance(entry, Fifo):
                info.type = tarfile.FIFOTYPE
            else:
                info.type = tarfile.BLKTYPE if entry.block else tarfile.CHRTYPE
                info.devmajor, info.devminor = 1, 3
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def tar_gz(entries: Sequence[Entry]) -> bytes:
    """The entries as a gzip-compressed tar archive."""
    return _tar(entries, "w:gz")


def tar_bz2(entries: Sequence[Entry]) -> bytes:
    """The entries as a bzip2-compressed tar archive."""
    return _tar(entries, "w:bz2")


def zip_archive(entries: Sequence[Entry]) -> bytes:
    """The entries as a zip archive (unix modes in the external attributes; links too)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for entry in entries:
            name = entry.name
            if isinstance(entry, Dir) and not name.endswith("/"):
                name += "/"
            info = zipfile.ZipInfo(name)
            info.create_system = 3
            info.compress_type = zipfile.ZIP_DEFLATED
            data = b""
            if isinstance(entry, File):
                info.external_attr = (stat.S_IFREG | entry.mode) << 16
                data = entry.data
            elif isinstance(entry, Dir):
                info.external_attr = ((stat.S_IFDIR | entry.mode) << 16) | 0x10
            elif isinstance(entry, Symlink):
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
                data = entry.target.encode()
            elif isinstance(entry, Fifo):
                info.external_attr = (stat.S_IFIFO | 0o644) << 16
            elif isinstance(entry, Device):
                kind = stat.S_IFBLK if entry.block else stat.S_IFCHR
                info.external_attr = (kind | 0o644) << 16
            else:
                raise ValueError("zip archives have no hard links")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a duplicate name, on purpose
                archive.writestr(info, data)
    return buffer.getvalue()
