"""The Grok Build provider (``grok agent stdio``): who it is and how its edits read.

Facts about its ACP traffic (v1; no capture of it exists here, the tests write
traffic of this shape):

* ``initialize`` answers protocol version 1;
* a write reports ``{type: "diff", path, oldText: "", newText}`` on the pending
  ``tool_call`` and again on the completed update, also for a file it creates;
* ``search_replace`` reports ``oldText`` = the old string, not the file;
* ``apply_patch`` reports one diff per file, ``oldText: null`` for a new file;
* each edit's diff is reported twice, and the first report can claim the file
  was empty;
* permission requests on kind ``edit`` offer ``allow_once``, ``allow_always``,
  ``reject_once`` and ``reject_always``.
"""

from __future__ import annotations

from acp_adapters import LaunchSpec, Provider

PROVIDER_ID = "grok"

PROVIDER = Provider(
    id=PROVIDER_ID,
    name="Grok Build",
    description="xAI's coding agent and CLI.",
    # As the ACP registry's entry for grok-build gives it.
    launch=LaunchSpec(command="npx", args=("@xai-official/grok@1.0.30", "agent", "stdio")),
    agent_names=("grok", "grok-build", "Grok Build", "@xai-official/grok"),
    protocol_version=1,
    env_needs=("XAI_API_KEY",),
)
