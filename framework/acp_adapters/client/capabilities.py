"""What the client tells the agent it can do (``initialize``), per protocol version.

Exactly what this client honours, and nothing it does not, so that an agent uses every
method it may and none it may not:

=====================================  ====  ====  =========================================
capability                             v1    v2    honoured by
=====================================  ====  ====  =========================================
``fs.readTextFile``, ``writeTextFile``  yes   --    ``fs/*`` in the session's folders, by policy
``terminal``                            yes   --    ``terminal/*``: real processes, by policy
``session.configOptions.boolean``       yes   --    boolean options read into the state, and
                                                    ``Session.set_config_option(id, bool)``
``elicitation.form``, ``.url``          ask   ask   the application's ``elicit`` callback
                                                    (offered only when there is one)
``auth.terminal``                       ask   ask   terminal login methods, run by the
                                                    application's ``login`` callback
                                                    (offered only when there is one)
=====================================  ====  ====  =========================================

v2 has no client file system or terminals; its boolean options need no capability.

The other way, :func:`agent_offers` reads which of the optional methods the agent takes
(``session/load``, ``resume``, ``list``, ``close``, ``delete``, ``fork``, ``logout``) from
its ``initialize`` answer, as the schema's rules read it: a capability that is not an
object is not offered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import PromptCapabilityError
from ..protocol import v1, v2

#: The methods each offered capability lets the agent call (what a test holds them to).
HONOURED_BY: dict[str, tuple[str, ...]] = {
    "fs.readTextFile": ("fs/read_text_file",),
    "fs.writeTextFile": ("fs/write_text_file",),
    "terminal": (
        "terminal/create",
        "terminal/output",
        "terminal/wait_for_exit",
        "terminal/kill",
        "terminal/release",
    ),
    "elicitation.form": ("elicitation/create",),
    "elicitation.url": ("elicitation/create",),
    "session.configOptions.boolean": (),
    # Not a method of the agent's: the login the client runs itself (Agent.authenticate).
    "auth.terminal": (),
}


def client_capabilities(version: int, *, elicit: bool, login: bool = False) -> dict[str, Any]:
    """The ``clientCapabilities`` (v1) or ``capabilities`` (v2) of ``initialize``.

    :param elicit: whether the application answers elicitations (an ``elicit`` callback).
    :param login: whether the application runs terminal logins (a ``login`` callback).
    """
    offered: dict[str, Any] = {}
    if version == 1:
        offered["fs"] = {"readTextFile": True, "writeTextFile": True}
        offered["terminal"] = True
        offered["session"] = {"configOptions": {"boolean": {}}}
    if elicit:
        offered["elicitation"] = {"form": {}, "url": {}}
    if login:
        offered["auth"] = {"terminal": True} if version == 1 else {"terminal": {}}
    return offered


#: Where each optional method's capability is, per version: a path of keys in the agent's
#: capabilities whose value must be an object (or, for ``loadSession``, true). None: the
#: method does not exist in that version.
_AGENT_OFFERS: dict[str, dict[int, tuple[str, ...] | None]] = {
    "session/load": {1: ("loadSession",), 2: None},
    "session/resume": {1: ("sessionCapabilities", "resume"), 2: ("session",)},
    "session/list": {1: ("sessionCapabilities", "list"), 2: ("session",)},
    "session/close": {1: ("sessionCapabilities", "close"), 2: ("session",)},
    "session/delete": {1: ("sessionCapabilities", "delete"), 2: ("session", "delete")},
    "session/fork": {1: ("sessionCapabilities", "fork"), 2: ("session", "fork")},
    "logout": {1: ("auth", "logout"), 2: None},
}


def agent_offers(method: str, version: int, agent_capabilities: Mapping[str, Any]) -> bool:
    """Whether the agent's ``initialize`` answer says it takes ``method`` (one of
    ``session/load``, ``resume``, ``list``, ``close``, ``delete``, ``fork``, ``logout``).

    v2 takes ``resume``, ``list`` and ``close`` with any ``session`` capabilities (they are
    its baseline), has no ``session/load`` (a resume replays instead) and takes
    ``auth/logout`` whenever it lists a login method (the caller checks that).
    """
    where = _AGENT_OFFERS.get(method, {}).get(2 if version == 2 else 1)
    if where is None:
        return False
    value: Any = agent_capabilities
    for key in where:
        value = value.get(key) if isinstance(value, Mapping) else None
    if where == ("loadSession",):
        return value is True
    return isinstance(value, Mapping)


def offered_names(capabilities: dict[str, Any], prefix: str = "") -> list[str]:
    """The dotted names of the capabilities an object offers (``fs.readTextFile``, ...)."""
    names: list[str] = []
    for key, value in capabilities.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            names.extend(offered_names(value, f"{name}."))
        elif value is True or value == {}:
            names.append(name)
    return names


#: The prompt content each capability lets the client send (text and resource links need
#: none: every agent takes them).
_PROMPT_NEEDS = {"image": "image", "audio": "audio", "resource": "embeddedContext"}


def prompt_capabilities(version: int, agent_capabilities: Mapping[str, Any]) -> set[str]:
    """The kinds of prompt content the agent said it takes beyond text and resource links
    (``image``, ``audio``, ``embeddedContext``), from its ``initialize`` answer."""
    prompt: v1.PromptCapabilities | v2.PromptCapabilities | None
    if version == 2:
        caps = v2.AgentCapabilities.model_validate(agent_capabilities)
        prompt = caps.session.prompt if caps.session is not None else None
    else:
        prompt = v1.AgentCapabilities.model_validate(agent_capabilities).prompt_capabilities
    if prompt is None:
        return set()
    # v1 says each with a boolean, v2 with an object (None: not taken).
    return {
        name
        for name, value in (
            ("image", prompt.image),
            ("audio", prompt.audio),
            ("embeddedContext", prompt.embedded_context),
        )
        if value is not None and value is not False
    }


def check_prompt(
    blocks: Sequence[Mapping[str, Any]], version: int, agent_capabilities: Mapping[str, Any]
) -> None:
    """Refuse prompt content the agent did not say it takes.

    :raises PromptCapabilityError: naming the first block the agent cannot take, and the
        capability it would need.
    """
    taken = prompt_capabilities(version, agent_capabilities)
    for index, block in enumerate(blocks):
        kind = block.get("type") if isinstance(block, Mapping) else None
        needed = _PROMPT_NEEDS.get(kind) if isinstance(kind, str) else None
        if needed is not None and needed not in taken:
            raise PromptCapabilityError(
                f"prompt block {index} is {kind} content, which the agent does not take "
                f"(its promptCapabilities have no {needed})"
            )
