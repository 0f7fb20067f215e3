"""Every hook: the built-in answer, and a plugin that overrides it for its own provider only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pluggy
import pytest

from acp_adapters import (
    ActionDecision,
    ClientAction,
    CommandExecutionItem,
    DiffPatch,
    DiffV1,
    FileChangeItem,
    Hooks,
    PermissionDecision,
    PermissionQuery,
    Policy,
    Provider,
    ProviderRegistry,
    ToolItem,
    hookimpl,
)
from acp_adapters.diff.limits import DiffLimits
from acp_adapters.plugin.extensions import ExtensionAnswer
from acp_adapters.projection.negotiation import provider_of
from acp_adapters.runtime import SessionState
from acp_adapters.testing import plugin_manager, provider, session, tool_call
from acp_adapters.timeline.items import AssistantMessageItem

EDIT = [{"type": "diff", "path": "/ws/a.py", "oldText": "a = 1\n", "newText": "a = 2\n"}]
FAKE = provider("fake")
OTHER = provider("other")


class FakeProviderPlugin:
    """Overrides what it can, for provider "fake" only."""

    @hookimpl
    def register_providers(self, register: Any) -> None:
        register(Provider(id="fake", name="Fake", agent_names=("fake-agent",)))

    @hookimpl
    def project_file_change(self, provider: Provider, tool_call: Any) -> FileChangeItem | None:
        if provider.id != "fake":
            return None
        return FileChangeItem(paths=("/custom",), diff_str="custom", patch_source="provider_meta")

    @hookimpl
    def project_tool_call(self, provider: Provider, tool_call: Any) -> Any:
        if provider.id != "fake" or tool_call.kind != "think":
            return None
        return ToolItem(title="thinking, said fake")

    @hookimpl
    def project_diff_patch(self, provider: Provider) -> str | None:
        return "fake patch" if provider.id == "fake" else None

    @hookimpl
    def decide_permission(self, provider: Provider) -> PermissionDecision | None:
        if provider.id != "fake":
            return None
        return PermissionDecision(outcome="cancelled", reason="fake never allows")

    @hookimpl
    def decide_client_action(self, provider: Provider) -> ActionDecision | None:
        if provider.id != "fake":
            return None
        return ActionDecision(outcome="allow", reason="fake runs its own sandbox")

    @hookimpl
    def answer_extension_request(self, provider: Provider, method: str) -> Any:
        if provider.id != "fake" or method != "_fake/ping":
            return None
        return ExtensionAnswer(result={"pong": True})

    @hookimpl
    def render_item_text(self, item: Any) -> str | None:
        return "fake text" if getattr(item, "title", None) == "thinking, said fake" else None

    @hookimpl
    def identify_agent(self, initialize_result: dict[str, Any]) -> str | None:
        meta = initialize_result.get("_meta")
        if isinstance(meta, dict) and meta.get("fake/agent"):
            return "fake"
        return "unregistered" if isinstance(meta, dict) and meta.get("bogus") else None


@pytest.fixture
def with_fake() -> Hooks:
    return Hooks(plugin_manager(FakeProviderPlugin()))


def test_hook_register_providers_collects_every_plugin(with_fake: Hooks) -> None:
    registry = ProviderRegistry.collect(with_fake.pm)
    assert {p.id for p in registry} == {"acp", "fake"}
    assert registry.get("fake").plugin == "test-0"
    assert registry.get("acp").plugin == "acp_adapters.builtin.tools"
    assert registry.for_agent("fake-agent").id == "fake"
    assert registry.for_agent("someone else").id == "acp"


def test_hook_identify_agent_names_the_provider_of_an_agent_without_a_name(
    with_fake: Hooks,
) -> None:
    registry = ProviderRegistry.collect(with_fake.pm)
    unnamed = {"protocolVersion": 1, "_meta": {"fake/agent": True}}
    assert with_fake.identify_agent(unnamed) == "fake"
    assert provider_of(unnamed, registry, with_fake).id == "fake"
    # A name a provider claims wins; without a claim and an identification, the generic one.
    named = {**unnamed, "agentInfo": {"name": "fake-agent"}}
    assert provider_of(named, registry, with_fake).id == "fake"
    assert provider_of({"protocolVersion": 1}, registry, with_fake).id == "acp"
    assert provider_of({"_meta": {"bogus": True}}, registry, with_fake).id == "acp"
    assert provider_of("not an object", registry, with_fake).id == "acp"
    assert Hooks(plugin_manager()).identify_agent(unnamed) is None


def test_hook_project_file_change_provider_override(with_fake: Hooks) -> None:
    state = session()
    call = tool_call(kind="edit", content=EDIT, state=state)
    custom = with_fake.project_file_change(FAKE, call, state.view())
    assert custom.diff_str == "custom"
    default = with_fake.project_file_change(OTHER, call, state.view())
    assert default.diff_str == "--- /ws/a.py\n+++ /ws/a.py\n@@ -1,1 +1,1 @@\n-a = 1\n+a = 2\n"
    assert (default.additions, default.deletions, default.patch_source) == (1, 1, "agent")


def test_hook_project_tool_call_maps_kinds(with_fake: Hooks) -> None:
    state = session()
    run = tool_call(
        kind="execute",
        rawInput={"command": ["ls", "-l"], "cwd": "/ws"},
        rawOutput={"stdout": "x\n", "exit_code": 0},
        state=state,
    )
    item = with_fake.project_tool_call(OTHER, run, state.view())
    assert isinstance(item, CommandExecutionItem)
    assert (item.command, item.cwd, item.output, item.exit_code) == ("ls -l", "/ws", "x\n", 0)
    kinds = {
        "read": "file_read",
        "search": "search",
        "fetch": "fetch",
        "think": "tool",
        "switch_mode": "tool",
        "other": "tool",
        "edit": "file_change",
        "delete": "file_change",
        "move": "file_change",
    }
    for kind, item_kind in kinds.items():
        call = tool_call(tool_call_id=kind, kind=kind, state=state)
        assert with_fake.project_tool_call(OTHER, call, state.view()).kind == item_kind, kind
    think = tool_call(tool_call_id="t", kind="think", state=state)
    assert with_fake.project_tool_call(FAKE, think, state.view()).title == "thinking, said fake"
    # any diff makes a file change, whatever the kind says
    diffed = tool_call(tool_call_id="d", kind="other", content=EDIT, state=state)
    assert with_fake.project_tool_call(OTHER, diffed, state.view()).kind == "file_change"


def test_hook_project_diff_patch(with_fake: Hooks) -> None:
    call = tool_call(kind="edit", content=EDIT)
    # a plugin's plain str is a patch
    assert with_fake.project_diff_patch(FAKE, call.content, DiffLimits()) == DiffPatch("fake patch")
    found = with_fake.project_diff_patch(OTHER, call.content, DiffLimits())
    assert found.patch is not None
    assert found.patch.startswith("--- /ws/a.py")
    assert found.omitted_reason is None
    assert with_fake.project_diff_patch(OTHER, (), DiffLimits()) == DiffPatch(None, "no_diff")
    big = [{"type": "diff", "path": "/b", "oldText": "x\n" * 10, "newText": "y\n" * 10}]
    capped = tool_call(kind="edit", content=big)
    assert with_fake.project_diff_patch(OTHER, capped.content, DiffLimits(max_edits=19)) == (
        DiffPatch(None, "capped")
    )
    assert with_fake.project_diff_patch(OTHER, capped.content, DiffLimits(max_edits=20)).patch


class LastReportWins:
    """Keeps the last diff of each path, for provider "fake" only."""

    @hookimpl
    def normalize_diff_content(self, provider: Provider, content: tuple[Any, ...]) -> Any:
        if provider.id != "fake":
            return None
        last = {item.path: item for item in content if isinstance(item, DiffV1)}
        return tuple(last.values())


def test_hook_normalize_diff_content() -> None:
    hooks = Hooks(plugin_manager(LastReportWins()))
    state = session()
    twice = [
        {"type": "diff", "path": "/ws/a", "oldText": "", "newText": "stale\n"},
        {"type": "diff", "path": "/ws/a", "oldText": "a\n", "newText": "b\n"},
    ]
    call = tool_call(kind="edit", content=twice, state=state)
    # the built-in answer: the content as it is
    assert hooks.normalize_diff_content(OTHER, call, call.content, state.view()) is call.content
    assert hooks.normalize_diff_content(FAKE, call, call.content, state.view()) == call.content[1:]
    # the built-in file_change is built from the normalised content
    item = hooks.project_file_change(FAKE, call, state.view())
    assert item.diff_str == "--- /ws/a\n+++ /ws/a\n@@ -1,1 +1,1 @@\n-a\n+b\n"
    assert (item.additions, item.deletions) == (1, 1)
    both = hooks.project_file_change(OTHER, call, state.view())
    assert (both.additions, both.deletions) == (2, 1)


@pytest.mark.parametrize(
    ("policy", "kind", "paths", "expected"),
    [
        ("full-access", "edit", ["/ws/a"], "once"),
        ("read-only", "read", ["/ws/a"], "once"),
        ("read-only", "edit", ["/ws/a"], "no"),
        ("workspace-write", "edit", ["/ws/a"], "once"),
        ("workspace-write", "edit", ["/elsewhere/a"], "no"),
        ("workspace-write", "edit", ["/ws/../etc/passwd"], "no"),
        ("read-only", "fetch", [], "no"),
        ("read-only", "think", [], "no"),
        ("workspace-write", "fetch", [], "no"),
        ("full-access", "fetch", [], "once"),
    ],
)
def test_hook_decide_permission_follows_the_policy(
    with_fake: Hooks, policy: str, kind: str, paths: list[str], expected: str
) -> None:
    call = tool_call(kind=kind, locations=[{"path": p} for p in paths])
    options = (
        {"optionId": "always", "kind": "allow_always"},
        {"optionId": "once", "kind": "allow_once"},
        {"optionId": "no", "kind": "reject_once"},
    )
    query = PermissionQuery(request_id="1", tool_call=call, options=options)
    decision = with_fake.decide_permission(OTHER, query, Policy(name=policy, workspace=("/ws",)))  # type: ignore[arg-type]
    assert (decision.outcome, decision.option_id) == ("selected", expected)
    assert (
        with_fake.decide_permission(FAKE, query, Policy(name="full-access")).outcome == "cancelled"
    )
    assert with_fake.decide_permission(OTHER, query, Policy(name="ask")).outcome == "ask"
    no_reject = PermissionQuery(request_id="2", tool_call=call, options=options[:2])
    refused = with_fake.decide_permission(OTHER, no_reject, Policy(name="read-only"))
    if kind != "read":
        assert refused.outcome == "cancelled"


def test_workspace_write_asks_the_application_before_a_command(with_fake: Hooks) -> None:
    query = PermissionQuery(
        request_id="1",
        tool_call=tool_call(kind="execute"),
        options=(
            {"optionId": "once", "kind": "allow_once"},
            {"optionId": "no", "kind": "reject_once"},
        ),
    )
    policy = Policy(name="workspace-write", workspace=("/ws",))
    assert with_fake.decide_permission(OTHER, query, policy).outcome == "ask"


@pytest.mark.parametrize(
    ("policy", "action", "expected"),
    [
        ("read-only", {"kind": "command", "command_line": "ls"}, "refuse"),
        ("read-only", {"kind": "write", "path": "/ws/a"}, "refuse"),
        ("workspace-write", {"kind": "write", "path": "/ws/a"}, "allow"),
        ("workspace-write", {"kind": "write", "path": "/etc/a", "inside": False}, "refuse"),
        ("workspace-write", {"kind": "command", "command_line": "ls"}, "ask"),
        ("workspace-write", {"kind": "command", "command_line": "ls", "approved": True}, "allow"),
        ("full-access", {"kind": "command", "command_line": "rm -rf x"}, "allow"),
        ("full-access", {"kind": "write", "path": "/etc/a", "inside": False}, "refuse"),
        ("ask", {"kind": "write", "path": "/ws/a"}, "ask"),
        ("ask", {"kind": "command", "command_line": "ls"}, "ask"),
        ("ask", {"kind": "write", "path": "/ws/a", "approved": True}, "allow"),
    ],
)
def test_hook_decide_client_action_follows_the_policy(
    with_fake: Hooks, policy: str, action: dict[str, Any], expected: str
) -> None:
    decided = with_fake.decide_client_action(
        OTHER,
        ClientAction(**action),
        Policy(name=policy, workspace=("/ws",)),  # type: ignore[arg-type]
    )
    assert decided.outcome == expected, decided.reason


def test_hook_answer_extension_request_is_the_owners_or_not_found(with_fake: Hooks) -> None:
    view = SessionState().view()
    assert with_fake.answer_extension_request(FAKE, "_fake/ping", None, view).result == {
        "pong": True
    }
    for owner, method in ((FAKE, "_fake/other"), (OTHER, "_fake/ping")):
        answer = with_fake.answer_extension_request(owner, method, {}, view)
        assert (answer.error_code, answer.result) == (-32601, None)
        assert method in answer.error_message


def test_a_plugin_decides_client_actions_for_its_provider(with_fake: Hooks) -> None:
    action = ClientAction(kind="command", command_line="make test")
    assert with_fake.decide_client_action(FAKE, action, Policy(name="read-only")).outcome == "allow"
    assert with_fake.decide_client_action(OTHER, action, Policy(name="read-only")).outcome == (
        "refuse"
    )


def test_workspace_write_judges_an_edit_by_its_real_path(with_fake: Hooks, tmp_path: Path) -> None:
    """A symlink in the workspace that leads out does not make its target the workspace's."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "dirlink").symlink_to("/etc")
    options = (
        {"optionId": "once", "kind": "allow_once"},
        {"optionId": "no", "kind": "reject_once"},
    )
    policy = Policy(name="workspace-write", workspace=(str(workspace),))
    for path, expected in ((f"{workspace}/dirlink/evil.conf", "no"), (f"{workspace}/a.py", "once")):
        call = tool_call(kind="edit", locations=[{"path": path}])
        query = PermissionQuery(request_id="1", tool_call=call, options=options)
        assert with_fake.decide_permission(OTHER, query, policy).option_id == expected, path


