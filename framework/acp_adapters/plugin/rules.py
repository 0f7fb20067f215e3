"""Permission rules: what a policy decides before its own judgement, by what a request does.

A :class:`PermissionRule` matches a request (the agent's permission request, a
:class:`~acp_adapters.plugin.permissions.PermissionQuery`, or a command or write the
client would perform, a :class:`~acp_adapters.plugin.permissions.ClientAction`) by
its conditions, all of which must hold; a condition left out holds for every request:

* ``kinds``: the tool kind. A permission request is of its tool call's kind (the most
  powerful kind it was ever said to be); a client write is of kind ``edit``, a client
  command of kind ``execute``.
* ``paths``: globs of the files it touches. Every path of the request (real paths:
  symlinks followed) must match one of the globs; a request that names no path does not
  match. A relative glob is read from each of the session's folders, an absolute one
  from the root. ``*`` and ``?`` match within one path component (dotfiles too), ``[...]``
  one character of a set, and ``**`` as a whole component any number of folders, none
  included (``src/**`` is everything inside ``src``); matching is case-sensitive.
* ``max_lines``: the size of its true patch, lines added plus lines deleted, at most
  this; a request without a patch (a command, an edit whose patch is not known or was
  left out past the rewrite cap) does not match.
* ``command``: globs of the command line: a client command's line, or what a permission
  request's tool call says it runs (``rawInput.command``). ``*`` and ``?`` match any
  characters but those that make a shell line more than one command or redirect it
  (``; & | < > ( ) $`` backquote, newline): ``echo *`` matches ``echo hello`` and not
  ``echo hi && rm -rf ~``. A request that names no command does not match. A command rule
  names a program as the user's ``PATH`` finds it (the client runs it so, never with the
  agent's ``PATH``: :mod:`acp_adapters.client.terminals`); so an ``allow`` rule whose
  glob's first word is a wildcard (``* --version``) matches a program named by its name
  only, not one named by a path (``./evil --version``) or after an assignment
  (``PATH=bin make``), and one that names a relative path (``./build.sh *``) names the file
  in a session's folder: it does not match that command run from another folder (a
  subfolder the agent picked, which has a ``build.sh`` of its own).

The rule's ``decision`` is ``allow``, ``reject`` or ``ask`` (the application). A policy's
rules are read in order and the first that matches decides; when none does, the
policy's own judgement stands. A rule never lets a write outside the session's folders
through: an ``allow`` rule does not match an edit that names a path outside them, or
names none, and the client refuses a write outside them whatever decides.

Rules are read from a JSON or TOML object (:func:`rules_from_config`, :func:`load_rules`):
a list under ``"rules"``, each rule an object of the fields above.
"""

from __future__ import annotations

import importlib
import json
import os
import posixpath
import re
import shlex
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..diff.stats import patch_stats
from ..errors import AcpAdaptersError
from ..protocol import v1
from ..runtime.commands import program_word

if TYPE_CHECKING:
    from .permissions import ClientAction, PermissionQuery

RuleDecision = Literal["allow", "reject", "ask"]

#: The tool kinds of the protocol (both versions): what ``kinds`` may name.
TOOL_KINDS = frozenset(get_args(v1.ToolKind))
#: Kinds that change files: an ``allow`` rule lets none of them out of the session's folders.
_WRITING_KINDS = frozenset({"edit", "delete", "move"})
#: What a command glob's ``*`` and ``?`` do not match: a second command, a redirection, a
#: substitution.
_SHELL_CONTROL = ";&|<>()$`\n\r"
#: The largest rules file read.
MAX_RULES_BYTES = 1024 * 1024


class RulesError(AcpAdaptersError):
    """Raised when rules cannot be read: the message names the file (when there is one),
    the rule's number (from 1) and what is wrong with it."""


