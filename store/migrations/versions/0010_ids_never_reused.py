"""ids never reused: the audited tables (and the undo stack, and verdicts) get AUTOINCREMENT on SQLite

Without AUTOINCREMENT SQLite hands the id of a deleted last row to the next insert, so an undo entry or
an audit event that names "adjudication 1" could later mean another row. Each table is rebuilt (batch
mode: create, copy, drop, rename; the data and ids are kept), and its sequence starts above every id the
audit trail ever saw for it, so even an id deleted before this migration is not handed out again.
PostgreSQL's sequences never reuse a value: nothing to do there.

Revision ID: 0010_ids_never_reused
Revises: 0009_judge_claims
Create Date: 2026-11-28 03:00:00
"""

from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = "0010_ids_never_reused"
down_revision: Union[str, None] = "0009_judge_claims"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

# Frozen here (not read from store.audit): a migration means what it meant when it was written.
TABLES = (
    "task",
    "referencestep",
    "checkpoint",
    "orderingconstraint",
    "document",
    "humanrating",
    "adjudication",
    "taskasset",
    "preference",
    "verdict",
    "undoentry",
)


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for table in TABLES:
        _rebuild(table, autoincrement=True)
        _start_sequence_above_audited_ids(table)


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for table in TABLES:
        _rebuild(table, autoincrement=False)


def _rebuild(table: str, *, autoincrement: bool) -> None:
    with op.batch_alter_table(table, recreate="always", table_kwargs={"sqlite_autoincrement": autoincrement}) as batch:
        batch.alter_column("id", existing_type=sa.Integer(), existing_nullable=False)


def _start_sequence_above_audited_ids(table: str) -> None:
    """The next id is above the largest the table or its audit trail has ever named."""
    bind = op.get_bind()
    highest = bind.execute(
        sa.text(
            f"SELECT max(coalesce((SELECT max(id) FROM {table}), 0),"  # noqa: S608 - names from TABLES
            " coalesce((SELECT max(entity_id) FROM auditevent WHERE entity = :table), 0))"
        ),
        {"table": table},
    ).scalar_one()
    if not highest:
        return
    bind.execute(sa.text("DELETE FROM sqlite_sequence WHERE name = :table"), {"table": table})
    bind.execute(
        sa.text("INSERT INTO sqlite_sequence (name, seq) VALUES (:table, :seq)"), {"table": table, "seq": highest}
    )
