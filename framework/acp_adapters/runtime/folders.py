"""One spelling of a file: paths agents send, taken from the session's folder."""

from __future__ import annotations

import posixpath


def resolved_path(path: str, cwd: str | None) -> str:
    """``path`` as one spelling of the file: relative paths taken from the session's folder
    ``cwd`` (when it is known), ``.`` and ``..`` folded, doubled slashes made one.

    Lexical only (no I/O, no symlinks followed): what it is for is that ``a.txt``,
    ``./a.txt`` and ``/ws/a.txt`` name one file when the session's folder is ``/ws``.
    A capture's folder mark (``<workspace>``) counts as a folder's absolute name.
    """
    if not path or "\x00" in path:
        return path
    if path[0] == "/" and "//" not in path and "/." not in path and path[-1] != "/":
        return path  # already one spelling: the common case, and cheap for a flood of them
    if not _absolute(path):
        if not cwd or not _absolute(cwd):
            return path
        path = posixpath.join(cwd, path)
    if path.startswith("/"):
        return "/" + posixpath.normpath(path).lstrip("/")  # normpath keeps a leading "//"
    # A folder mark is one whole name: what follows it is folded below it, and a ".." that
    # would climb above it stays (the path is outside that folder, and still absolute).
    mark, _, rest = path.partition("/")
    rest = rest.lstrip("/")
    folded = posixpath.normpath(rest) if rest else ""
    return mark if folded in ("", ".") else f"{mark}/{folded}"


def _absolute(path: str) -> bool:
    return path.startswith("/") or (path.startswith("<") and ">" in path.split("/", 1)[0])