class PermissionRule(BaseModel):
    """One rule: its conditions (each left out holds for every request) and its decision."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    decision: RuleDecision
    kinds: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    max_lines: int | None = Field(default=None, ge=0, strict=True)
    command: tuple[str, ...] = ()

    @field_validator("kinds", "paths", "command", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        """A single string is a list of one."""
        return (value,) if isinstance(value, str) else value

    @field_validator("kinds")
    @classmethod
    def _known_kinds(cls, kinds: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [kind for kind in kinds if kind not in TOOL_KINDS]
        if unknown:
            raise ValueError(
                f"unknown tool kind {unknown[0]!r} (one of {', '.join(sorted(TOOL_KINDS))})"
            )
        return kinds

    @field_validator("paths")
    @classmethod
    def _path_globs(cls, globs: tuple[str, ...]) -> tuple[str, ...]:
        for glob in globs:
            _glob_parts(glob)  # raises ValueError for a glob that cannot match as meant
        return globs

    @field_validator("command")
    @classmethod
    def _command_globs(cls, globs: tuple[str, ...]) -> tuple[str, ...]:
        if any(not glob.strip() for glob in globs):
            raise ValueError("a command glob is empty")
        return globs

    def matches(
        self, request: PermissionQuery | ClientAction, workspace: Sequence[str] = ()
    ) -> bool:
        """Whether every condition of the rule holds for ``request``; ``workspace``: the
        session's folders, which relative path globs are read from."""
        return self._holds(_facts(request), tuple(workspace))

    def _holds(self, facts: _Facts, workspace: tuple[str, ...]) -> bool:
        if self.kinds and facts.kind not in self.kinds:
            return False
        if self.paths and not (
            facts.paths and all(path_matches(p, self.paths, workspace) for p in facts.paths)
        ):
            return False
        if self.max_lines is not None and (facts.lines is None or facts.lines > self.max_lines):
            return False
        if self.command and not (
            facts.command is not None
            and any(self._command_holds(facts, g, workspace) for g in self.command)
        ):
            return False
        if self.decision == "allow" and facts.kind in _WRITING_KINDS:
            # Never out of the session's folders, nor into files not named.
            if not facts.paths:
                return False
            if facts.inside is not None:
                return facts.inside
            return all(_inside(p, workspace) for p in facts.paths)
        return True

    def _command_holds(self, facts: _Facts, glob: str, workspace: tuple[str, ...]) -> bool:
        """Whether a command glob matches the request's command: its line, and, for an
        ``allow``, the program the rule names (see the module's documentation)."""
        assert facts.command is not None
        if not command_matches(facts.command, glob):
            return False
        if self.decision != "allow":
            return True  # a reject or an ask reads the line alone: never less of it
        program = program_word(facts.command)
        named = glob.split(None, 1)[0]
        if _is_wild(named) and not _program_named(named, program):
            return False
        if "/" in program and not program.startswith("/") and facts.cwd is not None:
            # A relative program is the session folder's, as the rule reads it.
            return _is_root(facts.cwd, workspace)
        return True


def first_match(
    rules: Iterable[PermissionRule],
    request: PermissionQuery | ClientAction,
    workspace: Sequence[str] = (),
) -> tuple[int, PermissionRule] | None:
    """The first rule that matches ``request`` and its number (from 1), or None."""
    facts = _facts(request)
    roots = tuple(workspace)
    for number, rule in enumerate(rules, 1):
        if rule._holds(facts, roots):
            return number, rule
    return None


# --- what a request does --------------------------------------------------------------------


@dataclass(frozen=True)
class _Facts:
    """What rules read of a request."""

    kind: str
    paths: tuple[str, ...]
    #: Lines added plus deleted by its patch; None: no patch, or not all of it.
    lines: int | None
    command: str | None
    #: Whether its paths are inside the session's folders, as the client judged (a write);
    #: None: judged from the folders a rule is read with.
    inside: bool | None = None
    #: Where a client command runs (its real folder); None: not known (a permission request).
    cwd: str | None = None


