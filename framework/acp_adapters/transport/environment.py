"""The environment an agent is started with when it does not inherit this process's: the
variables a program needs to run (its paths, the locale, the temporary folder, certificates
and proxies, npm's and uv's caches), and none of the secrets this process holds.

A provider whose launch does not inherit the environment (a registry agent's) starts from
:func:`base_environment`, and gets what the application passes on top.
"""

from __future__ import annotations

from collections.abc import Mapping

#: The parent's variables an agent gets (case-insensitively on Windows).
BASE_VARIABLES = frozenset(
    {
        # where programs are, who and where the user is
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "TERM",
        "COLORTERM",
        "TZ",
        "TMPDIR",
        "TEMP",
        "TMP",
        "LANG",
        "LANGUAGE",
        "XDG_CONFIG_HOME",
        "XDG_CACHE_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
        "XDG_RUNTIME_DIR",
        # Windows
        "SYSTEMROOT",
        "SYSTEMDRIVE",
        "WINDIR",
        "COMSPEC",
        "PATHEXT",
        "USERPROFILE",
        "USERNAME",
        "USERDOMAIN",
        "HOMEDRIVE",
        "HOMEPATH",
        "APPDATA",
        "LOCALAPPDATA",
        "PROGRAMDATA",
        "PROGRAMFILES",
        "PROGRAMFILES(X86)",
        "PROGRAMW6432",
        "COMMONPROGRAMFILES",
        "NUMBER_OF_PROCESSORS",
        "PROCESSOR_ARCHITECTURE",
        "OS",
        # certificates and proxies (a proxy is how this machine reaches the network)
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "NODE_EXTRA_CA_CERTS",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "ALL_PROXY",
        # npm and npx: the cache, offline runs
        "NPM_CONFIG_CACHE",
        "NPM_CONFIG_OFFLINE",
        "NPM_CONFIG_PREFER_OFFLINE",
        "NPM_CONFIG_PREFER_ONLINE",
        "NPM_CONFIG_UPDATE_NOTIFIER",
        "NPM_CONFIG_YES",
        # uv and uvx: the cache, the tools and pythons it installed, offline runs
        "UV_CACHE_DIR",
        "UV_OFFLINE",
        "UV_NO_CACHE",
        "UV_TOOL_DIR",
        "UV_TOOL_BIN_DIR",
        "UV_PYTHON_INSTALL_DIR",
        "UV_PYTHON_DOWNLOADS",
        "UV_PYTHON",
        "UV_NATIVE_TLS",
    }
)
#: Prefixes of the parent's variables an agent gets (the locale).
BASE_PREFIXES = ("LC_",)


def base_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables of ``environ`` an agent may see: :data:`BASE_VARIABLES` (compared
    case-insensitively: Windows and npm's ``npm_config_*`` ignore case) and ``LC_*``."""
    kept: dict[str, str] = {}
    for key, value in environ.items():
        upper = key.upper()
        if upper in BASE_VARIABLES or upper.startswith(BASE_PREFIXES):
            kept[key] = value
    return kept


__all__ = ["BASE_PREFIXES", "BASE_VARIABLES", "base_environment"]
