"""What every CLI command needs: the database URL, an engine at the newest schema, the blob store."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:  # the store (SQLAlchemy) loads on first use, off the TUI's path to its first frame
    from sqlalchemy.engine import Engine

    from store.blobs import BlobStore


@dataclass
class AppContext:
    db: str | None = None
    actor: str | None = None
    _engine: Engine | None = field(default=None, repr=False)

    @property
    def viewer(self) -> str:
        """Who is looking, for blind mode: ``--as``, else ``CHAINMARK_USER``, else the login name (the
        name the audit trail records), so a rater who never typed ``--as`` is still blind."""
        from store.acting import acting_user

        return acting_user(self.actor)

    @property
    def url(self) -> str:
        from store.locate import resolve_url

        return resolve_url(self.db)

    @property
    def engine(self) -> Engine:
        """The engine, after making sure the schema is current (a new database is created on the spot)."""
        if self._engine is None:
            from store import make_engine
            from store.migrate import current_revision, head_revision, upgrade

            engine = make_engine(self.url)
            current = current_revision(engine)
            if current is None:
                upgrade(engine)
            elif current != head_revision(engine):
                raise schema_refused(current, head_revision(engine))
            self._engine = engine
        return self._engine

    @contextmanager
    def reading(self) -> Iterator[Any]:
        """One read-only transaction for a listing, as a reader of ``store.sql.rows``: on an existing
        SQLite file at the newest schema, a plain ``sqlite3`` connection (``store.sqlite_read``: no
        SQLAlchemy imported); otherwise (PostgreSQL, a new or unmigrated file) the engine's, which
        creates or upgrades it as before."""
        conn = self._plain_reader()
        if conn is None:
            from store import read_scope

            with read_scope(self.engine) as c:
                yield c
            return
        from store.sqlite_read import end_read

        try:
            yield conn
        except BaseException:
            conn.close()
            raise
        end_read(conn)

    def _plain_reader(self) -> Any:
        """``store.sqlite_read.open_reader`` before the engine is made (same refusal of another schema)."""
        from store.speedups import enabled

        if self._engine is not None or not enabled("sqlite_listings"):
            return None
        from store.sqlite_read import SchemaMismatch, open_reader

        try:
            return open_reader(self.url)
        except SchemaMismatch as exc:
            raise schema_refused(exc.current, exc.head) from None

    def close(self) -> None:
        """Close the database connections this command opened (SQLite checkpoints its WAL as the last
        one closes), rather than leaving them to be found by the interpreter's teardown."""
        if self._engine is not None:
            self._engine.dispose()

    @cached_property
    def blobs(self) -> BlobStore:
        from store.blobs import default_blob_store

        return default_blob_store(self.engine)


def schema_refused(current: str, head: str) -> click.ClickException:
    """Why a database at ``current`` cannot be used, and what to do: upgrade it, or upgrade chainmark."""
    from store.schema_head import made_by_newer

    if made_by_newer(current):
        return click.ClickException(
            f"the database was made by a newer chainmark (schema {current}; this one knows up to {head}); "
            "upgrade chainmark to use it (`chainmark init` cannot take a schema back)"
        )
    return click.ClickException(
        f"the database is at schema {current}, this chainmark needs {head}; run `chainmark init` to upgrade it"
    )


pass_ctx = click.make_pass_decorator(AppContext)

# Every command that reports a result takes --json and then prints exactly one JSON document on
# stdout (messages and progress go to stderr), so scripts can json.loads() the whole output.
json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON document instead of text.")


_JSON_PIECES = 50_000  # encoder pieces written at a time (a few hundred kB of text)


def emit_json(value: Any) -> None:
    """JSON on stdout: the values exactly, with characters a terminal would act on written as escapes.

    Written as it is encoded, a bounded run of pieces at a time (the escaping is per character, so it
    can work piece by piece): a 100,000-item ``score --json --per-item`` document is hundreds of MB of
    text, which ``json.dumps`` held whole, then a second escaped copy of it."""
    from tui.safe_text import json_safe

    encoder = json.JSONEncoder(indent=2, ensure_ascii=False, default=str)
    write = sys.stdout.write
    pieces: list[str] = []
    for piece in encoder.iterencode(value):
        pieces.append(piece)
        if len(pieces) >= _JSON_PIECES:
            write(json_safe("".join(pieces)))
            pieces.clear()
    write(json_safe("".join(pieces)) + "\n")


def table(rows: list[list[Any]], headers: list[str]) -> str:
    """A plain fixed-width table (no Rich, so pipes and SSH sessions get clean text); control characters
    in cells are shown escaped, one line per row."""
    from tui.safe_text import visible

    cells = [[visible(h) for h in headers]] + [[visible(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
