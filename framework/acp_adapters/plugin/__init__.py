"""The plugin layer: what plugins implement and how they are called.

``hookspecs`` (the hook specifications and ``hookimpl``), ``manager`` (the plugin
manager: installed plugins, the built-ins, the switches users have), ``hooks`` (the
typed facade the projection and the client call), ``providers`` (what a provider is,
and the registry of them) and ``permissions`` (policies, and the questions and
answers of the permission hooks).
"""
