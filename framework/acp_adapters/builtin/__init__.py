"""The built-in plugins: the behaviour every provider gets, each an ordinary plugin, by concern.

``tools`` (each tool call's item, and the generic provider), ``files`` (file changes and
their true patches), ``permissions`` (permission requests and the client's actions, by
policy), ``text`` (an item's text) and ``extensions`` (the agent's extension requests:
method not found). Every hookimpl is ``trylast`` and always answers,
so a provider plugin that returns a value for its own provider overrides it, and one that
returns None leaves it here. The plugin manager registers them by name, last.
"""
