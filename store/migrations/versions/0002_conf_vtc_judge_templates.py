"""judge templates imported from reference checkouts (branch conf-vtc)

Revision ID: 0002_conf_vtc
Revises: 0001
Create Date: 2026-11-23 21:15:00
"""

from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa
import sqlmodel.sql.sqltypes


revision: str = "0002_conf_vtc"
down_revision: Union[str, None] = "0001"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table(
        "judgetemplate",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("judge", sqlmodel.sql.sqltypes.AutoString(length=120), nullable=False),
        sa.Column("version", sqlmodel.sql.sqltypes.AutoString(length=80), nullable=False),
        sa.Column("parser", sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
        sa.Column("system", sa.Text(), nullable=False),
        sa.Column("user", sa.Text(), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("benchmark", sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
        sa.Column("source", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_judgetemplate")),
    )
    with op.batch_alter_table("judgetemplate", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_judgetemplate_judge"), ["judge"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("judgetemplate", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_judgetemplate_judge"))
    op.drop_table("judgetemplate")
