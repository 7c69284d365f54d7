"""serve tokens: an annotator's login for `chainmark serve`, kept as a sha256 (never the token)

Revision ID: 0008_serve_tokens
Revises: 0007_trajectory_claims
Create Date: 2026-11-25 12:45:00
"""

from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = "0008_serve_tokens"
down_revision: Union[str, None] = "0007_trajectory_claims"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table("annotator") as batch:
        batch.add_column(sa.Column("serve_token_hash", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("annotator") as batch:
        batch.drop_column("serve_token_hash")
