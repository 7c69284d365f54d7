"""trajectory claims: queued runs executed by `chainmark worker` on many hosts (PostgreSQL)

Revision ID: 0007_trajectory_claims
Revises: 0006_preferences
Create Date: 2026-11-25 12:00:00
"""

from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = "0007_trajectory_claims"
down_revision: Union[str, None] = "0006_preferences"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table(
        "trajectoryclaim",
        sa.Column("trajectory_id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("token", sa.String(length=64), nullable=True),
        sa.Column("host", sa.String(length=255), nullable=True),
        sa.Column("pid", sa.Integer(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["run_id"], ["run.id"], name=op.f("fk_trajectoryclaim_run_id_run")),
        sa.ForeignKeyConstraint(
            ["trajectory_id"], ["trajectory.id"], name=op.f("fk_trajectoryclaim_trajectory_id_trajectory")
        ),
        sa.PrimaryKeyConstraint("trajectory_id", name=op.f("pk_trajectoryclaim")),
    )
    with op.batch_alter_table("trajectoryclaim") as batch:
        batch.create_index(batch.f("ix_trajectoryclaim_run_id"), ["run_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("trajectoryclaim") as batch:
        batch.drop_index(batch.f("ix_trajectoryclaim_run_id"))
    op.drop_table("trajectoryclaim")
