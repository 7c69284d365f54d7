"""A throwaway PostgreSQL cluster on 127.0.0.1 for the tests, started once per test process (the
``pg_cluster`` fixture in ``tests/conftest.py``) inside the session's private temp folder.

Uses the Debian server binaries (``/usr/lib/postgresql/*/bin``). When they are missing the tests that
need PostgreSQL are skipped; ``.ci/run`` installs them so CI always runs both databases.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path


def pg_bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ThrowawayCluster:
    def __init__(self, bindir: Path):
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="chainmark-pg-"))
        self.port = _free_port()
        self.as_root = os.geteuid() == 0
        self._template: str | None = None
        if self.as_root:
            # The server refuses to run as root; its files must belong to the postgres user.
            self.uid = pwd.getpwnam("postgres").pw_uid
            os.chown(self.root, self.uid, -1)

    def _run(self, *args: str) -> None:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if self.as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, check=True, capture_output=True, timeout=60)

    def start(self) -> str:
        data = self.root / "data"
        self._run("initdb", "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8")
        self._run(
            "pg_ctl",
            "-D",
            str(data),
            "-l",
            str(self.root / "pg.log"),
            "-w",
            "-o",
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off",
            "start",
        )
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def stop(self) -> None:
        """Stop the server if it runs (a failed start may have left one) and remove its folder."""
        try:
            if (self.root / "data" / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def new_database(self, migrated: bool = False) -> str:
        """A new database: empty, or (``migrated``) a copy of one Alembic upgraded to head once per
        cluster (PostgreSQL copies a template database far faster than the migrations run)."""
        import psycopg

        template = self._head_template() if migrated else "template1"
        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres", autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{name}"

    def _head_template(self) -> str:
        if self._template is None:
            from store import make_engine
            from store.migrate import upgrade

            url = self.new_database()
            engine = make_engine(url)
            upgrade(engine)
            engine.dispose()  # a template must have no other connections when it is copied
            self._template = url.rsplit("/", 1)[1]
        return self._template
