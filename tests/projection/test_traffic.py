"""The traffic reader: what a session's messages, both ways, and its disk lines make of it.

Each case is a capture built line by line and projected with ``project_capture``; live
sessions feed the same reader, so what holds here holds live.
"""

from __future__ import annotations

from typing import Any

import pluggy

from acp_adapters import (
    AssistantMessageItem,
    FileChangeItem,
    Hooks,
    ProviderRegistry,
    diff_patch,
    project_capture,
)
from acp_adapters.projection import routing as routing_module
from acp_adapters.projection.projector import Projector
from acp_adapters.projection.traffic import Traffic
from acp_adapters.timeline import Timeline
from diff_helpers import apply_patch

SESSION = "s"
PATH = "/ws/notes.txt"
OLD = "one\ntwo\nthree\nfour\n"
NEW = "one\ntwo\nTHREE\nfour\n"


def to_agent(message: dict[str, Any]) -> dict[str, Any]:
    return {"dir": "client->agent", "t": 0.0, "msg": {"jsonrpc": "2.0", **message}}


def to_client(message: dict[str, Any]) -> dict[str, Any]:
    return {"dir": "agent->client", "t": 0.0, "msg": {"jsonrpc": "2.0", **message}}


def disk(path: str, phase: str, content: str | None, **fields: Any) -> dict[str, Any]:
    return {"dir": "disk", "t": 0.0, "path": path, "phase": phase, "content": content, **fields}


def update(body: dict[str, Any], session: str | None = SESSION) -> dict[str, Any]:
    params: dict[str, Any] = {"update": body}
    if session is not None:
        params["sessionId"] = session
    return to_client({"method": "session/update", "params": params})


def said(text: str) -> dict[str, Any]:
    return {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}


def opening(cwd: str = "/ws") -> list[dict[str, Any]]:
    """initialize and session/new (v1), the session ``s`` in ``cwd``."""
    return [
        to_agent({"id": 0, "method": "initialize", "params": {"protocolVersion": 1}}),
        to_client({"id": 0, "result": {"protocolVersion": 1, "agentCapabilities": {}}}),
        to_agent({"id": 1, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}}),
        to_client({"id": 1, "result": {"sessionId": SESSION}}),
    ]


def turn(*lines: dict[str, Any], prompt_id: int = 2) -> list[dict[str, Any]]:
    """One v1 turn: the prompt, ``lines``, the end of the turn."""
    prompt = {"sessionId": SESSION, "prompt": [{"type": "text", "text": "go"}]}
    return [
        to_agent({"id": prompt_id, "method": "session/prompt", "params": prompt}),
        *lines,
        to_client({"id": prompt_id, "result": {"stopReason": "end_turn"}}),
    ]


def project(*lines: dict[str, Any], pm: pluggy.PluginManager) -> Timeline:
    return project_capture([*opening(), *turn(*lines)], pm=pm)


def kinds(timeline: Timeline) -> list[str]:
    return [item.kind for item in timeline.items]


def agents_patch(path: str, old: str | None, new: str) -> str | None:
    """The patch of the agent's own diff, as sent (nothing placed, nothing read)."""
    return diff_patch([{"type": "diff", "path": path, "oldText": old, "newText": new}])


def file_change(timeline: Timeline) -> FileChangeItem:
    (change,) = [item for item in timeline.items if isinstance(item, FileChangeItem)]
    return change


def edit(path: str, old: str | None, new: str, status: str = "completed") -> dict[str, Any]:
    """A tool call (edit) reporting the diff ``old`` -> ``new`` of ``path``."""
    return update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "e",
            "title": "edit",
            "kind": "edit",
            "status": status,
            "content": [{"type": "diff", "path": path, "oldText": old, "newText": new}],
            "locations": [{"path": path}],
        }
    )


def read(request_id: int, path: str, content: str, **range_: int) -> list[dict[str, Any]]:
    """The agent reads ``path`` (a range of lines, with ``line``/``limit``); the client answers."""
    params = {"sessionId": SESSION, "path": path, **range_}
    return [
        to_client({"id": request_id, "method": "fs/read_text_file", "params": params}),
        to_agent({"id": request_id, "result": {"content": content}}),
    ]


PERMISSION_OPTIONS = [
    {"optionId": "y", "name": "Yes", "kind": "allow_once"},
    {"optionId": "n", "name": "No", "kind": "reject_once"},
]


def permission(request_id: int, session: str = SESSION) -> dict[str, Any]:
    return to_client(
        {
            "id": request_id,
            "method": "session/request_permission",
            "params": {
                "sessionId": session,
                "toolCall": {"toolCallId": "p", "title": "run it", "kind": "execute"},
                "options": PERMISSION_OPTIONS,
            },
        }
    )


