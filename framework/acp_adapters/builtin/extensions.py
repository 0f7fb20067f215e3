"""The built-in answer to the agent's extension requests: nobody here implements them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..plugin.extensions import ExtensionAnswer
from ..plugin.hookspecs import hookimpl

if TYPE_CHECKING:
    from ..plugin.providers import Provider
    from ..runtime import SessionView


@hookimpl(trylast=True)
def answer_extension_request(
    provider: Provider, method: str, params: Any, session: SessionView
) -> ExtensionAnswer:
    return ExtensionAnswer.not_found(method)
