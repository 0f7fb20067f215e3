"""What a checkpoint leaves out: ``.gitignore`` files, ``.git/info/exclude`` and a list of its own.

The rules are git's (``pathspec``'s ``GitIgnoreSpec``, which follows git's own
wildmatch): a ``.gitignore`` applies to its folder and below, a deeper one before a
shallower one, the last matching line of a file wins, ``!`` brings a path back, and
nothing inside an ignored folder comes back (it is never entered). A root's
``.git/info/exclude`` and the session's own list (``checkpoint_ignore``, gitignore lines
relative to each root) come after every ``.gitignore``. The folders of version control
(``.git``, ``.hg``, ``.svn``, ``.jj``) are always left out: a checkpoint never reads or
writes the user's repository.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

import pathspec

#: Always left out, whatever the rules say: version control's own folders.
ALWAYS_IGNORED = frozenset({".git", ".hg", ".svn", ".jj"})
#: The rules of a checkpoint when the session names none of its own.
DEFAULT_IGNORE: tuple[str, ...] = ()
#: The largest ignore file read (bytes): a larger one is not read, and says so.
MAX_IGNORE_FILE = 1024 * 1024


def compile_rules(lines: Sequence[str]) -> pathspec.GitIgnoreSpec | None:
    """The rules of one ignore file (or list), None when there are none."""
    useful = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    if not useful:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


@dataclass(frozen=True)
class Rules:
    """The rules in force in one folder: the ``.gitignore`` files from the root down to it
    (each with the folder it applies from, relative to the root), deepest last, and the
    root's own rules after them (``.git/info/exclude``, the session's list)."""

    files: tuple[tuple[str, pathspec.GitIgnoreSpec], ...] = ()
    base: tuple[pathspec.GitIgnoreSpec, ...] = ()
    #: What identifies these rules: the ignore files' own identities, so that a folder whose
    #: rules changed is listed again.
    token: tuple[object, ...] = field(default=(), compare=False)

    def below(self, folder: str, spec: pathspec.GitIgnoreSpec | None, signature: object) -> Rules:
        """The rules of the subfolder ``folder`` (relative to the root), whose own
        ``.gitignore`` is ``spec`` (None: it has none)."""
        files = self.files if spec is None else (*self.files, (folder, spec))
        return Rules(files, self.base, (*self.token, signature))

    def ignored(self, relative: str, is_dir: bool) -> bool:
        """Whether ``relative`` (to the root, ``/``-separated) is left out."""
        name = relative.rsplit("/", 1)[-1]
        if name in ALWAYS_IGNORED:
            return True
        for folder, spec in reversed(self.files):
            inner = relative[len(folder) + 1 :] if folder else relative
            result = spec.check_file(inner + "/" if is_dir else inner)
            if result.include is not None:
                return bool(result.include)
        for spec in self.base:
            result = spec.check_file(relative + "/" if is_dir else relative)
            if result.include is not None:
                return bool(result.include)
        return False


def root_rules(
    extra: Sequence[str], exclude: bytes | None, exclude_signature: object = None
) -> Rules:
    """The rules at a root: its ``.git/info/exclude`` (its bytes, if it has one) and the
    session's own lines."""
    base: list[pathspec.GitIgnoreSpec] = []
    if exclude is not None:
        spec = compile_rules(exclude.decode("utf-8", "replace").splitlines())
        if spec is not None:
            base.append(spec)
    own = compile_rules(list(extra))
    if own is not None:
        base.append(own)
    return Rules((), tuple(base), (tuple(extra), exclude_signature))


def signature(facts: os.stat_result | None) -> object:
    """What identifies an ignore file's content without reading it (None: no file)."""
    if facts is None:
        return None
    return (facts.st_ino, facts.st_size, facts.st_mtime_ns, facts.st_ctime_ns)


__all__ = [
    "ALWAYS_IGNORED",
    "DEFAULT_IGNORE",
    "MAX_IGNORE_FILE",
    "Rules",
    "compile_rules",
    "root_rules",
    "signature",
]
