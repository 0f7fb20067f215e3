"""Install the real agents of ``agents/package-lock.json`` into a folder, once.

    python tests/peers/install_agents.py DEST

``npm ci`` installs exactly the locked versions into ``DEST/node_modules``; a
stamp of the lock file skips the install when nothing changed. The agents'
commands end up in ``DEST/node_modules/.bin``. Grok's install script writes its
home (a copy of the binary, a config.toml) to ``$GROK_HOME``, else ``~/.grok``:
it gets ``DEST/grok-home``, so the install leaves the user's home alone.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent / "agents"
FILES = ("package.json", "package-lock.json")


def install(dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(b"".join((HERE / name).read_bytes() for name in FILES)).hexdigest()
    stamp = dest / ".installed"
    bin_dir = dest / "node_modules" / ".bin"
    if stamp.exists() and stamp.read_text() == digest and bin_dir.is_dir():
        return bin_dir
    for name in FILES:
        shutil.copyfile(HERE / name, dest / name)
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("npm is needed to install the real agents (Node 20 or newer)")
    env = {**os.environ, "GROK_HOME": str(dest / "grok-home")}
    subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", str(dest)],
        check=True,
        env=env,
    )
    stamp.write_text(digest)
    return bin_dir


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    print(install(Path(sys.argv[1])))
