"""Captures: recorded ACP traffic, one JSON-RPC message a line (``docs/captures.md``).

``format`` holds the format's words and its one line reader (``capture_values``),
``reader`` the capture as the replay reads it (entries, requests and their answers),
``recorder`` the writer a live session records with. Standard library only (and the
package's own ``_json`` and ``errors``): the replay agent imports it in every
replayed session.
"""
