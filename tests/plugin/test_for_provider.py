"""``for_provider``: a hook implementation of one provider, not called for any other."""

from __future__ import annotations

from typing import Any

import pytest

from acp_adapters import AssistantMessageItem, for_provider, hookimpl
from acp_adapters.testing import plugin_manager, provider


class Mine:
    def __init__(self) -> None:
        self.called: list[str] = []

    @hookimpl
    @for_provider("mine")
    def render_item_text(self, item: Any, provider: Any) -> str | None:
        self.called.append(provider.id)
        return f"mine: {item.text}"


def test_the_hook_answers_for_its_provider_and_is_not_called_for_another() -> None:
    plugin = Mine()
    hook = plugin_manager(plugin).hook.render_item_text
    item = AssistantMessageItem(turn=1, text="hello")
    assert hook(item=item, provider=provider("mine")) == "mine: hello"
    # For another, None from it: the next implementation (the built-in) answers.
    assert hook(item=item, provider=provider("other")) != "mine: hello"
    assert plugin.called == ["mine"]


def test_a_hook_without_a_provider_is_refused_at_once() -> None:
    with pytest.raises(TypeError, match="takes no provider"):

        @for_provider("mine")
        def register_providers(register: Any) -> None:
            pass  # pragma: no cover
