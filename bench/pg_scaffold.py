"""What the worker benches share: a scripted model server in its own process and a throwaway
PostgreSQL cluster, torn down however the bench ends."""

from __future__ import annotations

import multiprocessing as mp
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def server_and_cluster(serve: Callable[..., None], *serve_args: Any) -> Iterator[tuple[Any, int, Path]]:
    """(cluster, server port, scratch folder). ``serve(*serve_args, port_queue)`` runs the server and
    puts its port on the queue."""
    from tests.support.postgres import ThrowawayCluster, pg_bindir

    bindir = pg_bindir()
    if bindir is None:
        raise SystemExit("PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin)")
    ctx = mp.get_context("spawn")
    ports: "mp.Queue[int]" = ctx.Queue()
    server = ctx.Process(target=serve, args=(*serve_args, ports), daemon=True)
    server.start()
    port = ports.get(timeout=30)
    cluster = ThrowawayCluster(bindir)
    cluster.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            yield cluster, port, Path(tmp)
    finally:
        cluster.stop()
        server.terminate()
