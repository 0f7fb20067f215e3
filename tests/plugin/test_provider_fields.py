"""``Provider`` and ``LaunchSpec``: what a plugin hands over is checked, copied and frozen."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from acp_adapters import LaunchSpec, Provider, ProviderRegistry, hookimpl
from acp_adapters.testing import plugin_manager


def test_a_provider_keeps_what_it_was_given_as_its_own() -> None:
    env = {"A": "1"}
    args = ["--acp"]
    # A list for args, as pydantic took one before: kept as a tuple.
    launch = LaunchSpec(command="mine", args=args, env=env)  # type: ignore[arg-type]
    provider = Provider(id="mine", name="Mine", launch=launch)
    env["B"] = "2"  # the plugin's own dict and list, changed afterwards
    args.append("--more")
    assert provider.launch == LaunchSpec(command="mine", args=("--acp",), env={"A": "1"})
    assert provider.protocol_version == 2
    assert provider.launch.inherit_env is True
    with pytest.raises(dataclasses.FrozenInstanceError):
        provider.id = "other"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"id": 5}, "Provider.id"),
        ({"name": None}, "Provider.name"),
        ({"agent_names": "mine"}, "Provider.agent_names"),
        ({"agent_names": ("mine", 3)}, "Provider.agent_names"),
        ({"protocol_version": 3}, "Provider.protocol_version"),
        ({"protocol_version": True}, "Provider.protocol_version"),
        ({"env_needs": [None]}, "Provider.env_needs"),
        ({"client_capabilities": ["fs"]}, "Provider.client_capabilities"),
        ({"description": 1}, "Provider.description"),
        ({"launch": {"command": "mine"}}, "Provider.launch"),
    ],
)
def test_a_provider_field_of_the_wrong_type_is_refused(fields: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        Provider(**{"id": "mine", "name": "Mine", **fields})


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"command": ["mine"]}, "LaunchSpec.command"),
        ({"args": "--acp"}, "LaunchSpec.args"),
        ({"env": {"A": 1}}, "LaunchSpec.env"),
        ({"env": [("A", "1")]}, "LaunchSpec.env"),
        ({"inherit_env": "no"}, "LaunchSpec.inherit_env"),
    ],
)
def test_a_launch_field_of_the_wrong_type_is_refused(fields: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        LaunchSpec(**{"command": "mine", **fields})


def test_a_field_no_provider_has_is_refused() -> None:
    with pytest.raises(TypeError):
        Provider(id="mine", name="Mine", colour="red")  # type: ignore[call-arg]


def test_the_registry_names_the_plugin_of_each_provider() -> None:
    class Mine:
        @hookimpl
        def register_providers(self, register: Any) -> None:
            register(Provider(id="mine", name="Mine"))

    registry = ProviderRegistry.collect(plugin_manager(Mine()))
    assert registry.get("mine").plugin == "test-0"
    assert registry.get("mine") == Provider(id="mine", name="Mine", plugin="test-0")