def _facts(request: PermissionQuery | ClientAction) -> _Facts:
    from .permissions import ClientAction

    if isinstance(request, ClientAction):
        if request.kind == "command":
            line = request.command_line or shlex.join(request.argv)
            return _Facts("execute", (), None, line, cwd=request.cwd)
        stats = patch_stats(request.patch) if request.patch is not None else None
        written: tuple[str, ...] = (request.path,) if request.path else ()
        size = stats.additions + stats.deletions if stats is not None else None
        return _Facts("edit", written, size, None, inside=request.inside)
    call = request.tool_call
    kind = call.kind if call is not None else "other"
    paths = request.paths
    if not paths and call is not None:
        from ..runtime.paths import tool_call_paths

        # Made without its real paths (by a plugin, a test): the absolute ones it names,
        # followed; a relative one matches no glob.
        paths = tuple(os.path.realpath(p) if os.path.isabs(p) else p for p in tool_call_paths(call))
    lines: int | None = None
    if request.patch is not None:
        files = patch_stats(request.patch).files
        # A patch with fewer files than the tool call's diffs left some out (past the
        # rewrite cap): its size is not the edit's.
        if call is None or files >= _diff_files(call):
            lines = request.additions + request.deletions
    return _Facts(kind, paths, lines, _said_command(call.raw_input) if call else None)


def _diff_files(call: Any) -> int:
    """How many files the diffs of a tool call name (its content, reported and proposed)."""
    from ..runtime import DiffV1, DiffV2

    named: set[str] = set()
    for item in (*call.content, *call.diffs_reported, *call.diffs_proposed):
        if isinstance(item, DiffV1):
            named.add(item.path)
        elif isinstance(item, DiffV2):
            named.update(change.path or change.old_path or "" for change in item.changes)
    return len(named)


def _said_command(raw_input: Any) -> str | None:
    """The command a tool call says it runs (``rawInput.command``, or ``cmd``), as a line."""
    if not isinstance(raw_input, dict):
        return None
    command = raw_input.get("command", raw_input.get("cmd"))
    if isinstance(command, list) and command and all(isinstance(p, str) for p in command):
        return shlex.join(command)
    return command if isinstance(command, str) else None


def _program_named(named: str, program: str) -> bool:
    """Whether the program word of a line is one that a glob's wildcard first word names:
    a program by its name (``*``, ``py*``), never a file of the agent's choosing by a path
    (``./evil``) nor a variable set for what follows (``PATH=bin``); by a path only where
    the glob spells one out, its wildcards within one component as in a path glob
    (``/usr/bin/*`` is not ``/usr/bin/../../tmp/evil``)."""
    if "=" in program:
        return False
    if "/" not in program:
        return True
    parts = program.split("/")
    if "/" not in named or ".." in parts or named.startswith("/") != program.startswith("/"):
        return False
    return _parts_match(
        tuple(p for p in named.split("/") if p not in ("", ".")),
        tuple(p for p in parts if p not in ("", ".")),
    )


def _is_root(folder: str, roots: Sequence[str]) -> bool:
    """Whether ``folder`` is one of the session's folders itself (by real paths)."""
    if not os.path.isabs(folder) or "\x00" in folder:
        return False
    real = os.path.realpath(folder)
    return any(real == os.path.realpath(root) for root in roots if root and "\x00" not in root)


def _inside(path: str, roots: Sequence[str]) -> bool:
    if not os.path.isabs(path) or "\x00" in path:
        return False
    real = os.path.realpath(path)
    return any(
        posixpath.commonpath([real, folder]) == folder
        for folder in (os.path.realpath(root) for root in roots if root and "\x00" not in root)
    )


# --- globs ----------------------------------------------------------------------------------


