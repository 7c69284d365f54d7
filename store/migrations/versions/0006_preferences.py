"""preferences: people's pairwise A/B/tie judgements of two runs' answers to a task

Revision ID: 0006_preferences
Revises: 0005_undo_entries
Create Date: 2026-11-25 11:45:00
"""

from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = "0006_preferences"
down_revision: Union[str, None] = "0005_undo_entries"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table(
        "preference",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("annotator_id", sa.Integer(), nullable=False),
        sa.Column("task_id", sa.Integer(), nullable=False),
        sa.Column("run_a_id", sa.Integer(), nullable=False),
        sa.Column("run_b_id", sa.Integer(), nullable=False),
        sa.Column("shown_left_run_id", sa.Integer(), nullable=False),
        sa.Column("choice", sa.String(length=8), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("task_revision", sa.Integer(), nullable=True),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["annotator_id"], ["annotator.id"], name=op.f("fk_preference_annotator_id_annotator")),
        sa.ForeignKeyConstraint(["run_a_id"], ["run.id"], name=op.f("fk_preference_run_a_id_run")),
        sa.ForeignKeyConstraint(["run_b_id"], ["run.id"], name=op.f("fk_preference_run_b_id_run")),
        sa.ForeignKeyConstraint(["task_id"], ["task.id"], name=op.f("fk_preference_task_id_task")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_preference")),
        sa.UniqueConstraint(
            "annotator_id",
            "task_id",
            "run_a_id",
            "run_b_id",
            name=op.f("uq_preference_annotator_id_task_id_run_a_id_run_b_id"),
        ),
    )
    with op.batch_alter_table("preference") as batch:
        batch.create_index(batch.f("ix_preference_annotator_id"), ["annotator_id"], unique=False)
        batch.create_index(batch.f("ix_preference_task_id"), ["task_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("preference") as batch:
        batch.drop_index(batch.f("ix_preference_task_id"))
        batch.drop_index(batch.f("ix_preference_annotator_id"))
    op.drop_table("preference")