# --- whose session ----------------------------------------------------------------------------


def test_an_update_for_this_session_makes_an_item(pm: pluggy.PluginManager) -> None:
    """The control for the two below: the same update, for this session, is an item."""
    assert kinds(project(update(said("hello")), pm=pm)) == ["user_message", "assistant_message"]


def test_an_update_for_another_session_makes_no_item(pm: pluggy.PluginManager) -> None:
    timeline = project(update(said("not yours"), session="other"), pm=pm)
    assert kinds(timeline) == ["user_message"]


def test_an_update_naming_no_session_makes_no_item(pm: pluggy.PluginManager) -> None:
    timeline = project(update(said("whose?"), session=None), pm=pm)
    assert kinds(timeline) == ["user_message"]


def test_a_permission_request_for_another_session_makes_no_item(
    pm: pluggy.PluginManager,
) -> None:
    answer = to_agent({"id": 7, "result": {"outcome": {"outcome": "selected", "optionId": "y"}}})
    ours = project(permission(7), answer, pm=pm)
    assert kinds(ours) == ["user_message", "approval_request"]  # the control
    theirs = project(permission(7, session="other"), answer, pm=pm)
    assert kinds(theirs) == ["user_message"]
    assert theirs.state.permissions == {}


# --- reads ------------------------------------------------------------------------------------


def test_a_whole_read_is_the_files_content_a_fragment_is_placed_in(
    pm: pluggy.PluginManager,
) -> None:
    change = file_change(project(*read(5, PATH, OLD), edit(PATH, "three", "THREE"), pm=pm))
    assert change.patch_source == "placed"
    assert apply_patch(change.diff_str or "", {PATH: OLD}) == {PATH: NEW}


def test_a_read_of_a_range_of_lines_is_not_the_files_content(pm: pluggy.PluginManager) -> None:
    """The answer to a read of line 3 only is "three\\n": taken as the file, the fragment
    would be placed in it, and the patch would say the file is one line long."""
    lines = read(5, PATH, "three\n", line=3, limit=1)
    change = file_change(project(*lines, edit(PATH, "three", "THREE"), pm=pm))
    assert change.patch_source == "agent"
    assert change.diff_str == agents_patch(PATH, "three", "THREE")


def test_a_read_with_only_a_limit_is_not_the_files_content(pm: pluggy.PluginManager) -> None:
    lines = read(5, PATH, "one\n", limit=1)
    change = file_change(project(*lines, edit(PATH, "one", "ONE"), pm=pm))
    assert change.patch_source == "agent"
    assert change.diff_str == agents_patch(PATH, "one", "ONE")


def test_a_read_with_only_a_line_is_not_the_files_content(pm: pluggy.PluginManager) -> None:
    lines = read(5, PATH, "three\nfour\n", line=3)
    change = file_change(project(*lines, edit(PATH, "three", "THREE"), pm=pm))
    assert change.patch_source == "agent"


# --- a file that is not there -----------------------------------------------------------------


def test_an_empty_answer_for_a_missing_file_is_not_its_content(pm: pluggy.PluginManager) -> None:
    """The client answered a read of a file that does not exist with "" (it was told to):
    the ``missing`` disk line says so, and an edit from "" is the file's creation."""
    lines = [
        to_client({"id": 5, "method": "fs/read_text_file", "params": {"path": PATH}}),
        disk(PATH, "missing", None, toolCallId=None),
        to_agent({"id": 5, "result": {"content": ""}}),
        edit(PATH, "", "brand new\n"),
    ]
    change = file_change(project(*lines, pm=pm))
    assert change.diff_str is not None
    assert change.diff_str.startswith(f"--- /dev/null\n+++ {PATH}\n")
    assert change.operations == {PATH: "add"}
    assert change.additions == 1
    assert change.deletions == 0


def test_an_empty_answer_without_the_missing_line_is_an_empty_file(
    pm: pluggy.PluginManager,
) -> None:
    lines = [*read(5, PATH, ""), edit(PATH, "", "brand new\n")]
    change = file_change(project(*lines, pm=pm))
    assert change.diff_str is not None
    assert change.diff_str.startswith(f"--- {PATH}\n+++ {PATH}\n")
    assert change.operations == {PATH: "modify"}


