"""The workspace: the session's folders as the truth of what changed in them.

* :mod:`.confined`: every read, write, rename and delete the library makes in a session's
  folders, resolved without following a link out of them;
* :mod:`.objects`, :mod:`.scan`, :mod:`.checkpoints`: checkpoints, snapshots of the folders
  in a content-addressed store the library owns;
* :mod:`.revert`: undoing a turn per hunk, three-way, through the confined writes.
"""
