"""What every provider owes: run over every session of the loaded providers.

``tox -e provider-X`` loads one provider plugin alone (``ACP_ADAPTERS_PLUGINS``);
sessions of providers that are not loaded are left out, those of agents no
plugin claims always run. The assertions, each a test below:

* every edit tool call yields exactly one file_change item;
* where a session shows the files' content, the patches, applied in order to the
  workspace before, give the workspace after;
* an approved write's file_change carries what it wrote;
* every tool call ends in a terminal status when its turn ends;
* item ordinals strictly increase, and every item survives a JSON round trip;
* a provider no plugin owns gets exactly the built-in projection;
* no plugin answers for a provider it does not own.
"""

from __future__ import annotations

import json
import posixpath
from pathlib import Path
from typing import Any

import jsonschema
import pluggy
import pytest
from pydantic import TypeAdapter

from acp_adapters import (
    ErrorItem,
    FileChangeItem,
    Hooks,
    PlanItem,
    Provider,
    ProviderRegistry,
    Timeline,
    TimelineItem,
    get_plugin_manager,
    project_capture,
    timeline_json_schema,
)
from acp_adapters.plugin.manager import DEFAULT_PLUGINS
from acp_adapters.plugin.permissions import ClientAction, PermissionQuery, Policy
from acp_adapters.projection.negotiation import agent_name
from acp_adapters.projection.projector import Projector
from acp_adapters.projection.traffic import Traffic, _entries
from acp_adapters.registry import bundled_registry, match_agent
from diff_helpers import apply_patch

from .scenarios import KINDS, SCENARIOS, Scenario

DOCS = Path(__file__).parent.parent.parent / "docs"
PM = get_plugin_manager()
REGISTRY = ProviderRegistry.collect(PM)
LOADED = [s for s in SCENARIOS if s.provider in REGISTRY]
TERMINAL = {"completed", "failed", "cancelled"}
ITEM = TypeAdapter(TimelineItem)


def _timeline(scenario: Scenario, pm: pluggy.PluginManager = PM) -> Timeline:
    return project_capture(scenario.path, pm=pm)


def _with_provider(scenario: Scenario, pm: pluggy.PluginManager, provider: Provider) -> Timeline:
    projector = Projector(Hooks(pm), provider, fixed_provider=True)
    traffic = Traffic(projector, ProviderRegistry.collect(pm))
    for entry in _entries(scenario.path, []):
        traffic.entry(entry)
    return projector.timeline()


def _expected_provider(scenario: Scenario) -> str:
    """The scenario's provider; an agent no built-in plugin claims may be a third party's."""
    if scenario.provider != "acp":
        return scenario.provider
    for entry in _entries(scenario.path, []):
        message = entry.get("msg")
        result = message.get("result") if isinstance(message, dict) else None
        if isinstance(result, dict) and "protocolVersion" in result:
            claimed = REGISTRY.for_agent(agent_name(result)).id
            if claimed != "acp":
                return claimed
            # An agent of the ACP registry, known by its name when the registry plugin is in.
            known = match_agent(agent_name(result) or "", bundled_registry().agents)
            if known is not None and f"registry:{known.id}" in REGISTRY:
                return f"registry:{known.id}"
            return "acp"
    return "acp"


def test_sessions_of_the_loaded_providers_are_found() -> None:
    assert any(s.provider == "acp" for s in LOADED)
    for scenario in LOADED:
        assert _timeline(scenario).provider.id == _expected_provider(scenario), scenario.name


@pytest.mark.parametrize("scenario", LOADED, ids=lambda s: s.name)
def test_every_edit_tool_call_yields_one_file_change(scenario: Scenario) -> None:
    timeline = _timeline(scenario)
    changes = timeline.of_kind("file_change")
    assert len(changes) == scenario.edits
    assert len({item.tool_call_id for item in changes}) == len(changes)
    edits = [
        call
        for call in timeline.state.tool_calls.values()
        if call.reported and call.kind in ("edit", "delete", "move")
    ]
    assert {call.id for call in edits} <= {item.tool_call_id for item in changes}