def _glob_parts(glob: str) -> tuple[bool, tuple[str, ...]]:
    """Whether a path glob is absolute, and its components (``.`` and empty ones dropped).

    :raises ValueError: an empty glob, ``..``, ``~``, or ``**`` inside a component.
    """
    if not glob or "\x00" in glob:
        raise ValueError("a path glob is empty" if not glob else "a path glob holds a NUL")
    if glob.startswith("~"):
        raise ValueError(f"path glob {glob!r}: write the home folder out, ~ is not expanded")
    parts = tuple(part for part in glob.split("/") if part not in ("", "."))
    for part in parts:
        if part == "..":
            raise ValueError(f"path glob {glob!r}: '..' is not allowed")
        if "**" in part and part != "**":
            raise ValueError(f"path glob {glob!r}: '**' must be a whole path component")
    return glob.startswith("/"), parts


def _is_wild(part: str) -> bool:
    return any(c in part for c in "*?[")


def path_matches(path: str, globs: Iterable[str], workspace: Sequence[str] = ()) -> bool:
    """Whether the real path ``path`` matches one of ``globs``: an absolute glob from the
    root (its leading folders without wildcards followed as real paths), a relative one
    from each folder of ``workspace`` that holds the path."""
    if not os.path.isabs(path) or "\x00" in path:
        return False
    real = os.path.realpath(path)
    components = tuple(part for part in real.split("/") if part)
    roots: list[tuple[str, ...]] | None = None
    for glob in globs:
        absolute, parts = _glob_parts(glob)
        if absolute:
            fixed = 0
            while fixed < len(parts) and not _is_wild(parts[fixed]):
                fixed += 1
            prefix = os.path.realpath("/" + "/".join(parts[:fixed]))
            pattern = (*(p for p in prefix.split("/") if p), *parts[fixed:])
            if _parts_match(pattern, components):
                return True
            continue
        if roots is None:
            roots = []
            for root in workspace:
                if root and os.path.isabs(root) and "\x00" not in root:
                    folder = tuple(p for p in os.path.realpath(root).split("/") if p)
                    if components[: len(folder)] == folder:
                        roots.append(components[len(folder) :])
        if any(_parts_match(parts, relative) for relative in roots):
            return True
    return False


def _parts_match(pattern: Sequence[str], parts: Sequence[str]) -> bool:
    """Glob components against path components: ``**`` any number of components, but a
    last ``**`` at least one (``src/**`` is what is inside ``src``)."""
    if pattern and pattern[-1] == "**":
        pattern = (*pattern, "*")

    def spread(states: set[int]) -> set[int]:
        # A ``**`` may match no component: the position after it is reached too.
        stack, seen = list(states), set(states)
        while stack:
            at = stack.pop()
            if at < len(pattern) and pattern[at] == "**" and at + 1 not in seen:
                seen.add(at + 1)
                stack.append(at + 1)
        return seen

    states = spread({0})
    for part in parts:
        following: set[int] = set()
        for at in states:
            if at >= len(pattern):
                continue
            if pattern[at] == "**":
                following.add(at)
            elif fnmatchcase(part, pattern[at]):
                following.add(at + 1)
        if not following:
            return False
        states = spread(following)
    return len(pattern) in states


def command_matches(line: str, glob: str) -> bool:
    """Whether a command line matches a command glob (see the module's documentation)."""
    return _command_regex(glob).fullmatch(line) is not None


def _command_regex(glob: str) -> re.Pattern[str]:
    """A command glob as a regular expression: ``*`` and ``?`` never match shell control
    characters; ``[...]`` is a set of characters as in :mod:`fnmatch`."""
    plain = "[^" + re.escape(_SHELL_CONTROL) + "]"
    out: list[str] = []
    at, end = 0, len(glob)
    while at < end:
        char = glob[at]
        at += 1
        if char == "*":
            if not out or out[-1] != plain + "*":
                out.append(plain + "*")
        elif char == "?":
            out.append(plain)
        elif char == "[":
            close = at
            if close < end and glob[close] == "!":
                close += 1
            if close < end and glob[close] == "]":
                close += 1
            while close < end and glob[close] != "]":
                close += 1
            if close >= end:
                out.append("\\[")
                continue
            body = glob[at:close]
            at = close + 1
            negate = body.startswith("!")
            body = body[1:] if negate else body
            for special in "\\^[]":
                body = body.replace(special, "\\" + special)
            # A set left open by ``!`` is closed to the control characters, as ``?`` is.
            out.append(f"[^{body}{re.escape(_SHELL_CONTROL)}]" if negate else f"[{body}]")
        else:
            out.append(re.escape(char))
    return re.compile("".join(out))


