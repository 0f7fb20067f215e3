"""A downloaded archive unpacked into a folder, every entry checked before it is written.

Everything from the network is hostile. The archive's bytes must be of the kind its
name says (:func:`check_magic`). Each entry is checked before it is written: no absolute
path, no ``..``, no drive letter or backslash, no link pointing outside the folder or to
an absolute path, no entry beneath a symbolic link or a file, no entry twice (or differing
only in case), no device file, FIFO or socket; the number of entries and the unpacked size
are capped (zip and tar bombs), the decompressed stream too. What was unpacked is checked
again on the disk (:func:`check_tree`). What is refused raises :class:`Refused`, its
message naming the entry and the reason.

The installer (:mod:`.install`) downloads the archive, unpacks it with :func:`unpack` into
a folder of its own, and puts that folder in place only once it passed.
"""

from __future__ import annotations

import bz2
import gzip
import os
import re
import stat
import tarfile
import unicodedata
import urllib.parse
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import IO, Literal, Protocol, cast

#: Installer formats, refused: acp-adapters does not run installers.
INSTALLER_SUFFIXES = (".dmg", ".pkg", ".deb", ".rpm", ".msi")

ArchiveKind = Literal["zip", "tar.gz", "tar.bz2", "raw"]

#: A drive letter (``C:``), refused at the start of a name: the name would be absolute on
#: Windows.
DRIVE_LETTER = re.compile(r"[A-Za-z]:")
_MAGIC: dict[str, tuple[bytes, ...]] = {
    "zip": (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08"),
    "tar.gz": (b"\x1f\x8b",),
    "tar.bz2": (b"BZh",),
}
_MAGIC_NAME = {"zip": "a zip file", "tar.gz": "gzip data", "tar.bz2": "bzip2 data"}
_MAX_LINK_TARGET = 4096
_COPY_CHUNK = 1024 * 1024


class Refused(Exception):
    """An archive, one of its entries, or a cmd refused: the installer turns it into an
    :class:`~acp_adapters.registry.install.InstallError`."""


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


def quoted(value: str) -> str:
    """A value from the registry as shown in a message: quoted, control characters escaped."""
    return repr(value)


def inside(root: Path, path: str | os.PathLike[str]) -> bool:
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def check_magic(path: Path, kind: ArchiveKind) -> None:
    if kind == "raw":
        return
    with open(path, "rb") as archive:
        head = archive.read(4)
    if not head.startswith(_MAGIC[kind]):
        raise Refused(
            f"the archive is named .{kind} but is not {_MAGIC_NAME[kind]} (it starts with {head!r})"
        )


def unpack(
    archive: Path, root: Path, kind: ArchiveKind, *, max_entries: int, max_bytes: int
) -> None:
    """Unpack the zip or tar ``archive`` into the folder ``root``, every entry checked, at most
    ``max_entries`` entries and ``max_bytes`` bytes; :class:`Refused` says what was not."""
    if kind == "zip":
        _unzip(archive, root, max_entries=max_entries, max_bytes=max_bytes)
    else:
        _untar(archive, root, kind, max_entries=max_entries, max_bytes=max_bytes)


def _entry_parts(name: str, what: str = "archive entry") -> tuple[str, ...]:
    """The path components of an archive entry's name, refusing anything not inside."""
    shown = quoted(name)
    if not name or "\x00" in name:
        raise Refused(f"{what} {shown} has an empty or NUL-bearing name")
    if "\\" in name:
        raise Refused(f"{what} {shown} contains a backslash")
    if name.startswith("/"):
        raise Refused(f"{what} {shown} is an absolute path")
    if DRIVE_LETTER.match(name):
        raise Refused(f"{what} {shown} has a drive letter")
    parts = tuple(p for p in name.split("/") if p not in ("", "."))
    if ".." in parts:
        raise Refused(f"{what} {shown} goes outside the folder ('..')")
    return parts


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
            raise Refused(f"the archive has more than {self.max_entries} entries")

    def too_big(self) -> Refused:
        return Refused(f"the archive unpacks to more than {self.max_bytes} bytes")

    def charge(self, size: int) -> None:
        if self.written + size > self.max_bytes:
            raise self.too_big()

    def place(self, name: str, parts: tuple[str, ...], kind: _Kind) -> Path:
        """Check ``parts`` may become a ``kind`` and create its parent folders."""
        key = self._key(parts)
        for depth in range(1, len(parts)):
            above = self.seen.get(key[:depth])
            shown_above = quoted("/".join(parts[:depth]))
            if above == "link":
                raise Refused(
                    f"archive entry {quoted(name)} lies beneath the symlink {shown_above}"
                )
            if above == "file":
                raise Refused(f"archive entry {quoted(name)} lies beneath the file {shown_above}")
            if above is None:
                self.seen[key[:depth]] = "dir"
        existing = self.seen.get(key)
        if existing is not None and not (existing == "dir" and kind == "dir"):
            raise Refused(f"archive entry {quoted(name)} appears twice (or differs only in case)")
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
            raise Refused(f"archive entry {quoted(name)} is a file named like the folder")
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
        shown = quoted(name)
        if not parts:
            raise Refused(f"symlink {shown} is named like the folder")
        if not target or "\x00" in target:
            raise Refused(f"symlink {shown} has an empty target")
        if "\\" in target:
            raise Refused(f"symlink {shown} has a backslash in its target {quoted(target)}")
        if target.startswith("/") or DRIVE_LETTER.match(target):
            raise Refused(f"symlink {shown} points to an absolute path ({quoted(target)})")
        resolved = PurePosixPath(*parts[:-1], target).parts
        depth = 0
        for part in resolved:
            depth += -1 if part == ".." else 0 if part == "." else 1
            if depth < 0:
                raise Refused(f"symlink {shown} points outside the folder ({quoted(target)})")
        path = self.place(name, parts, "link")
        os.symlink(target, path)
        self.links.append((name, path))

    def hardlink(self, name: str, parts: tuple[str, ...], target: str) -> None:
        shown = quoted(name)
        if not target or "\\" in target or target.startswith("/") or DRIVE_LETTER.match(target):
            raise Refused(f"hardlink {shown} points to an absolute path ({quoted(target)})")
        target_parts = tuple(p for p in target.split("/") if p not in ("", "."))
        if ".." in target_parts:
            raise Refused(f"hardlink {shown} points outside the folder ({quoted(target)})")
        if self.seen.get(self._key(target_parts)) != "file":
            raise Refused(
                f"hardlink {shown} points to {quoted(target)}, which is not a file unpacked "
                "before it"
            )
        source = self.root.joinpath(*target_parts)
        executable = bool(os.stat(source, follow_symlinks=False).st_mode & stat.S_IXUSR)
        with open(source, "rb") as data:
            self.file(name, parts, data, executable)

    def check_links(self) -> None:
        """Every symlink, resolved on disk through the others, stays inside the folder."""
        for name, path in self.links:
            if not inside(self.root, path):
                target = os.readlink(path)
                raise Refused(
                    f"symlink {quoted(name)} points outside the folder ({quoted(target)})"
                )


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class _Capped:
    """A read-only stream that refuses to yield more than ``limit`` bytes."""

    def __init__(self, stream: _Readable, limit: int, refusal: Refused) -> None:
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
                raise Refused(f"the archive is not a valid {kind} archive ({exc})") from None
            except OSError as exc:
                if exc.errno is not None:  # the file system's, not the decompressor's
                    raise
                raise Refused(f"the archive is not a valid {kind} archive ({exc})") from None
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
        raise Refused(f"archive entry {quoted(name)} is a device file")
    if member.isfifo():
        raise Refused(f"archive entry {quoted(name)} is a FIFO")
    if not member.isreg():
        raise Refused(f"archive entry {quoted(name)} has an unsupported type {member.type!r}")
    parts = _entry_parts(name)
    unpacker.charge(member.size)
    data = tar.extractfile(member)
    if data is None:  # pragma: no cover - a regular member always has data
        raise Refused(f"archive entry {quoted(name)} has no data")
    with data:
        unpacker.file(name, parts, data, bool(member.mode & stat.S_IXUSR))


def _unzip(archive: Path, root: Path, *, max_entries: int, max_bytes: int) -> None:
    unpacker = _Unpacker(root, max_entries=max_entries, max_bytes=max_bytes)
    try:
        with zipfile.ZipFile(archive) as zf:
            infos = zf.infolist()
            if len(infos) > max_entries:
                raise Refused(f"the archive has more than {max_entries} entries")
            if sum(info.file_size for info in infos) > max_bytes:
                raise unpacker.too_big()
            for info in infos:
                unpacker.count()
                _unzip_member(zf, info, unpacker)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError) as exc:
        raise Refused(f"the archive is not a valid zip archive ({exc})") from None
    except RuntimeError as exc:  # an encrypted entry
        raise Refused(f"the archive cannot be unpacked ({exc})") from None
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
            raise Refused(f"symlink {quoted(name)} has a target over {_MAX_LINK_TARGET} bytes")
        try:
            target = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused(f"symlink {quoted(name)} has a target that is not UTF-8") from None
        unpacker.symlink(name, parts, target)
        return
    if file_type in (stat.S_IFCHR, stat.S_IFBLK):
        raise Refused(f"archive entry {quoted(name)} is a device file")
    if file_type == stat.S_IFIFO:
        raise Refused(f"archive entry {quoted(name)} is a FIFO")
    if file_type == stat.S_IFSOCK:
        raise Refused(f"archive entry {quoted(name)} is a socket")
    if info.is_dir() or file_type == stat.S_IFDIR:
        unpacker.directory(name, _entry_parts(name))
        return
    parts = _entry_parts(name)
    unpacker.charge(info.file_size)
    with zf.open(info) as data:
        unpacker.file(name, parts, data, bool(mode & stat.S_IXUSR))


def check_tree(root: Path) -> None:
    """What was unpacked holds regular files, folders and links that stay inside only."""
    for folder, dirnames, filenames in os.walk(root, followlinks=False):
        for entry in (*dirnames, *filenames):
            path = Path(folder, entry)
            info = os.lstat(path)
            shown = quoted(path.relative_to(root).as_posix())
            if stat.S_ISLNK(info.st_mode):
                if not inside(root, path):
                    target = quoted(os.readlink(path))
                    raise Refused(f"symlink {shown} points outside the folder ({target})")
            elif not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
                raise Refused(f"archive entry {shown} is not a regular file or folder")
