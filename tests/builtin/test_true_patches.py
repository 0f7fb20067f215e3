"""The built-in ``project_file_change``: the true patch from the best evidence the session has.

Agents often report an edit as a fragment (``oldText``/``newText`` of a few lines), or not
at all. The patch a user sees must be the file's: the client's own write with the file
as it was (``client_fs``), the disk around the edit (``disk``), the whole-file diff the
permission request proposed (``permission``), the fragment placed in what the session
knew of the file (``placed``), and only then the agent's diff as sent (``agent``), with
a note where the fragment could not be placed. A patch that does not apply to the file
is never given.
"""

from __future__ import annotations

from typing import Any

import pluggy
from hypothesis import assume, given
from hypothesis import strategies as st

from acp_adapters import (
    ApprovalRequestItem,
    FileChangeItem,
    diff_patch,
    get_plugin_manager,
    project_capture,
)
from acp_adapters.timeline import Timeline
from diff_helpers import apply_patch

SESSION = "s"
PATH = "/ws/notes.txt"
OLD = "one\ntwo\nthree\nfour\n"
NEW = "one\ntwo\nTHREE\nfour\n"
OPTIONS = [
    {"optionId": "y", "name": "Yes", "kind": "allow_once"},
    {"optionId": "n", "name": "No", "kind": "reject_once"},
]

# --- a capture, line by line ------------------------------------------------------------------


def to_agent(message: dict[str, Any]) -> dict[str, Any]:
    return {"dir": "client->agent", "t": 0.0, "msg": {"jsonrpc": "2.0", **message}}


def to_client(message: dict[str, Any]) -> dict[str, Any]:
    return {"dir": "agent->client", "t": 0.0, "msg": {"jsonrpc": "2.0", **message}}


def update(body: dict[str, Any]) -> dict[str, Any]:
    return to_client({"method": "session/update", "params": {"sessionId": SESSION, "update": body}})


def diff(path: str, old: str | None, new: str) -> dict[str, Any]:
    return {"type": "diff", "path": path, "oldText": old, "newText": new}


def tool_call(
    call_id: str = "e", *, path: str = PATH, content: list[Any] | None = None, **fields: Any
) -> dict[str, Any]:
    """A ``tool_call`` update of an edit naming ``path``."""
    body = {
        "sessionUpdate": "tool_call",
        "toolCallId": call_id,
        "title": "edit",
        "kind": "edit",
        "status": "completed",
        "locations": [{"path": path}],
        **fields,
    }
    if content is not None:
        body["content"] = content
    return update(body)


