"""The session's folders, and the file-system requests an agent may make in them.

Nothing an agent asks may read or write outside the session's cwd and its
additional directories. Every path is resolved to its real path first (``..``
and symlinks followed), and refused unless the result is inside one of those
folders; a new file is judged by its folder's real path. Writes are atomic: the
content goes to a temporary file beside the target, which then replaces it.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path
from typing import Literal

from ..transport import RpcError

#: JSON-RPC errors the fs methods answer with.
RESOURCE_NOT_FOUND = -32002
INVALID_PARAMS = -32602
FORBIDDEN = -32000

MissingFileRead = Literal["error", "empty"]

#: The largest file ``fs/read_text_file`` reads (bytes): its text goes out in one message.
READ_LIMIT = 32 * 1024 * 1024


class NotRegularFileError(OSError):
    """The path is a FIFO, a device or a socket: not a file to read."""


class FileTooLargeError(OSError):
    """The file is larger than the read allows."""

    def __init__(self, size: int) -> None:
        super().__init__(f"{size} bytes")
        self.size = size


def read_regular_text(path: str | os.PathLike[str], limit: int) -> str:
    r"""The UTF-8 text of a regular file of at most ``limit`` bytes, line ends as they are.

    Opened without blocking: a path an agent names may be a FIFO or a device, and
    the session reads in its event loop.

    :raises FileNotFoundError, IsADirectoryError, NotRegularFileError, FileTooLargeError:
        as they say; other ``OSError``\ s, ``UnicodeDecodeError`` (not UTF-8) and
        ``ValueError`` (a NUL in the path) as they come.
    """
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        facts = os.fstat(descriptor)
        if stat.S_ISDIR(facts.st_mode):
            raise IsADirectoryError(os.fspath(path))
        if not stat.S_ISREG(facts.st_mode):
            raise NotRegularFileError(os.fspath(path))
        if facts.st_size > limit:
            raise FileTooLargeError(facts.st_size)
        with open(descriptor, encoding="utf-8", newline="", closefd=False) as handle:
            return handle.read(limit + 1)  # a file that grew since it was measured is cut
    finally:
        os.close(descriptor)


class Workspace:
    """The folders a session may touch."""

    def __init__(self, cwd: str | os.PathLike[str], additional: tuple[str, ...] = ()) -> None:
        self.cwd = Path(os.path.realpath(cwd))
        self.roots = (self.cwd, *(Path(os.path.realpath(p)) for p in additional))

    def contains(self, path: str | os.PathLike[str]) -> bool:
        real = Path(os.path.realpath(path))
        return any(real == root or root in real.parents for root in self.roots)

    def resolve(self, path: object) -> Path:
        """The real path of ``path`` if it is inside the workspace; else an RPC error."""
        if not isinstance(path, str) or not path or "\x00" in path:
            raise RpcError(INVALID_PARAMS, "path must be a non-empty string")
        try:
            path.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: no file system name holds it
            raise RpcError(INVALID_PARAMS, "path is not valid Unicode text") from None
        candidate = Path(path)
        if not candidate.is_absolute():
            candidate = self.cwd / candidate
        real = Path(os.path.realpath(candidate))
        if not any(real == root or root in real.parents for root in self.roots):
            raise RpcError(FORBIDDEN, f"{path} is outside the session's folders")
        return real

    def read_text(
        self,
        path: object,
        *,
        line: object = None,
        limit: object = None,
        missing: MissingFileRead = "error",
    ) -> str:
        """The file's text, from 1-based ``line`` and at most ``limit`` lines when given."""
        real = self.resolve(path)
        for name, value in (("line", line), ("limit", limit)):
            bad = isinstance(value, bool) or not isinstance(value, int) or value < 0
            if value is not None and bad:
                raise RpcError(INVALID_PARAMS, f"{name} must be a non-negative integer")
        try:
            text = read_regular_text(real, READ_LIMIT)
        except FileNotFoundError:
            if missing == "empty":
                return ""
            raise RpcError(
                RESOURCE_NOT_FOUND, f"Resource not found: {path}", {"uri": path}
            ) from None
        except IsADirectoryError:
            raise RpcError(INVALID_PARAMS, f"{path} is a directory") from None
        except NotRegularFileError:
            raise RpcError(INVALID_PARAMS, f"{path} is not a regular file") from None
        except FileTooLargeError as error:
            raise RpcError(
                INVALID_PARAMS,
                f"{path} is too large to read ({error.size} bytes; the limit is {READ_LIMIT})",
            ) from None
        except UnicodeDecodeError:
            raise RpcError(INVALID_PARAMS, f"{path} is not UTF-8 text") from None
        except OSError as error:
            raise RpcError(INVALID_PARAMS, f"cannot read {path}: {error.strerror}") from None
        if line is None and limit is None:
            return text
        # Lines end at "\n" only (a "\r" or U+2028 stays inside its line).
        parts = text.split("\n")
        lines = [piece + "\n" for piece in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
        start = max((line if isinstance(line, int) else 1) - 1, 0)
        end = start + limit if isinstance(limit, int) else None
        return "".join(lines[start:end])

    def write_text(self, path: object, content: object) -> Path:
        """Write atomically: a temporary file beside the target, then an atomic replace."""
        if not isinstance(content, str):
            raise RpcError(INVALID_PARAMS, "content must be a string")
        real = self.resolve(path)
        if real.is_dir():
            raise RpcError(INVALID_PARAMS, f"{path} is a directory")
        parent = real.parent
        if not parent.exists():
            # New folders only inside the workspace (resolve() judged their real path).
            parent.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(prefix=f".{real.name}.", dir=parent)
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as handle:
                handle.write(content)
            if real.exists():
                os.chmod(temporary, real.stat().st_mode & 0o7777)
            os.replace(temporary, real)
        except BaseException as error:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            if isinstance(error, UnicodeEncodeError):  # a lone surrogate: no UTF-8 holds it
                raise RpcError(INVALID_PARAMS, "content is not valid Unicode text") from None
            raise
        return real