def test_hook_render_item_text(with_fake: Hooks) -> None:
    state = session()
    call = tool_call(kind="edit", content=EDIT, state=state)
    item = with_fake.project_file_change(OTHER, call, state.view())
    text = with_fake.render_item_text(item)
    assert text.startswith("Edited /ws/a.py +1 -1\n--- /ws/a.py")
    assert with_fake.render_item_text(AssistantMessageItem(text="hi")) == "Assistant: hi"
    assert with_fake.render_item_text(ToolItem(title="thinking, said fake")) == "fake text"


def test_hook_on_session_update_sees_every_readable_update() -> None:
    seen: list[tuple[str, str]] = []

    class Observer:
        @hookimpl
        def on_session_update(self, provider: Provider, update: Any, session: Any) -> None:
            seen.append((provider.id, update.update.session_update))

    from acp_adapters import project_capture
    from acp_adapters.testing import v1_traffic

    entries = v1_traffic(
        "x",
        [
            (
                "hi",
                [
                    {
                        "method": "session/update",
                        "params": {
                            "sessionUpdate": "agent_message_chunk",
                            "content": {"type": "text", "text": "yo"},
                        },
                    },
                    {"method": "session/update", "params": {"sessionUpdate": "bogus"}},
                ],
            )
        ],
    )
    project_capture(entries, pm=plugin_manager(Observer()))
    assert seen == [("acp", "agent_message_chunk")]


def test_unknown_provider_gets_exactly_the_builtin_projection(
    with_fake: Hooks, pm: pluggy.PluginManager
) -> None:
    plain = Hooks(pm)
    state = session()
    call = tool_call(kind="edit", content=EDIT, state=state)
    stranger = provider("nobody-owns-this")
    assert with_fake.project_tool_call(stranger, call, state.view()) == plain.project_tool_call(
        stranger, call, state.view()
    )
