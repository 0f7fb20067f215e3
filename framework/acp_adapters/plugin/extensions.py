"""The agent's extension requests (methods whose name starts with ``_``) and their answers.

ACP lets either side add methods of its own, named with a leading underscore. An
agent's extension request goes to the ``answer_extension_request`` hook: a provider
plugin answers the methods of its agent (an :class:`ExtensionAnswer`: a result, or an
error), and the built-in plugin, last, answers every other one ``-32601`` (method not
found), as the protocol wants of a method nobody implements.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: JSON-RPC's "method not found".
METHOD_NOT_FOUND = -32601


@dataclass(frozen=True)
class ExtensionAnswer:
    """The answer to an extension request: ``result`` (any JSON value), or, with
    ``error_code`` set, an error (``error_message``, ``error_data``)."""

    result: Any = None
    error_code: int | None = None
    error_message: str = ""
    error_data: Any = None

    @classmethod
    def not_found(cls, method: str) -> ExtensionAnswer:
        """The answer to a method nobody implements."""
        return cls(error_code=METHOD_NOT_FOUND, error_message=f"method not found: {method}")
