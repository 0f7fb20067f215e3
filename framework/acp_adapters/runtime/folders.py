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
    if not _absolute(path):
        if not cwd or not _absolute(cwd):
            return path
        path = posixpath.join(cwd, path)
    folded = posixpath.normpath(path)
    if path.startswith("/"):
        return "/" + folded.lstrip("/")  # normpath keeps a leading "//"
    return folded


def _absolute(path: str) -> bool:
    return path.startswith("/") or (path.startswith("<") and ">" in path.split("/", 1)[0])