def test_the_missing_line_covers_only_its_own_path(pm: pluggy.PluginManager) -> None:
    other = "/ws/other.txt"
    lines = [
        to_client({"id": 5, "method": "fs/read_text_file", "params": {"path": other}}),
        disk(other, "missing", None, toolCallId=None),
        to_agent({"id": 5, "result": {"content": ""}}),
        *read(6, PATH, ""),
        edit(PATH, "", "brand new\n"),
    ]
    change = file_change(project(*lines, pm=pm))
    assert change.operations == {PATH: "modify"}


# --- the file as the client found it before it wrote it ---------------------------------------


def _written(found: dict[str, Any]) -> list[dict[str, Any]]:
    """An edit that reports a fragment, its write through the client with ``found`` before it."""
    write = {"sessionId": SESSION, "path": PATH, "content": NEW}
    return [
        edit(PATH, "three", "THREE", status="in_progress"),
        to_client({"id": 9, "method": "fs/write_text_file", "params": write}),
        found,
        to_agent({"id": 9, "result": {}}),
        update({"sessionUpdate": "tool_call_update", "toolCallId": "e", "status": "completed"}),
    ]


def test_the_file_found_before_a_write_gives_the_true_patch(pm: pluggy.PluginManager) -> None:
    """No read came before: the ``write`` disk line alone is the file's before content."""
    change = file_change(project(*_written(disk(PATH, "write", OLD, toolCallId="e")), pm=pm))
    assert change.patch_source == "client_fs"
    assert apply_patch(change.diff_str or "", {PATH: OLD}) == {PATH: NEW}
    assert (change.additions, change.deletions) == (1, 1)


def test_the_file_found_before_a_write_needs_no_tool_call_id(pm: pluggy.PluginManager) -> None:
    change = file_change(project(*_written(disk(PATH, "write", OLD, toolCallId=None)), pm=pm))
    assert change.patch_source == "client_fs"
    assert apply_patch(change.diff_str or "", {PATH: OLD}) == {PATH: NEW}


def test_a_file_not_found_before_a_write_is_created(pm: pluggy.PluginManager) -> None:
    lines = _written(disk(PATH, "write", None, toolCallId="e"))
    change = file_change(project(*lines, pm=pm))
    assert change.patch_source == "client_fs"
    assert change.diff_str is not None
    assert change.diff_str.startswith(f"--- /dev/null\n+++ {PATH}\n")


def test_an_unreadable_file_before_a_write_claims_no_patch(pm: pluggy.PluginManager) -> None:
    """The client could not read the file before it wrote it: the write's patch is not known,
    and is not made up (from nothing, or from an earlier read)."""
    lines = _written(disk(PATH, "write", None, toolCallId="e", unreadable=True))
    change = file_change(project(*lines, pm=pm))
    assert change.patch_source != "client_fs"
    assert change.patch_source == "agent"
    assert change.diff_str == agents_patch(PATH, "three", "THREE")


def test_an_unreadable_file_before_a_write_overrides_an_earlier_read(
    pm: pluggy.PluginManager,
) -> None:
    """A read long before says "one line"; the file the write replaced is not known: the
    patch is not built from the stale read."""
    lines = [*read(5, PATH, "stale\n"), *_written(disk(PATH, "write", None, unreadable=True))]
    change = file_change(project(*lines, pm=pm))
    assert change.patch_source != "client_fs"
    assert "-stale" not in (change.diff_str or "")
    assert change.diff_str == agents_patch(PATH, "three", "THREE")


# --- answers that keep the session current ----------------------------------------------------


def test_a_session_load_answer_gives_the_requested_session_id(pm: pluggy.PluginManager) -> None:
    lines = [
        to_agent({"id": 0, "method": "initialize", "params": {"protocolVersion": 1}}),
        to_client({"id": 0, "result": {"protocolVersion": 1, "agentCapabilities": {}}}),
        to_agent(
            {
                "id": 1,
                "method": "session/load",
                "params": {"sessionId": "loaded", "cwd": "/ws", "mcpServers": []},
            }
        ),
        to_client({"id": 1, "result": {}}),
        to_agent(
            {"id": 2, "method": "session/prompt", "params": {"sessionId": "loaded", "prompt": []}}
        ),
        to_client(
            {"method": "session/update", "params": {"sessionId": "loaded", "update": said("a")}}
        ),
        to_client(
            {"method": "session/update", "params": {"sessionId": "other", "update": said("b")}}
        ),
        to_client({"id": 2, "result": {"stopReason": "end_turn"}}),
    ]
    timeline = project_capture(lines, pm=pm)
    assert timeline.session_id == "loaded"
    assert timeline.state.cwd == "/ws"
    said_ = [i.text for i in timeline.items if isinstance(i, AssistantMessageItem)]
    assert said_ == ["a"]


