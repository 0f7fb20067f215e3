"""The Grok Build provider (``grok agent stdio``): who it is and how its edits read.

Facts about its ACP traffic, as Grok Build 1.0.41 sends it (``tox -e peers``
runs it against a fake model server):

* ``initialize`` answers protocol version 1 with no ``agentInfo``: its version is in
  ``_meta.agentVersion``, and its ``_meta`` keys are in the ``x.ai/`` namespace;
  auth methods ``xai.api_key`` and ``grok.com``;
* it sends many notifications of its own (``_x.ai/session/setup``,
  ``_x.ai/session_notification``, ...), before and during turns;
* a tool call starts with no content; its ``tool_call_update`` (kind ``edit``)
  brings the diff, and the completed update repeats it with line numbers in
  ``_meta.details``;
* ``search_replace`` reports ``oldText``/``newText`` = the replaced strings, not the
  file; it reads the file through ``fs/read_text_file`` and writes it through
  ``fs/write_text_file``, so the client sees the whole file;
* ``write`` reports ``oldText: ""`` also for a file it creates (its read of the
  file fails first);
* permission requests offer ``allow-edits-session`` (allow_always), ``allow-once``
  and ``reject-once``; commands run through ACP terminals (``bash -lc``) without
  asking.
"""

from __future__ import annotations

from acp_adapters import LaunchSpec, Provider

PROVIDER_ID = "grok"
#: Grok Build's ``_meta`` keys start with this: how it is known without ``agentInfo``.
XAI_META_PREFIX = "x.ai/"

PROVIDER = Provider(
    id=PROVIDER_ID,
    name="Grok Build",
    description="xAI's coding agent and CLI.",
    # The version tox -e peers runs (the ACP registry's entry names 1.0.30).
    launch=LaunchSpec(command="npx", args=("@xai-official/grok@1.0.41", "agent", "stdio")),
    agent_names=("grok", "grok-build", "Grok Build", "@xai-official/grok"),
    protocol_version=1,
    env_needs=("XAI_API_KEY",),
)
