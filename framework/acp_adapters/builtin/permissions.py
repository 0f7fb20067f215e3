"""The built-in decisions: permission requests and the client's own actions, by policy: its
rules first (the first that matches decides), then its own judgement."""

from __future__ import annotations

import os
import posixpath
from typing import TYPE_CHECKING

from ..plugin.hookspecs import hookimpl

if TYPE_CHECKING:
    from ..plugin.permissions import (
        ActionDecision,
        ClientAction,
        PermissionDecision,
        PermissionQuery,
        Policy,
    )
    from ..plugin.providers import Provider

# The policies' models and the rules are imported by the functions that decide: the plugin
# manager is built (``acp-adapters providers``) without them.


@hookimpl(trylast=True)
def decide_permission(
    provider: Provider, request: PermissionQuery, policy: Policy
) -> PermissionDecision:
    return decide_by_policy(request, policy)


@hookimpl(trylast=True)
def decide_client_action(
    provider: Provider, action: ClientAction, policy: Policy
) -> ActionDecision:
    return decide_action_by_policy(action, policy)


def _option(request: PermissionQuery, *kinds: str) -> str | None:
    for kind in kinds:
        for option in request.options:
            if option.get("kind") == kind and isinstance(option.get("optionId"), str):
                return str(option["optionId"])
    return None


def _inside(path: str, roots: tuple[str, ...]) -> bool:
    """Whether ``path`` is inside one of the folders, by real paths: a symlink in the
    workspace that leads out is outside."""
    if not os.path.isabs(path) or "\x00" in path:
        return False
    real = os.path.realpath(path)
    return any(
        posixpath.commonpath([real, folder]) == folder
        for folder in (os.path.realpath(root) for root in roots if root and "\x00" not in root)
    )


def decide_by_policy(request: PermissionQuery, policy: Policy) -> PermissionDecision:
    """Allow or refuse by policy, choosing among the options the agent offered.

    An allow-once option is preferred to an allow-always one (an "always" can
    outlive the session); refusing prefers reject-once. With no fitting option
    the request is cancelled. The policy's rules come first: the first that matches
    decides (allow, reject, or ask the application).
    """
    from ..plugin.permissions import EDIT_KINDS, READ_KINDS, RUN_KINDS, PermissionDecision
    from ..plugin.rules import first_match
    from ..runtime.paths import tool_call_paths

    matched = first_match(policy.rules, request, policy.workspace)
    if matched is not None:
        number, rule = matched
        if rule.decision == "ask":
            return PermissionDecision(outcome="ask", reason=f"rule {number} asks the application")
        verb = "allows" if rule.decision == "allow" else "rejects"
        return _select(request, rule.decision == "allow", f"rule {number} {verb} it")
    if policy.name == "ask":
        return PermissionDecision(outcome="ask", reason="the policy asks the application")
    call = request.tool_call
    kind = call.kind if call is not None else "other"
    if policy.name == "workspace-write" and kind in RUN_KINDS:
        return PermissionDecision(outcome="ask", reason="workspace-write asks before commands")
    allowed = policy.name == "full-access" or kind in READ_KINDS
    if not allowed and policy.name == "workspace-write" and call is not None:
        paths = tool_call_paths(call)
        allowed = (
            kind in EDIT_KINDS and bool(paths) and all(_inside(p, policy.workspace) for p in paths)
        )
    reason = f"{policy.name} {'allows' if allowed else 'refuses'} {kind}"
    return _select(request, allowed, reason)


def _select(request: PermissionQuery, allowed: bool, reason: str) -> PermissionDecision:
    """An allow option the agent offered (allow-once first), or a reject option."""
    from ..plugin.permissions import PermissionDecision

    if allowed:
        choice = _option(request, "allow_once", "allow_always")
    else:
        choice = _option(request, "reject_once", "reject_always")
    if choice is None:
        return PermissionDecision(outcome="cancelled", reason=f"{reason}; no option fits")
    return PermissionDecision(outcome="selected", option_id=choice, reason=reason)


def decide_action_by_policy(action: ClientAction, policy: Policy) -> ActionDecision:
    """Allow, refuse or ask about a command or a write the client would perform.

    ``read-only`` refuses both; ``workspace-write`` allows a write inside the
    session's folders and asks before a command; ``full-access`` allows both; ``ask``
    asks. An action the application already allowed (``approved``) is not asked again.
    A write outside the session's folders is refused first; then the policy's rules are
    read (the first that matches decides), then the policy judges.
    """
    from ..plugin.permissions import ActionDecision
    from ..plugin.rules import first_match

    what = "commands" if action.kind == "command" else "writes"
    if action.kind == "write" and not action.inside:
        return ActionDecision(outcome="refuse", reason="the write is outside the session's folders")
    matched = first_match(policy.rules, action, policy.workspace)
    if matched is not None:
        number, rule = matched
        if rule.decision == "allow":
            return ActionDecision(outcome="allow", reason=f"rule {number} allows it")
        if rule.decision == "reject":
            return ActionDecision(outcome="refuse", reason=f"rule {number} refuses it")
        if action.approved:
            return ActionDecision(outcome="allow", reason="the application allowed its tool call")
        return ActionDecision(outcome="ask", reason=f"rule {number} asks the application")
    if policy.name == "read-only":
        return ActionDecision(outcome="refuse", reason=f"read-only refuses {what}")
    if policy.name == "full-access":
        return ActionDecision(outcome="allow", reason=f"full-access allows {what}")
    if policy.name == "workspace-write" and action.kind == "write":
        return ActionDecision(outcome="allow", reason="workspace-write allows writes inside")
    if action.approved:
        return ActionDecision(outcome="allow", reason="the application allowed its tool call")
    return ActionDecision(outcome="ask", reason=f"{policy.name} asks the application")