@pytest.mark.parametrize(
    "scenario", [s for s in LOADED if s.after is not None], ids=lambda s: s.name
)
def test_patches_applied_in_order_give_the_workspace_after(scenario: Scenario) -> None:
    assert scenario.before is not None
    assert scenario.after is not None
    files = dict(scenario.before)
    for item in _timeline(scenario).of_kind("file_change"):
        assert isinstance(item, FileChangeItem)
        if item.status != "completed":
            continue  # refused, cancelled, or cut short by a crash: nothing was written
        assert item.diff_str is not None, item
        files.update(apply_patch(_plain(item.diff_str), files))
    assert files == scenario.after


def _plain(patch: str) -> str:
    """A v2 git patch without its ``diff --git`` and mode lines, for the plain applier."""
    return "".join(
        line
        for line in patch.splitlines(keepends=True)
        if not line.startswith(("diff --git ", "new file mode", "deleted file mode", "index "))
    )


@pytest.mark.parametrize("scenario", LOADED, ids=lambda s: s.name)
def test_an_approved_write_carries_what_it_wrote(scenario: Scenario) -> None:
    """Every line an approved edit wrote that the file did not have shows as ``+line``."""
    timeline = _timeline(scenario)
    changes = {item.tool_call_id: item for item in timeline.of_kind("file_change")}
    checked = approved = 0
    for approval in timeline.of_kind("approval_request"):
        change = changes.get(approval.tool_call_id)
        if change is None or not (approval.option_kind or "").startswith("allow"):
            continue  # not an edit (a command, a read), or refused
        assert isinstance(change, FileChangeItem)
        if change.diff_str is None and change.diff_omitted_reason == "capped":
            continue  # past the rewrite cap the patch is left out, and says so
        approved += 1
        added = change.diff_str.splitlines() if change.diff_str else []
        for old, new in _written(timeline, approval.tool_call_id or ""):
            for line in set(new.splitlines()) - set((old or "").splitlines()):
                assert f"+{line}" in added, (line, change.diff_str)
                checked += 1
    assert checked or not approved


@pytest.mark.parametrize("scenario", LOADED, ids=lambda s: s.name)
def test_a_refused_edit_shows_what_it_proposed(scenario: Scenario) -> None:
    """An edit refused when asked ends failed or cancelled, with the patch it proposed."""
    timeline = _timeline(scenario)
    changes = {item.tool_call_id: item for item in timeline.of_kind("file_change")}
    for approval in timeline.of_kind("approval_request"):
        change = changes.get(approval.tool_call_id)
        if change is None or not (approval.option_kind or "").startswith("reject"):
            continue
        assert isinstance(change, FileChangeItem)
        assert change.status in ("failed", "cancelled"), change
        call = timeline.state.tool_calls[approval.tool_call_id or ""]
        if call.diffs_reported:
            assert change.diff_str or change.diff_omitted_reason == "capped", change
            assert change.additions or change.deletions


def _written(timeline: Timeline, tool_call_id: str) -> list[tuple[str | None, str]]:
    """(old, new) of what the agent wrote for a tool call, as the session itself shows it:
    its fs writes with what was read before, else the disk read around it, else the old and
    new text it reported."""
    view = timeline.state.view()
    writes = view.writes_of(tool_call_id)
    if writes:
        result = []
        for write in writes:
            before = view.file_before(write.path, write.seq)
            result.append((before.content if before else None, write.content or ""))
        return result
    # The files as the client read them from the disk as the edit started and completed.
    seen: dict[str, dict[str, str | None]] = {}
    for event in view.disk_of(tool_call_id):
        seen.setdefault(event.path, {})[event.op] = event.content
    around = [
        (reads.get("disk_before"), after)
        for reads in seen.values()
        if (after := reads.get("disk_after")) is not None
    ]
    if around:
        return around
    call = timeline.state.tool_calls[tool_call_id]
    claude = call.meta_seen.get("claudeCode", {}).get("toolResponse", {})
    if isinstance(claude, dict) and "originalFile" in claude:
        new = claude.get("content") or ""
        if not new and isinstance(call.raw_input, dict):
            new = str(call.raw_input.get("new_string", ""))
        return [(claude.get("originalFile"), new)]
    written = [
        (getattr(item, "old_text", None), item.new_text)
        for item in call.content
        if hasattr(item, "new_text")
    ]
    for item in call.content:  # v2: the lines the agent's own patch adds
        patch = getattr(getattr(item, "patch", None), "text", None)
        if isinstance(patch, str):
            added = [
                line[1:]
                for line in patch.splitlines()
                if line.startswith("+") and not line.startswith("+++")
            ]
            written.append((None, "\n".join(added)))
    return written


