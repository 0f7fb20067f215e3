"""Moved: the answers to an agent's requests are :mod:`acp_adapters.client.agent_requests`;
its names are found here for one release, each with a :class:`DeprecationWarning`."""

from __future__ import annotations

from .._moved import moved_module

__getattr__ = moved_module(__name__, "acp_adapters.client.agent_requests")
