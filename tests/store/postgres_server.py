"""A throwaway PostgreSQL server for the store's tests, on 127.0.0.1.

The ``postgres_server`` fixture (one for the whole test session) makes a cluster in a
temporary folder (``initdb``), starts it on a free port of 127.0.0.1 (``pg_ctl``), with its
socket in that folder too, and removes it all at the end. ``postgres_url`` is the URL of one
database on it (``postgresql://acp@127.0.0.1:PORT/acp_test``, trust authentication);
:meth:`PostgresServer.create_database` makes another, for a test that needs an empty one.

The binaries are found on ``PATH`` or under ``/usr/lib/postgresql/*/bin`` (where Debian's
``postgresql`` package puts them; ``.ci/run`` installs it when it is missing). PostgreSQL
refuses to run as root: as root, the cluster belongs to an unprivileged user (``postgres``
when there is one, else ``nobody``) and every PostgreSQL command runs as that user
(``runuser``, else ``setpriv``). When no server can be had (no binary, no psycopg, no way to
drop root), the tests that need one skip, saying why.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

#: The superuser of the throwaway cluster (trust authentication on 127.0.0.1 only).
USER = "acp"
#: The database ``postgres_url`` names.
DATABASE = "acp_test"


def find_binaries() -> Path | None:
    """The folder of ``initdb``, ``pg_ctl`` and ``postgres``: on PATH, else the newest
    ``/usr/lib/postgresql/*/bin``."""
    initdb = shutil.which("initdb")
    if initdb is not None:
        folder = Path(os.path.realpath(initdb)).parent
        if (folder / "pg_ctl").exists() and (folder / "postgres").exists():
            return folder
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: (
            int(Path(path).parent.parent.name) if Path(path).parent.parent.name.isdigit() else 0
        ),
    )
    for candidate in reversed(candidates):
        folder = Path(candidate).parent
        if (folder / "pg_ctl").exists() and (folder / "postgres").exists():
            return folder
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _unprivileged_user() -> pwd.struct_passwd:
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    raise LookupError("neither a 'postgres' nor a 'nobody' user")


class PostgresServer:
    """A PostgreSQL cluster in ``folder``, listening on 127.0.0.1:``port`` when started."""

    def __init__(self, binaries: Path, folder: Path) -> None:
        self.binaries = binaries
        self.folder = folder
        self.data = folder / "data"
        self.log = folder / "server.log"
        self.port = _free_port()
        self._prefix: list[str] = []
        if os.geteuid() == 0:
            user = _unprivileged_user()
            runuser, setpriv = shutil.which("runuser"), shutil.which("setpriv")
            if runuser is not None:
                self._prefix = [runuser, "-u", user.pw_name, "--"]
            elif setpriv is not None:
                self._prefix = [
                    setpriv,
                    f"--reuid={user.pw_uid}",
                    f"--regid={user.pw_gid}",
                    "--clear-groups",
                    "--",
                ]
            else:
                raise LookupError("neither runuser nor setpriv, to run PostgreSQL as a user")
            os.chown(folder, user.pw_uid, user.pw_gid)
            folder.chmod(0o700)

    @property
    def url(self) -> str:
        """The URL of the test database."""
        return self.url_of(DATABASE)

    def url_of(self, database: str) -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def _run(self, *command: str) -> None:
        env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
        done = subprocess.run(
            [*self._prefix, *command],
            capture_output=True,
            text=True,
            env=env,
            cwd=self.folder,
            check=False,
        )
        if done.returncode != 0:
            log = self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""
            raise RuntimeError(
                f"{' '.join(command)} failed ({done.returncode}):\n"
                f"{done.stdout}{done.stderr}\n{log}"
            )

    def init(self) -> None:
        self._run(
            str(self.binaries / "initdb"),
            "-D",
            str(self.data),
            "-U",
            USER,
            "--auth=trust",
            "--encoding=UTF8",
            "--no-locale",
            "--no-sync",
        )

    def start(self) -> None:
        """Start the server (again), on the same port."""
        options = (
            f"-k {self.folder} -c listen_addresses=127.0.0.1 -p {self.port} "
            "-c fsync=off -c full_page_writes=off -c synchronous_commit=off "
            "-c shared_buffers=16MB -c max_connections=200"
        )
        pg_ctl = str(self.binaries / "pg_ctl")
        self._run(
            pg_ctl,
            "-D",
            str(self.data),
            "-l",
            str(self.log),
            "-o",
            options,
            "-w",
            "-t",
            "60",
            "start",
        )

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``fast``: its clients are disconnected, what they committed stays)."""
        self._run(str(self.binaries / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def create_database(self, name: str | None = None) -> str:
        """A new empty database; its URL."""
        import psycopg

        name = name or f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url_of("postgres"), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url_of(name)


def start_server(folder: Path) -> PostgresServer:
    """A started server in ``folder``, or a skip saying why none can be had."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed (pip install 'acp-adapters[postgres]')")
    binaries = find_binaries()
    if binaries is None:
        pytest.skip(
            "no PostgreSQL server: initdb/pg_ctl/postgres are neither on PATH nor under "
            "/usr/lib/postgresql/*/bin (apt-get install postgresql)"
        )
    try:
        server = PostgresServer(binaries, folder)
    except LookupError as why:
        pytest.skip(f"PostgreSQL cannot run as root here: {why}")
    server.init()
    for attempt in range(3):
        try:
            server.start()
            break
        except RuntimeError:
            if attempt == 2:
                raise
            server.port = _free_port()  # taken between the probe and the start
    server.create_database(DATABASE)
    return server


def _temporary_base() -> str:
    """Where the cluster's folder goes: the temporary folder, unless (as root) the user of
    the cluster could not reach it, or the server's socket path would be too long there."""
    base = tempfile.gettempdir()
    if len(base) > 60:
        return "/tmp"
    if os.geteuid() == 0:
        path = Path(base).resolve()
        for folder in (path, *path.parents):
            if not folder.stat().st_mode & 0o001:  # others cannot go through it
                return "/tmp"
    return base


@contextlib.contextmanager
def running_server() -> Iterator[PostgresServer]:
    """A started server (a skip when none can be had), stopped and removed at the end."""
    folder = Path(tempfile.mkdtemp(prefix="acp-adapters-pg-", dir=_temporary_base()))
    try:
        server = start_server(folder)
        try:
            yield server
        finally:
            with contextlib.suppress(RuntimeError):  # already stopped
                server.stop("immediate")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server for the whole test session, stopped and removed at its end."""
    with running_server() as server:
        yield server


@pytest.fixture(scope="session")
def postgres_url(postgres_server: PostgresServer) -> str:
    """The URL of a database on the test session's PostgreSQL server."""
    return postgres_server.url
