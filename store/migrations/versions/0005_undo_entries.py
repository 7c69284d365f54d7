"""undo entries: a person's undo stack per task, kept across restarts

Revision ID: 0005_undo_entries
Revises: 0004_edit_session
Create Date: 2026-11-24 00:45:00
"""

from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = "0005_undo_entries"
down_revision: Union[str, None] = "0004_edit_session"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table(
        "undoentry",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("actor", sa.String(length=120), nullable=False),
        sa.Column("scope", sa.String(length=60), nullable=False),
        sa.Column("label", sa.String(length=200), nullable=False),
        sa.Column("op", sa.String(length=40), nullable=False),
        sa.Column("args", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_undoentry")),
    )
    with op.batch_alter_table("undoentry") as batch:
        batch.create_index(batch.f("ix_undoentry_actor"), ["actor"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("undoentry") as batch:
        batch.drop_index(batch.f("ix_undoentry_actor"))
    op.drop_table("undoentry")
