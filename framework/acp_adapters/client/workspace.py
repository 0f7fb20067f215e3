"""The session's folders, and the file-system requests an agent may make in them.

:class:`Workspace` serves the agent's ``fs/read_text_file`` and ``fs/write_text_file``
(:meth:`Workspace.read_text`, :meth:`Workspace.write_text`) and the disk reads around an
edit (:meth:`Workspace.read_confined`, :meth:`Workspace.read_known`), every one of them
through the confined operations of :mod:`acp_adapters.workspace.confined`: nothing it reads
or writes is outside the session's cwd and its additional directories (its *roots*), even
while the agent changes the tree under the request. Symlinks inside the roots that lead
inside them are followed, relative or absolute; ``..`` works as long as it stays inside;
anything that leads out is refused (-32000 ``outside the session's folders`` for the fs
requests, ``None`` for :meth:`Workspace.read_confined`). A FIFO, a device or a socket is
refused without being opened for reading.

:meth:`Workspace.resolve` and :meth:`Workspace.contains` judge a path by its real path at
the time of the call, which is right for judging and for naming a terminal's cwd; a caller
that later opens the returned name races the agent.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from ..transport import RpcError
from ..workspace.confined import (
    NAME_MAX,
    ChangedError,
    Expected,
    FileTooLargeError,
    Identity,
    NotRegularFileError,
    OutsideError,
    Roots,
)

#: JSON-RPC errors the fs methods answer with.
RESOURCE_NOT_FOUND = -32002
INVALID_PARAMS = -32602
FORBIDDEN = -32000

MissingFileRead = Literal["error", "empty"]

#: The largest file ``fs/read_text_file`` reads (bytes): its text goes out in one message.
READ_LIMIT = 32 * 1024 * 1024


def _checked_path(path: object) -> str:
    if not isinstance(path, str) or not path or "\x00" in path:
        raise RpcError(INVALID_PARAMS, "path must be a non-empty string")
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no file system name holds it
        raise RpcError(INVALID_PARAMS, "path is not valid Unicode text") from None
    return path


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


class Workspace(Roots):
    """The folders a session may touch, and the confined reads and writes in them.

    The fs requests use :meth:`read_text` and :meth:`write_text`. The disk reads around an
    edit use :meth:`read_confined` (``str | None``: ``None`` for a path that is missing, not a
    regular UTF-8 file within the limit, or outside). :meth:`resolve` and :meth:`contains`
    judge a path by its real path now (a terminal's cwd; a quick filter); never open what they
    judged by name. The roots' descriptors are closed by :meth:`close`, or when the workspace
    is garbage.
    """

    def resolve(self, path: object) -> Path:
        """The real path of ``path`` if it is inside the workspace; else an RPC error.

        For judging and naming (a terminal's cwd): the path is placed as the opens place it
        (an absolute path lexically under a root) and its real path, now, judged. Do not open
        the result by name: the fs requests open through :meth:`read_text`, :meth:`write_text`
        and :meth:`read_confined`, which do not race the agent.
        """
        checked = _checked_path(path)
        real = Roots.resolve(self, checked)
        if real is None:
            raise RpcError(FORBIDDEN, f"{checked} is outside the session's folders")
        return real

    def _text(self, path: str, limit: int) -> str:
        return self.read_bytes(path, limit).decode("utf-8")

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
            return self._text(path, limit)
        except (OutsideError, OSError, ValueError):  # ValueError: no file name holds it
            return None

    def read_known(self, path: object, limit: int) -> tuple[bool, str | None]:
        """What the disk says of ``path`` for a true patch: ``(True, text)``, ``(True, None)``
        when no such file exists, ``(False, None)`` when a file is there but cannot be
        read as text here (too large, not UTF-8, not a regular file, outside, unreadable).

        Read as :meth:`read_confined` reads, without racing the agent.
        """
        if not isinstance(path, str) or not path or "\x00" in path:
            return False, None
        try:
            return True, self._text(path, limit)
        except FileNotFoundError:
            return True, None
        except (OutsideError, OSError, ValueError):
            return False, None

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
            self.place(checked)
        except OutsideError:
            raise RpcError(FORBIDDEN, f"{checked} is outside the session's folders") from None
        for name, value in (("line", line), ("limit", limit)):
            bad = isinstance(value, bool) or not isinstance(value, int) or value < 0
            if value is not None and bad:
                raise RpcError(INVALID_PARAMS, f"{name} must be a non-negative integer")
        try:
            text = self._text(checked, READ_LIMIT)
        except OutsideError:
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

    def write_text(
        self, path: object, content: object, *, expected: Expected | None = None
    ) -> Path:
        """Write atomically: a temporary file beside the target, then a rename onto it.

        Both in the descriptor of the target's folder, reached as reads reach a file; missing
        folders are made inside the roots. Returns the real path written. ``expected``: what
        must be there still (a grant's file), else -32000 and nothing is written.
        """
        if not isinstance(content, str):
            raise RpcError(INVALID_PARAMS, "content must be a string")
        checked = _checked_path(path)
        try:
            self.place(checked)
        except OutsideError:
            raise RpcError(FORBIDDEN, f"{checked} is outside the session's folders") from None
        if checked.endswith("/"):
            raise RpcError(
                INVALID_PARAMS, f"{checked} ends with a /: it names a folder, not a file"
            )
        # Judged before any folder is made: a write refused for its name leaves nothing.
        name = checked.rsplit("/", 1)[-1]
        if name in (".", ".."):
            raise RpcError(INVALID_PARAMS, f"{checked} is a directory, not a file")
        if any(len(os.fsencode(part)) > NAME_MAX for part in checked.split("/")):
            raise RpcError(INVALID_PARAMS, f"cannot write {checked}: File name too long")
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: no UTF-8 holds it
            raise RpcError(INVALID_PARAMS, "content is not valid Unicode text") from None
        try:
            return self.replace(checked, data, expected=expected)
        except OutsideError:
            raise RpcError(FORBIDDEN, f"{checked} is outside the session's folders") from None
        except ChangedError as error:
            raise RpcError(
                FORBIDDEN, f"writing {checked} is not allowed: {error.why} since it was approved"
            ) from None
        except IsADirectoryError:
            raise RpcError(INVALID_PARAMS, f"{checked} is a directory") from None
        except OSError as error:
            # ENAMETOOLONG, ENOTDIR (a component is a file), EACCES, ENOSPC...: named by the
            # path asked for; the temporary file's name is nobody's business.
            raise RpcError(INVALID_PARAMS, f"cannot write {checked}: {error.strerror}") from None


__all__ = [
    "FORBIDDEN",
    "INVALID_PARAMS",
    "READ_LIMIT",
    "RESOURCE_NOT_FOUND",
    "Expected",
    "Identity",
    "MissingFileRead",
    "Workspace",
    "text_lines",
]
