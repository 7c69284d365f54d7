"""run lease: one executor per run (branch review)

Revision ID: 0003_run_lease
Revises: 0002_conf_vtc
Create Date: 2026-11-23 21:10:00
"""

from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa
import sqlmodel.sql.sqltypes


revision: str = "0003_run_lease"
down_revision: Union[str, None] = "0002_conf_vtc"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table(
        "runlease",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("token", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("host", sqlmodel.sql.sqltypes.AutoString(length=255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("acquired_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["run.id"], name=op.f("fk_runlease_run_id_run")),
        sa.PrimaryKeyConstraint("run_id", name=op.f("pk_runlease")),
    )


def downgrade() -> None:
    op.drop_table("runlease")