def completed(call_id: str = "e", content: list[Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": call_id,
        "status": "completed",
    }
    if content is not None:
        body["content"] = content
    return update(body)


def read(request_id: int, path: str, content: str) -> list[dict[str, Any]]:
    """The agent reads the whole of ``path``; the client answers ``content``."""
    params = {"sessionId": SESSION, "path": path}
    return [
        to_client({"id": request_id, "method": "fs/read_text_file", "params": params}),
        to_agent({"id": request_id, "result": {"content": content}}),
    ]


def write(request_id: int, path: str, content: str, found: str | None) -> list[dict[str, Any]]:
    """The agent writes ``path`` through the client, which found ``found`` there just before
    (the ``write`` disk line, with no tool call named yet)."""
    params = {"sessionId": SESSION, "path": path, "content": content}
    found_line = {
        "dir": "disk",
        "t": 0.0,
        "toolCallId": None,
        "path": path,
        "phase": "write",
        "content": found,
    }
    return [
        to_client({"id": request_id, "method": "fs/write_text_file", "params": params}),
        found_line,
        to_agent({"id": request_id, "result": {}}),
    ]


def permission(
    request_id: int, call_id: str, content: list[Any], kind: str = "edit"
) -> dict[str, Any]:
    call = {"toolCallId": call_id, "title": "Edit notes.txt", "kind": kind, "content": content}
    params = {"sessionId": SESSION, "toolCall": call, "options": OPTIONS}
    return to_client({"id": request_id, "method": "session/request_permission", "params": params})


def answered(request_id: int, option_id: str | None) -> dict[str, Any]:
    if option_id is None:
        outcome: dict[str, Any] = {"outcome": "cancelled"}
    else:
        outcome = {"outcome": "selected", "optionId": option_id}
    return to_agent({"id": request_id, "result": {"outcome": outcome}})


def opening() -> list[dict[str, Any]]:
    return [
        to_agent({"id": 0, "method": "initialize", "params": {"protocolVersion": 1}}),
        to_client({"id": 0, "result": {"protocolVersion": 1, "agentCapabilities": {}}}),
        to_agent({"id": 1, "method": "session/new", "params": {"cwd": "/ws", "mcpServers": []}}),
        to_client({"id": 1, "result": {"sessionId": SESSION}}),
    ]


def turn(prompt_id: int, *lines: dict[str, Any], stop: str = "end_turn") -> list[dict[str, Any]]:
    prompt = {"sessionId": SESSION, "prompt": [{"type": "text", "text": "go"}]}
    return [
        to_agent({"id": prompt_id, "method": "session/prompt", "params": prompt}),
        *lines,
        to_client({"id": prompt_id, "result": {"stopReason": stop}}),
    ]


def project(*lines: dict[str, Any], pm: pluggy.PluginManager) -> Timeline:
    """One turn of these lines."""
    return project_capture([*opening(), *turn(2, *lines)], pm=pm)


def changes(timeline: Timeline) -> list[FileChangeItem]:
    return [item for item in timeline.items if isinstance(item, FileChangeItem)]


def the_change(timeline: Timeline) -> FileChangeItem:
    (change,) = changes(timeline)
    return change


def agents_patch(path: str, old: str | None, new: str) -> str | None:
    return diff_patch([diff(path, old, new)])


def applies(change: FileChangeItem, old: dict[str, str], new: dict[str, str]) -> None:
    assert change.diff_str is not None, change
    assert apply_patch(change.diff_str, old) == new, change.diff_str


FRAGMENT = [diff(PATH, "three", "THREE")]

# --- permission: the whole-file diff proposed, over a later fragment ---------------------------


def test_a_fragment_of_the_proposed_edit_gets_the_proposals_whole_patch(
    pm: pluggy.PluginManager,
) -> None:
    change = the_change(
        project(
            permission(7, "e", [diff(PATH, OLD, NEW)]),
            answered(7, "y"),
            completed("e", FRAGMENT),
            pm=pm,
        )
    )
    assert change.patch_source == "permission"
    assert change.status == "completed"
    applies(change, {PATH: OLD}, {PATH: NEW})
    assert (change.additions, change.deletions) == (1, 1)


def test_the_proposal_counts_after_a_tool_call_announced_the_fragment(
    pm: pluggy.PluginManager,
) -> None:
    """The usual order: the tool call (fragment), its permission (whole file), the update."""
    change = the_change(
        project(
            tool_call(content=FRAGMENT, status="pending"),
            permission(7, "e", [diff(PATH, OLD, NEW)]),
            answered(7, "y"),
            completed("e", FRAGMENT),
            pm=pm,
        )
    )
    assert change.patch_source == "permission"
    applies(change, {PATH: OLD}, {PATH: NEW})


def test_a_fragment_that_is_not_part_of_the_proposal_falls_back(
    pm: pluggy.PluginManager,
) -> None:
    """The update says "two" became "TWO"; the proposal changed "three": not the same edit."""
    other = [diff(PATH, "two", "TWO")]
    change = the_change(
        project(
            permission(7, "e", [diff(PATH, OLD, NEW)]),
            answered(7, "y"),
            completed("e", other),
            pm=pm,
        )
    )
    assert change.patch_source == "agent"
    assert change.diff_str == agents_patch(PATH, "two", "TWO")


def test_a_fragment_in_the_proposal_that_does_not_give_its_new_text_falls_back(
    pm: pluggy.PluginManager,
) -> None:
    """ "three" is in the proposed old text, but "three" -> "3" does not give its new text."""
    other = [diff(PATH, "three", "3")]
    change = the_change(
        project(
            permission(7, "e", [diff(PATH, OLD, NEW)]),
            answered(7, "y"),
            completed("e", other),
            pm=pm,
        )
    )
    assert change.patch_source != "permission"
    assert change.diff_str == agents_patch(PATH, "three", "3")


def test_a_proposal_that_is_not_the_file_the_session_read_is_not_taken(
    pm: pluggy.PluginManager,
) -> None:
    """The agent read the file before: a proposal whose old text is another file's would
    give a patch that does not apply; the fragment is placed in the file read instead."""
    real = "zero\nthree\n"
    change = the_change(
        project(
            *read(5, PATH, real),
            permission(7, "e", [diff(PATH, OLD, NEW)]),
            answered(7, "y"),
            completed("e", FRAGMENT),
            pm=pm,
        )
    )
    assert change.patch_source == "placed"
    applies(change, {PATH: real}, {PATH: "zero\nTHREE\n"})


# --- placed: the fragment in what the session knew of the file --------------------------------


def test_a_fragment_is_placed_in_the_file_read_before(pm: pluggy.PluginManager) -> None:
    change = the_change(project(*read(5, PATH, OLD), tool_call(content=FRAGMENT), pm=pm))
    assert change.patch_source == "placed"
    assert change.patch_note is None
    applies(change, {PATH: OLD}, {PATH: NEW})


def test_a_fragment_found_twice_is_not_placed(pm: pluggy.PluginManager) -> None:
    twice = "three\nfour\nthree\n"
    change = the_change(project(*read(5, PATH, twice), tool_call(content=FRAGMENT), pm=pm))
    assert change.patch_source == "agent"
    assert change.diff_str == agents_patch(PATH, "three", "THREE")
    assert change.patch_note is not None
    assert PATH in change.patch_note


def test_a_fragment_not_in_the_file_read_is_not_placed(pm: pluggy.PluginManager) -> None:
    change = the_change(
        project(*read(5, PATH, "nothing here\n"), tool_call(content=FRAGMENT), pm=pm)
    )
    assert change.patch_source == "agent"
    assert change.patch_note is not None


def test_a_fragment_named_relatively_is_placed_in_the_file_read_absolutely(
    pm: pluggy.PluginManager,
) -> None:
    """The agent read ``/ws/notes.txt``, then edited ``notes.txt``: one file in ``/ws``."""
    relative = [diff("notes.txt", "three", "THREE")]
    change = the_change(
        project(*read(5, PATH, OLD), tool_call(path="notes.txt", content=relative), pm=pm)
    )
    assert change.patch_source == "placed"
    (named,) = change.paths
    assert apply_patch(change.diff_str or "", {named: OLD}) == {named: NEW}


# --- client_fs: a write through the client, the tool call told after it ------------------------


def test_a_tool_call_naming_a_relative_path_claims_the_earlier_write_of_its_file(
    pm: pluggy.PluginManager,
) -> None:
    """The agent wrote ``/ws/notes.txt`` first, then reported the edit as ``notes.txt``."""
    change = the_change(
        project(
            *write(5, PATH, NEW, found=OLD),
            tool_call(path="notes.txt", content=[diff("notes.txt", NEW, NEW)]),
            pm=pm,
        )
    )
    assert change.patch_source == "client_fs"
    assert change.diff_omitted_reason is None
    (named,) = change.paths
    assert apply_patch(change.diff_str or "", {named: OLD}) == {named: NEW}


def test_a_tool_call_does_not_claim_a_write_of_an_earlier_turn(
    pm: pluggy.PluginManager,
) -> None:
    lines = [
        *opening(),
        *turn(2, *write(5, PATH, NEW, found=OLD)),
        *turn(3, tool_call(path="notes.txt", content=[diff("notes.txt", "two", "TWO")])),
    ]
    # The tool call's item (the first turn's write may be shown on its own).
    (change,) = [c for c in changes(project_capture(lines, pm=pm)) if c.tool_call_id == "e"]
    assert change.patch_source != "client_fs"
    assert change.turn == 2
    assert "-three" not in (change.diff_str or "")  # not the first turn's write


def test_the_clients_write_wins_over_a_fragment_placed_in_a_read(
    pm: pluggy.PluginManager,
) -> None:
    """The read says what the file was; the write says what it became: the write's patch,
    though the agent's fragment would also place in the read."""
    written = "one\ntwo\nTHREE\nfour\nfive\n"  # the agent wrote more than it reported
    change = the_change(
        project(
            *read(5, PATH, OLD),
            tool_call(content=FRAGMENT, status="in_progress"),
            *write(6, PATH, written, found=OLD),
            completed("e"),
            pm=pm,
        )
    )
    assert change.patch_source == "client_fs"
    applies(change, {PATH: OLD}, {PATH: written})


# --- a refused edit no tool call followed ------------------------------------------------------


def _proposed_only(answer: dict[str, Any] | None, *after: dict[str, Any]) -> Timeline:
    new = "/ws/new.txt"
    lines = [permission(7, "w", [diff(new, None, "brand new\n")])]
    if answer is not None:
        lines.append(answer)
    return project_capture(
        [*opening(), *turn(2, *lines), *after],
        pm=get_plugin_manager(load_entrypoints=False, environ={}),
    )


def test_a_refused_edit_shows_what_it_proposed_as_a_failed_file_change() -> None:
    timeline = _proposed_only(answered(7, "n"))
    change = the_change(timeline)
    (approval,) = [i for i in timeline.items if isinstance(i, ApprovalRequestItem)]
    assert change.status == "failed"
    assert change.tool_call_id == approval.tool_call_id == "w"
    assert change.operations == {"/ws/new.txt": "add"}
    assert (change.diff_str or "").startswith("--- /dev/null\n+++ /ws/new.txt\n")
    applies(change, {}, {"/ws/new.txt": "brand new\n"})


def test_a_refused_modification_shows_its_whole_patch(pm: pluggy.PluginManager) -> None:
    timeline = project(permission(7, "e", [diff(PATH, OLD, NEW)]), answered(7, "n"), pm=pm)
    change = the_change(timeline)
    assert change.status == "failed"
    assert change.tool_call_id == "e"
    applies(change, {PATH: OLD}, {PATH: NEW})


def test_a_cancelled_permission_of_an_edit_is_a_cancelled_file_change() -> None:
    """The client answered "cancelled" (nobody chose: the turn was cancelled)."""
    change = the_change(_proposed_only(answered(7, None)))
    assert change.status == "cancelled"
    assert change.tool_call_id == "w"
    applies(change, {}, {"/ws/new.txt": "brand new\n"})


def test_an_edit_whose_permission_the_agent_left_for_good_is_cancelled() -> None:
    """The agent exited while its permission request waited for an answer."""
    exit_line = {"dir": "exit", "t": 0.0, "code": 1, "stderr": ""}
    new = "/ws/new.txt"
    lines = [
        *opening(),
        to_agent(
            {
                "id": 2,
                "method": "session/prompt",
                "params": {"sessionId": SESSION, "prompt": []},
            }
        ),
        permission(7, "w", [diff(new, None, "brand new\n")]),
        exit_line,
    ]
    timeline = project_capture(lines, pm=get_plugin_manager(load_entrypoints=False, environ={}))
    change = the_change(timeline)
    assert change.status == "cancelled"
    assert change.tool_call_id == "w"


def test_an_allowed_edit_no_tool_call_followed_is_not_shown_as_done() -> None:
    """Allowed, but the agent never said it did it: no completed file_change is made up."""
    timeline = _proposed_only(answered(7, "y"))
    assert [c for c in changes(timeline) if c.status == "completed"] == []


def test_a_refused_command_permission_makes_no_file_change(pm: pluggy.PluginManager) -> None:
    timeline = project(permission(7, "c", [], kind="execute"), answered(7, "n"), pm=pm)
    assert changes(timeline) == []


# --- the law: a read and a fragment give the file's patch --------------------------------------

LINES = st.lists(st.text(alphabet="abc xy", min_size=1, max_size=6), min_size=1, max_size=12)


@given(
    lines=LINES,
    index=st.integers(min_value=0, max_value=11),
    replacement=st.text(alphabet="abcXYZ ", max_size=6),
    trailing_newline=st.booleans(),
)
def test_a_read_then_a_fragment_gives_a_patch_that_makes_the_new_text(
    lines: list[str], index: int, replacement: str, trailing_newline: bool
) -> None:
    old_line = lines[index % len(lines)]
    old = "\n".join(lines) + ("\n" if trailing_newline else "")
    assume(old.count(old_line) == 1 and replacement != old_line)
    new = old.replace(old_line, replacement, 1)
    pm = get_plugin_manager(load_entrypoints=False, environ={})
    change = the_change(
        project(*read(5, PATH, old), tool_call(content=[diff(PATH, old_line, replacement)]), pm=pm)
    )
    assert change.patch_source == "placed"
    assert change.diff_str is not None
    assert apply_patch(change.diff_str, {PATH: old}) == {PATH: new}


def test_an_empty_old_text_of_a_file_the_client_found_missing_is_a_creation(
    pm: pluggy.PluginManager,
) -> None:
    """No read before: the client's look at the disk just before its write found no file, so
    the agent's ``oldText: ""`` is a creation from /dev/null, not an edit of an empty file."""
    change = the_change(
        project(
            tool_call(content=[diff(PATH, "", "brand new\n")], status="in_progress"),
            *write(6, PATH, "brand new\n", found=None),
            completed("e", content=[diff(PATH, "", "brand new\n")]),
            pm=pm,
        )
    )
    assert change.patch_source == "client_fs"
    assert change.operations == {PATH: "add"}
    assert (change.diff_str or "").startswith("--- /dev/null\n")