@pytest.mark.parametrize("scenario", LOADED, ids=lambda s: s.name)
def test_every_tool_call_ends_in_a_terminal_status(scenario: Scenario) -> None:
    timeline = _timeline(scenario)
    assert timeline.state.turn_state.state == "idle" or timeline.state.turn == 0
    for item in timeline:
        if item.tool_call_id is not None and item.kind != "approval_request":
            assert item.status in TERMINAL, item


@pytest.mark.parametrize("scenario", LOADED, ids=lambda s: s.name)
def test_ordinals_increase_and_items_round_trip(scenario: Scenario) -> None:
    timeline = _timeline(scenario)
    ordinals = [item.ordinal for item in timeline]
    assert ordinals == sorted(set(ordinals))
    for data in timeline.to_json():
        assert ITEM.validate_python(json.loads(json.dumps(data))).model_dump(mode="json") == data


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_a_provider_no_plugin_owns_gets_exactly_the_builtin_projection(scenario: Scenario) -> None:
    stranger = Provider(id="contract-nobody", name="Nobody")
    builtin_only = get_plugin_manager(load_entrypoints=False, environ={})
    loaded = _with_provider(scenario, PM, stranger).to_json()
    assert loaded == _with_provider(scenario, builtin_only, stranger).to_json()


def _foreign_impls() -> list[tuple[str, pluggy.HookImpl]]:
    hooks = (
        "project_tool_call",
        "project_file_change",
        "project_diff_patch",
        "normalize_diff_content",
        "decide_permission",
        "decide_client_action",
        "answer_extension_request",
    )
    return [
        (name, impl)
        for name in hooks
        for impl in getattr(PM.hook, name).get_hookimpls()
        if impl.plugin_name not in DEFAULT_PLUGINS
    ]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_no_plugin_answers_for_a_provider_it_does_not_own(scenario: Scenario) -> None:
    stranger = Provider(id="contract-nobody", name="Nobody")
    timeline = _timeline(scenario)
    view = timeline.state.view()
    for call in timeline.state.tool_calls.values():
        arguments: dict[str, Any] = {
            "provider": stranger,
            "tool_call": call,
            "session": view,
            "content": call.content,
            "limits": view.diff_limits,
            "request": PermissionQuery(request_id="1", tool_call=call),
            "action": ClientAction(kind="command", command_line="true", tool_call=call),
            "policy": Policy(name="full-access"),
            "method": "_contract/anything",
            "params": {},
        }
        for hook, impl in _foreign_impls():
            answer = impl.function(**{arg: arguments[arg] for arg in impl.argnames})
            assert answer is None, (impl.plugin_name, hook)


SCHEMA = jsonschema.Draft202012Validator(timeline_json_schema())


@pytest.mark.parametrize("scenario", LOADED, ids=lambda s: s.name)
def test_the_timeline_json_validates_against_its_schema(scenario: Scenario) -> None:
    stored = json.loads(_timeline(scenario).dumps())  # as an application would persist it
    SCHEMA.validate(stored)


def test_the_published_schema_is_the_models_schema() -> None:
    published = json.loads((DOCS / "timeline.schema.json").read_text(encoding="utf-8"))
    assert published == timeline_json_schema(), "run python tools/generate_timeline_schema.py"


@pytest.mark.parametrize("scenario", LOADED, ids=lambda s: s.name)
def test_every_pending_permission_is_resolved(scenario: Scenario) -> None:
    timeline = _timeline(scenario)
    for request in timeline.state.permissions.values():
        assert request.outcome is not None, request
    for item in timeline.of_kind("approval_request"):
        assert item.status in ("completed", "cancelled"), item


