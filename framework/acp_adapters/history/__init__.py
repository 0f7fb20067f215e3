"""A kept thread read back through the projection: its timeline rebuilt and checked
(:mod:`.rebuild`), followed as it is committed (:mod:`.following`), a lost owner's turn ended
(:mod:`.lost_turns`), a turn's file changes as one patch and its revert (:mod:`.turn_patches`).

The store (:mod:`acp_adapters.store`) keeps a thread's event log and items and knows nothing
of how they are projected; what reads the log back as a timeline lives here, above both the
store and the projection (:mod:`acp_adapters.projection`).
"""