# --- reading rules --------------------------------------------------------------------------


def rules_from_config(config: Any, *, source: str | None = None) -> tuple[PermissionRule, ...]:
    """The rules of a JSON or TOML object: ``{"rules": [{"decision": ..., ...}, ...]}``.

    ``source`` names where the object came from, in the errors.

    :raises RulesError: naming the rule (from 1) and what is wrong with it.
    """
    where = f"{source}: " if source else ""
    if not isinstance(config, dict):
        raise RulesError(f'{where}rules are an object: {{"rules": [...]}}')
    unknown = sorted(str(key) for key in config if key != "rules")
    if unknown:
        raise RulesError(f'{where}unknown key {unknown[0]!r}: rules are {{"rules": [...]}}')
    if "rules" not in config:
        raise RulesError(f'{where}no "rules" list')
    listed = config["rules"]
    if not isinstance(listed, list):
        raise RulesError(f'{where}"rules" is a list of rules, not {type(listed).__name__}')
    rules: list[PermissionRule] = []
    for number, rule in enumerate(listed, 1):
        if not isinstance(rule, dict):
            raise RulesError(f"{where}rule {number} is not an object")
        try:
            rules.append(PermissionRule.model_validate(rule))
        except ValidationError as error:
            raise RulesError(f"{where}rule {number}: {_what_is_wrong(error)}") from None
    return tuple(rules)


def _what_is_wrong(error: ValidationError) -> str:
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"] if not isinstance(part, int))
    message = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        return f"unknown field {field!r} (the fields: decision, kinds, paths, max_lines, command)"
    if first["type"] == "missing":
        return f"no {field!r}"
    if field == "decision":
        return f"decision {first.get('input')!r} is not one of 'allow', 'reject', 'ask'"
    return f"{field}: {message}" if field else message


def load_rules(path: str | os.PathLike[str]) -> tuple[PermissionRule, ...]:
    """The rules of a file: TOML when its name ends ``.toml``, else JSON.

    :raises RulesError: the file cannot be read, is not JSON or TOML, or a rule is wrong
        (the message names the file and the rule).
    """
    name = os.fspath(path)
    try:
        with open(name, "rb") as file:
            data = file.read(MAX_RULES_BYTES + 1)
    except OSError as error:
        raise RulesError(f"{name}: cannot be read ({error.strerror or error})") from None
    if len(data) > MAX_RULES_BYTES:
        raise RulesError(f"{name}: is larger than {MAX_RULES_BYTES // 1024} KiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise RulesError(f"{name}: is not UTF-8 text") from None
    if Path(name).suffix.lower() == ".toml":
        config = _read_toml(name, text)
    else:
        try:
            config = json.loads(text)
        except json.JSONDecodeError as error:
            raise RulesError(
                f"{name}: is not valid JSON ({error.msg}: line {error.lineno} column {error.colno})"
            ) from None
        except (ValueError, RecursionError):
            raise RulesError(f"{name}: is not valid JSON") from None
    return rules_from_config(config, source=name)


def _read_toml(name: str, text: str) -> Any:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        try:
            tomllib = importlib.import_module("tomli")
        except ImportError:
            raise RulesError(
                f"{name}: reading TOML needs Python 3.11 or the tomli package; "
                "or write the rules as JSON"
            ) from None
    try:
        return tomllib.loads(text)
    except (ValueError, RecursionError) as error:  # tomllib.TOMLDecodeError is a ValueError
        raise RulesError(f"{name}: is not valid TOML ({error})") from None
