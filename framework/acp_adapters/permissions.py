"""Permission policies, and the question and answer of ``decide_permission``.

A session runs under a policy: ``read-only`` (allow reading, refuse the rest),
``workspace-write`` (also allow edits of files inside the workspace),
``full-access`` (allow everything) or ``ask`` (the application decides; a
live session calls its callback). The built-in plugin answers from the policy
and the options the agent offered; a provider plugin may answer first.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .runtime import ToolCall

PolicyName = Literal["read-only", "workspace-write", "full-access", "ask"]


class Policy(BaseModel):
    """The permission policy of a session and the folders it may write in."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: PolicyName = "ask"
    workspace: tuple[str, ...] = ()


class PermissionQuery(BaseModel):
    """A permission request as hooks see it: the tool call and the options offered."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    request_id: str
    title: str | None = None
    tool_call: ToolCall | None = None
    options: tuple[dict[str, Any], ...] = ()


class PermissionDecision(BaseModel):
    """The answer: an option selected, or the request cancelled; and why, for logs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    outcome: Literal["selected", "cancelled", "ask"]
    option_id: str | None = None
    reason: str = Field(default="")

    def to_wire(self) -> dict[str, Any]:
        """The ``outcome`` object of the JSON-RPC answer."""
        if self.outcome == "selected" and self.option_id is not None:
            return {"outcome": "selected", "optionId": self.option_id}
        return {"outcome": "cancelled"}
