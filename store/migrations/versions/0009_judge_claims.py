"""judge claims: `chainmark judge … --queue` work items executed by `chainmark worker` (PostgreSQL)

Revision ID: 0009_judge_claims
Revises: 0008_serve_tokens
Create Date: 2026-11-25 15:00:00
"""

from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = "0009_judge_claims"
down_revision: Union[str, None] = "0008_serve_tokens"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table(
        "judgeclaim",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("trajectory_id", sa.Integer(), nullable=False),
        sa.Column("judge", sa.String(length=255), nullable=False),
        sa.Column("endpoint", sa.String(length=255), nullable=False),
        sa.Column("mode", sa.String(length=16), nullable=False),
        sa.Column("token", sa.String(length=64), nullable=True),
        sa.Column("host", sa.String(length=255), nullable=True),
        sa.Column("pid", sa.Integer(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("verdicts", sa.Integer(), nullable=False),
        sa.Column("model_calls", sa.Integer(), nullable=False),
        sa.Column("cache_hits", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["run_id"], ["run.id"], name=op.f("fk_judgeclaim_run_id_run")),
        sa.ForeignKeyConstraint(
            ["trajectory_id"], ["trajectory.id"], name=op.f("fk_judgeclaim_trajectory_id_trajectory")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_judgeclaim")),
        sa.UniqueConstraint(
            "trajectory_id", "judge", "endpoint", "mode", name=op.f("uq_judgeclaim_trajectory_id_judge_endpoint_mode")
        ),
    )
    with op.batch_alter_table("judgeclaim") as batch:
        batch.create_index(batch.f("ix_judgeclaim_run_id"), ["run_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("judgeclaim") as batch:
        batch.drop_index(batch.f("ix_judgeclaim_run_id"))
    op.drop_table("judgeclaim")
