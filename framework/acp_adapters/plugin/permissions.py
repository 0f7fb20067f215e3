"""Permission policies; the questions and answers of ``decide_permission`` and
``decide_client_action``.

A session runs under a policy: ``read-only`` (allow reading, refuse the rest),
``workspace-write`` (also allow edits of files inside the workspace; ask before
any command), ``full-access`` (allow everything) or ``ask`` (the application
decides; a live session calls its callback). The policy answers two questions:

* what the agent asks (``session/request_permission``): ``decide_permission``,
  with a :class:`PermissionQuery`, choosing among the options the agent offered;
* what the client itself would do for the agent, whether the agent asked or not
  (run a command for ``terminal/create``, write a file for
  ``fs/write_text_file``): ``decide_client_action``, with a :class:`ClientAction`.

The built-in plugin answers both from the policy (its rules first, then its own
judgement: :mod:`acp_adapters.plugin.rules`); a provider plugin may answer first.
When the answer is ``ask``, the application's callback gets a
:class:`PermissionQuery`: for a client action, ``action`` says what would be
done and the options are :data:`ACTION_OPTIONS`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..runtime import ToolCall
from .rules import PermissionRule

PolicyName = Literal["read-only", "workspace-write", "full-access", "ask"]

#: Tool kinds that only look at the session's files (``fetch`` reaches the network, and
#: ``think`` and ``other`` may do anything: none of them is a read).
READ_KINDS = frozenset({"read", "search"})
#: Tool kinds that change files.
EDIT_KINDS = frozenset({"edit", "delete", "move"})
#: Tool kinds that run commands: ``workspace-write`` asks the application about them.
RUN_KINDS = frozenset({"execute"})


def kind_rank(kind: str) -> int:
    """How much a policy must allow for a tool call of ``kind``: a read least, a command
    most, any other kind (fetch, think, other, one not known here) in between."""
    if kind in READ_KINDS:
        return 0
    if kind in EDIT_KINDS:
        return 1
    return 3 if kind in RUN_KINDS else 2


class Policy(BaseModel):
    """The permission policy of a session, the folders it may write in, and its rules."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: PolicyName = "ask"
    workspace: tuple[str, ...] = ()
    #: Rules read before the policy's own judgement: the first that matches decides
    #: (see :mod:`acp_adapters.plugin.rules`). Given as rules or as their objects.
    rules: tuple[PermissionRule, ...] = ()

    @classmethod
    def of(cls, policy: Policy | PolicyName) -> Policy:
        """``policy``, or the policy of that name (its folders and rules the defaults)."""
        return policy if isinstance(policy, Policy) else cls(name=policy)


class ClientAction(BaseModel):
    """A side effect the client would perform for the agent: a command or a file write.

    ``command``: ``argv`` is what would run (``command_line`` the same as one shell-quoted
    line), in ``cwd``, with the agent's ``env_names`` set on top of the client's
    environment. ``write``: ``path`` (the real path the write would replace or create),
    whether it is ``inside`` the session's folders, and ``patch``, the unified patch the
    write would apply (present when the application may be asked, policy ``ask``, or the
    policy has rules).
    ``tool_call`` is the tool call the action belongs to, where one is known, and
    ``approved`` says the application already allowed it (it answered that tool call's
    permission request with an allow option), so it is not asked twice.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["command", "write"]
    argv: tuple[str, ...] = ()
    command_line: str | None = None
    cwd: str | None = None
    env_names: tuple[str, ...] = ()
    path: str | None = None
    inside: bool = True
    patch: str | None = None
    tool_call: ToolCall | None = None
    approved: bool = False


class ActionDecision(BaseModel):
    """The answer to a :class:`ClientAction`: allow it, refuse it, or ask the application."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    outcome: Literal["allow", "refuse", "ask"]
    reason: str = Field(default="")


#: The options of a question about a client action: what the ``ask`` callback chooses from.
ACTION_OPTIONS: tuple[dict[str, Any], ...] = (
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "reject", "name": "Refuse", "kind": "reject_once"},
)


class PermissionQuery(BaseModel):
    """A question for the policy or the application: the agent's permission request
    (the tool call and the options offered), or, with ``action`` set, a side effect
    the client would perform for the agent (options: :data:`ACTION_OPTIONS`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    request_id: str
    title: str | None = None
    tool_call: ToolCall | None = None
    options: tuple[dict[str, Any], ...] = ()
    action: ClientAction | None = None
    #: The next four are present when the policy has rules or the application may be asked.
    #: The files the tool call names, as real paths (symlinks followed, relative paths
    #: taken from the session's folder).
    paths: tuple[str, ...] = ()
    #: The true patch the tool call would apply, as its file_change shows it (None when it
    #: is not an edit, or has none), and its lines added and deleted.
    patch: str | None = None
    additions: int = 0
    deletions: int = 0


class PermissionDecision(BaseModel):
    """The answer: an option selected, or the request cancelled; and why, for logs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    outcome: Literal["selected", "cancelled", "ask"]
    option_id: str | None = None
    reason: str = Field(default="")
    #: Whether someone was asked: ``False`` for an ``ask`` callback that decided a client
    #: action without asking anyone (a replay answering as its capture's client did), which
    #: keeps no approval of it in the timeline.
    asked: bool = True

    def to_wire(self) -> dict[str, Any]:
        """The ``outcome`` object of the JSON-RPC answer."""
        if self.outcome == "selected" and self.option_id is not None:
            return {"outcome": "selected", "optionId": self.option_id}
        return {"outcome": "cancelled"}
