"""task edit session: revisions count editing sessions, not typing pauses

Revision ID: 0004_edit_session
Revises: 0003_run_lease
Create Date: 2026-11-24 00:35:00
"""

from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = "0004_edit_session"
down_revision: Union[str, None] = "0003_run_lease"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table("task") as batch:
        batch.add_column(sa.Column("edit_session", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("task") as batch:
        batch.drop_column("edit_session")
