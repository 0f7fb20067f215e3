"""This machine as a registry platform, without loading the registry's models.

The registry names binaries per platform (``linux-x86_64``, ``darwin-aarch64``, ...):
:func:`current_platform` says which of them this machine is.
"""

from __future__ import annotations

import platform as _platform

_SYSTEMS = {"linux": "linux", "darwin": "darwin", "windows": "windows"}
_MACHINES = {
    "x86_64": "x86_64",
    "amd64": "x86_64",
    "x64": "x86_64",
    "em64t": "x86_64",
    "aarch64": "aarch64",
    "arm64": "aarch64",
    "aarch64_be": None,
    "armv8": "aarch64",
    "armv8-a": "aarch64",
}


def current_platform(system: str | None = None, machine: str | None = None) -> str | None:
    """This machine as a registry platform (``linux-x86_64``, ``darwin-aarch64``, ...).

    From :func:`platform.system` and :func:`platform.machine` (or the values given):
    ``AMD64``/``x64`` are ``x86_64``, ``arm64`` is ``aarch64``. None for a system or a machine
    the registry has no binaries for (32-bit, FreeBSD, ...).
    """
    system = (system if system is not None else _platform.system()).strip().lower()
    machine = (machine if machine is not None else _platform.machine()).strip().lower()
    os_name = _SYSTEMS.get(system)
    arch = _MACHINES.get(machine)
    if os_name is None or arch is None:
        return None
    return f"{os_name}-{arch}"


__all__ = ["current_platform"]