@pytest.mark.parametrize("scenario", LOADED, ids=lambda s: s.name)
def test_no_fs_or_terminal_request_escapes_the_workspace(scenario: Scenario) -> None:
    """A path the agent names outside the workspace was answered with an error."""
    asked: dict[Any, str] = {}
    answers: dict[Any, dict[str, Any]] = {}
    for entry in _entries(scenario.path, []):
        message = entry.get("msg")
        if not isinstance(message, dict) or "id" not in message:
            continue
        key = json.dumps(message["id"])
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        if entry["dir"] == "agent->client" and str(message.get("method")).startswith(
            ("fs/", "terminal/create")
        ):
            where = params.get("path", params.get("cwd"))
            if isinstance(where, str):
                asked[key] = where
        elif entry["dir"] == "client->agent" and "method" not in message:
            answers[key] = message
    for key, where in asked.items():
        if not _inside_workspace(where):
            assert "error" in answers.get(key, {"error": "no answer"}), (where, answers.get(key))


def _inside_workspace(path: str) -> bool:
    if not path.startswith("<workspace>"):
        return False
    resolved = posixpath.normpath(path.replace("<workspace>", "/workspace", 1))
    return resolved == "/workspace" or resolved.startswith("/workspace/")


def _turns(timeline: Timeline) -> int:
    return len([i for i in timeline.of_kind("user_message") if i.id.startswith("prompt:")])


def _shows(timeline: Timeline, kind: str) -> bool:
    """Whether the session shows the named scenario ``kind``."""
    changes = [i for i in timeline.of_kind("file_change") if isinstance(i, FileChangeItem)]
    approvals = {i.tool_call_id: i for i in timeline.of_kind("approval_request")}

    def approved(item: FileChangeItem) -> bool:
        approval = approvals.get(item.tool_call_id)
        return approval is not None and (approval.option_kind or "").startswith("allow")

    if kind == "write-approved":
        return any(c.status == "completed" and approved(c) for c in changes)
    if kind == "edit-existing":
        return any(c.status == "completed" and "modify" in c.operations.values() for c in changes)
    if kind == "multi-file-patch":
        return any(len(c.paths) > 1 and "add" in c.operations.values() for c in changes)
    if kind == "capped-rewrite":
        return any(
            c.diff_omitted_reason == "capped" or (c.diff_str and c.deletions >= 600)
            for c in changes
        )
    if kind == "rejected-permission":
        refused = [i for i in approvals.values() if (i.option_kind or "").startswith("reject")]
        return bool(refused) and all(
            c.status in ("failed", "cancelled") for c in changes if c.tool_call_id in approvals
        )
    if kind == "cancelled-turn":
        return any(i.status == "cancelled" for i in approvals.values()) or (
            timeline.state.turn_state.stop_reason == "cancelled"
        )
    if kind == "shell-command":
        return any(
            i.status == "completed" and (i.output or "").strip()  # type: ignore[union-attr]
            for i in timeline.of_kind("command_execution")
        )
    if kind == "plan":
        return any(isinstance(i, PlanItem) and i.entries for i in timeline)
    if kind == "multi-turn":
        return _turns(timeline) >= 2
    if kind == "crash-mid-turn":
        last = timeline.items[-1]
        return isinstance(last, ErrorItem) and last.message.startswith("the agent exited")
    raise AssertionError(f"unknown scenario {kind}")


@pytest.mark.parametrize("scenario", [s for s in LOADED if s.shows], ids=lambda s: s.name)
def test_each_session_shows_its_named_scenarios(scenario: Scenario) -> None:
    timeline = _timeline(scenario)
    for kind in scenario.shows:
        assert _shows(timeline, kind), kind


#: Scenarios a provider's agent has no way to show.
NOT_APPLICABLE = {("claude", "multi-file-patch")}


def test_every_named_scenario_has_a_session_for_each_loaded_provider() -> None:
    """claude, codex, grok and the generic acp show every named scenario they can."""
    for provider in ("claude", "codex", "grok", "acp"):
        if provider not in REGISTRY:
            continue  # tox -e provider-X: only X's sessions run
        shown = {kind for s in SCENARIOS if s.provider == provider for kind in s.shows}
        missing = set(KINDS) - shown - {k for p, k in NOT_APPLICABLE if p == provider}
        assert not missing, provider
