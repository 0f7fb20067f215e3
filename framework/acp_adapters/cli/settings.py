"""``run --model``, ``--mode`` and ``--set KEY=VALUE``: the session set up before the first prompt.

ACP has one way to choose the model: the session's config option of category
``model``, set with ``session/set_config_option`` like any other option. (Agents
of before config options listed ``models`` in the ``session/new`` answer, for an
unstable ``session/set_model`` that neither pinned schema has; this client does
not send it, and says so when that is all the agent offers.) The mode is
``session/set_mode`` (v1) or the option of category ``mode`` (v2).

Every value is checked against what the agent reported before it is sent: a
model, mode, option or choice it does not offer is an error that lists what it
offers (exit :data:`~.errors.EXIT_SESSION_OPTION`), never sent to fail there or,
worse, silently ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from ..runtime.values import ConfigOption
from ..transport import RpcError
from .errors import EXIT_SESSION_OPTION, Failure, explain

if TYPE_CHECKING:
    from ..client import Session

#: What a boolean option takes on the command line.
_BOOLEANS = {"true": True, "false": False}


@dataclass(frozen=True)
class Settings:
    """What ``run`` sets once the session is open, in this order: the model, the mode,
    then each ``--set`` as given (an option may change what the next one offers)."""

    model: str | None = None
    mode: str | None = None
    values: tuple[tuple[str, str], ...] = ()


def parse_setting(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` of ``--set`` (the value may hold ``=``); a usage error otherwise."""
    key, equals, value = text.partition("=")
    if not equals or not key.strip():
        raise click.BadParameter(f"{text!r} is not KEY=VALUE", param_hint="'--set'")
    return key.strip(), value


def legacy_models(answer: Any) -> list[str]:
    """The models an agent of before config options listed in its ``session/new`` answer
    (``models.availableModels[].modelId``): named in the error of ``--model``."""
    models = answer.get("models") if isinstance(answer, dict) else None
    available = models.get("availableModels") if isinstance(models, dict) else None
    if not isinstance(available, list):
        return []
    return [
        entry["modelId"]
        for entry in available
        if isinstance(entry, dict) and isinstance(entry.get("modelId"), str)
    ]


async def apply_settings(
    session: Session, settings: Settings, *, listed_models: Sequence[str] = ()
) -> None:
    """Set the model, the mode and the options on the open session, each checked first.

    ``listed_models``: what the ``session/new`` answer listed as ``models`` (see
    :func:`legacy_models`), for the error when the agent has no model option.

    :raises Failure: a value the agent does not offer (exit 7), or its error answer.
    """
    if settings.model is not None:
        await _set_model(session, settings.model, listed_models)
    if settings.mode is not None:
        await _set_mode(session, settings.mode)
    for key, value in settings.values:
        flag = f"--set {key}={value}"
        option = _option(session, key)
        if option is None:
            raise Failure(
                f"{flag}: the agent has no option {key!r}; {_options_offered(session)}",
                EXIT_SESSION_OPTION,
            )
        await _send(session, flag, option.id, _value(option, value, flag))


async def _set_model(session: Session, model: str, listed: Sequence[str]) -> None:
    flag = f"--model {model}"
    option = next((o for o in _config(session) if o.category == "model"), None)
    if option is None:
        said = f"{flag}: the agent has no model option (a config option of category model)"
        if listed:
            said += (
                f"; it lists models ({', '.join(listed)}) for session/set_model, an unstable "
                "method that config options replaced, which this client does not send"
            )
        raise Failure(f"{said}; {_options_offered(session)}", EXIT_SESSION_OPTION)
    await _send(session, flag, option.id, _value(option, model, flag, noun="model"))


async def _set_mode(session: Session, mode: str) -> None:
    flag = f"--mode {mode}"
    state = session.projector.state
    option = next((o for o in _config(session) if o.category == "mode"), None)
    if state.modes:
        offered = [(m.id, m.name) for m in state.modes]
    elif option is not None:
        offered = [(c.value, c.name) for c in option.choices]
    else:
        raise Failure(f"{flag}: the agent has no modes", EXIT_SESSION_OPTION)
    if mode not in (key for key, _ in offered):
        raise Failure(
            f"{flag}: the agent has no such mode; its modes: {_named(offered)}",
            EXIT_SESSION_OPTION,
        )
    try:
        if state.modes:
            await session.set_mode(mode)
        else:
            assert option is not None
            await session.set_config_option(option.id, mode)
    except RpcError as error:
        raise _refused(flag, error) from error


def _value(option: ConfigOption, value: str, flag: str, *, noun: str = "value") -> str | bool:
    """``value`` as the option takes it: true or false for a boolean, one of the choices of
    a select, and as it is for a type this client does not know (the schema reads a
    string of an unknown type as a value id)."""
    if option.type == "boolean":
        if value.lower() in _BOOLEANS:
            return _BOOLEANS[value.lower()]
        raise Failure(
            f"{flag}: {option.id!r} is a boolean option: give true or false", EXIT_SESSION_OPTION
        )
    if option.type == "select" or option.choices:
        if any(choice.value == value for choice in option.choices):
            return value
        offered = _named([(c.value, c.name) for c in option.choices]) or "(none)"
        said = (
            f"the agent has no such model; its models: {offered}"
            if noun == "model"
            else f"{option.id!r} has no such choice; its choices: {offered}"
        )
        raise Failure(f"{flag}: {said}", EXIT_SESSION_OPTION)
    return value


async def _send(session: Session, flag: str, config_id: str, value: str | bool) -> None:
    try:
        await session.set_config_option(config_id, value)
    except RpcError as error:
        raise _refused(flag, error) from error


def _refused(flag: str, error: RpcError) -> Failure:
    """The agent's error answer to a setting, named by the option that asked for it."""
    code, line = explain(error)
    return Failure(f"{flag}: {line}", code)


def _config(session: Session) -> tuple[ConfigOption, ...]:
    return session.projector.state.config_options


def _option(session: Session, key: str) -> ConfigOption | None:
    return next((o for o in _config(session) if o.id == key), None)


def _options_offered(session: Session) -> str:
    """What the agent's options take, for an error: ``its options: model (small, large),
    fast (true, false)``."""
    options = _config(session)
    if not options:
        return "it reports no config options"
    described = []
    for option in options:
        if option.type == "boolean":
            takes = "true, false"
        else:
            takes = ", ".join(choice.value for choice in option.choices) or option.type
        described.append(f"{option.id} ({takes})")
    return "its options: " + ", ".join(described)


def _named(offered: Sequence[tuple[str, str]]) -> str:
    """``id (Name), ...``; the name only where it says more than the id."""
    return ", ".join(key if name in ("", key) else f"{key} ({name})" for key, name in offered)
