"""A thread's timeline rebuilt from its event log, and the check that it is the stored one.

The event log holds exactly what the session's traffic reader took in; the reader that
projects a capture (:func:`acp_adapters.project_capture`) projects the log to the same items.
An item is kept as :meth:`pydantic.BaseModel.model_dump` ``(mode="json")`` gives it (what
:meth:`acp_adapters.Timeline.to_json` gives for each item), so the rebuilt items and the stored
ones compare as JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pluggy

from ..store.base import Store, StoredEvent, Thread

if TYPE_CHECKING:
    from ..projection.traffic import Traffic


def thread_reader(thread: Thread, pm: pluggy.PluginManager | None = None) -> Traffic:
    """A traffic reader for the thread's log, as its owner's session reads its traffic: the
    thread's provider (when it is loaded, else the one the agent's name claims) and its
    agent session. Its ``projector`` holds the timeline the events make."""
    from ..plugin.hooks import Hooks
    from ..plugin.manager import get_plugin_manager
    from ..plugin.providers import ProviderRegistry
    from ..projection.projector import Projector
    from ..projection.traffic import Traffic

    pm = pm or get_plugin_manager()
    registry = ProviderRegistry.collect(pm)
    fixed = registry.get(thread.provider) if thread.provider in registry else None
    projector = Projector(
        Hooks(pm), fixed or registry.for_agent(None), fixed_provider=fixed is not None
    )
    return Traffic(projector, registry, session_id=thread.agent_session_id)


def rebuild_items(
    events: Iterable[StoredEvent | Mapping[str, Any]],
    *,
    provider: str | None = None,
    session_id: str | None = None,
    pm: pluggy.PluginManager | None = None,
) -> list[dict[str, Any]]:
    """The items the traffic reader projects from ``events`` (stored events, or their capture
    entries), as the store keeps items, in timeline order.

    :param provider: the provider the session was projected with (by default the one the
        agent's ``initialize`` answer names, as for a capture).
    :param session_id: the session the thread follows (by default the first one opened).
    :param pm: the plugin manager (by default one with the installed plugins).
    """
    from ..projection.traffic import project_capture

    entries = [
        dict(event.entry) if isinstance(event, StoredEvent) else dict(event) for event in events
    ]
    timeline = project_capture(entries, provider=provider, session_id=session_id, pm=pm)
    return timeline.to_json()


async def check_thread(
    store: Store, thread_id: str, *, pm: pluggy.PluginManager | None = None
) -> bool:
    """Whether the thread's event log is whole (``seq`` 1, 2, ... with no gap) and rebuilds
    (:func:`rebuild_items`, with the thread's provider and agent session) to its stored items.

    :raises ThreadNotFound: no thread of that id.
    """
    from ..plugin.manager import get_plugin_manager
    from ..plugin.providers import ProviderRegistry

    thread = await store.thread(thread_id)
    events = await store.events(thread_id)
    if [event.seq for event in events] != list(range(1, len(events) + 1)):
        return False
    stored = await store.items(thread_id)
    pm = pm or get_plugin_manager()
    provider = thread.provider if thread.provider in ProviderRegistry.collect(pm) else None
    rebuilt = rebuild_items(events, provider=provider, session_id=thread.agent_session_id, pm=pm)
    return rebuilt == stored