def test_a_refused_session_load_sets_no_session_id(pm: pluggy.PluginManager) -> None:
    lines = [
        to_agent({"id": 0, "method": "initialize", "params": {"protocolVersion": 1}}),
        to_client({"id": 0, "result": {"protocolVersion": 1, "agentCapabilities": {}}}),
        to_agent(
            {
                "id": 1,
                "method": "session/load",
                "params": {"sessionId": "loaded", "cwd": "/ws", "mcpServers": []},
            }
        ),
        to_client({"id": 1, "error": {"code": -32602, "message": "no such session"}}),
    ]
    assert project_capture(lines, pm=pm).session_id is None


def _set_mode(answer: dict[str, Any]) -> list[dict[str, Any]]:
    params = {"sessionId": SESSION, "modeId": "architect"}
    return [
        to_agent({"id": 3, "method": "session/set_mode", "params": params}),
        to_client({"id": 3, **answer}),
    ]


def test_a_set_mode_answer_sets_the_current_mode(pm: pluggy.PluginManager) -> None:
    timeline = project_capture([*opening(), *_set_mode({"result": {}})], pm=pm)
    assert timeline.state.current_mode == "architect"


def test_a_refused_set_mode_leaves_the_mode(pm: pluggy.PluginManager) -> None:
    refused = {"error": {"code": -32602, "message": "no such mode"}}
    timeline = project_capture([*opening(), *_set_mode(refused)], pm=pm)
    assert timeline.state.current_mode is None


def test_a_set_config_option_answer_keeps_its_options(pm: pluggy.PluginManager) -> None:
    option = {
        "id": "model",
        "name": "Model",
        "type": "select",
        "currentValue": "slow",
        "options": [{"value": "fast", "name": "Fast"}, {"value": "slow", "name": "Slow"}],
    }
    params = {"sessionId": SESSION, "configId": "model", "value": "slow"}
    lines = [
        *opening(),
        to_agent({"id": 3, "method": "session/set_config_option", "params": params}),
        to_client({"id": 3, "result": {"configOptions": [option]}}),
    ]
    timeline = project_capture(lines, pm=pm)
    (kept,) = timeline.state.config_options
    assert (kept.id, kept.name, kept.current_value) == ("model", "Model", "slow")
    assert [c.value for c in kept.choices] == ["fast", "slow"]
    assert timeline.session_id == SESSION


# --- bounded memory ---------------------------------------------------------------------------


def _traffic(pm: pluggy.PluginManager) -> Traffic:
    registry = ProviderRegistry.collect(pm)
    traffic = Traffic(Projector(Hooks(pm), registry.get("acp")), registry)
    for line in [*opening(), turn()[0]]:
        traffic.entry(line)
    return traffic


def test_unanswered_agent_requests_are_bounded(pm: pluggy.PluginManager) -> None:
    traffic = _traffic(pm)
    limit = routing_module.MAX_WAITING
    for number in range(limit + 50):
        params = {"sessionId": SESSION, "path": f"/ws/{number}.txt"}
        traffic.entry(to_client({"id": number, "method": "fs/read_text_file", "params": params}))
        assert len(traffic.router.agent_requests) <= limit
    assert len(traffic.router.agent_requests) == limit


def test_past_the_bound_the_oldest_request_is_forgotten_the_newest_kept(
    pm: pluggy.PluginManager,
) -> None:
    traffic = _traffic(pm)
    limit = routing_module.MAX_WAITING
    for number in range(limit + 1):
        params = {"sessionId": SESSION, "path": f"/ws/{number}.txt"}
        traffic.entry(to_client({"id": number, "method": "fs/read_text_file", "params": params}))
    # The answer to the oldest is no one's now; the newest is still followed.
    traffic.entry(to_agent({"id": 0, "result": {"content": "old\n"}}))
    traffic.entry(to_agent({"id": limit, "result": {"content": "new\n"}}))
    view = traffic.projector.state.view()
    assert view.file_before("/ws/0.txt", 10**9) is None
    newest = view.file_before(f"/ws/{limit}.txt", 10**9)
    assert newest is not None
    assert newest.content == "new\n"


def test_unanswered_client_requests_are_bounded(pm: pluggy.PluginManager) -> None:
    traffic = _traffic(pm)
    limit = routing_module.MAX_WAITING
    for number in range(100, 100 + limit + 50):
        params = {"sessionId": SESSION, "modeId": "m"}
        traffic.entry(to_agent({"id": number, "method": "session/set_mode", "params": params}))
    assert len(traffic.router.client_requests) <= limit
