"""The tables ``chainmark run``, ``score`` and ``import`` read and write, as SQLAlchemy Core tables.

The schema is declared once, in ``store.models``; ``store.tables`` is its Core form, derived from
``SQLModel.metadata`` by ``store.derive_tables`` (tests/store/test_core_tables.py keeps it current and
equal). This module names those tables for the run path (from the endpoint look-up to the last
commit), the score path (the run, its trajectories, events and tasks, stored verdicts and judge
templates, the CheckpointResult rows it writes) and a dataset import (the benchmark, new tasks and
their children, their files and audit events). Those commands then never build the SQLModel classes
or the ORM (an import only to update a task it finds changed): about a third of a second of a run's
or an import's start-up (bench/bench_harness.py --whole, bench/bench_startup.py) and a fifth of
score's (bench/bench_scoring.py --command). Table clauses carry none of the models' defaults: every
insert names all of its NOT NULL columns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Union

from sqlalchemy.engine import Connection

from store.tables import *  # noqa: F403  (every table, by its name, and TABLES)

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

Reader = Union["Session", Connection]
"""What these functions read through: an ORM session (the TUI's, the tests') or a plain connection
(the command line's)."""


def connection_of(reader: Reader) -> Connection:
    """The connection under an ORM session, or the connection itself."""
    return reader if isinstance(reader, Connection) else reader.connection()
