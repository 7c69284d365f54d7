"""authored rubrics: a judge template's benchmark name as long as a benchmark's; a verdict's template version

A benchmark's author writes its judge rubric (``chainmark rubrics add``), stored as ``judgetemplate``
rows whose ``benchmark`` is the benchmark's name, up to 120 characters (it was 40: PostgreSQL would
refuse a longer name). Each verdict records the template version that judged it, so verdicts judged
with a rubric's v1 stay labelled v1 after v2 is written. Verdicts from before have none (NULL).

Revision ID: 0011_authored_rubrics
Revises: 0010_ids_never_reused
Create Date: 2026-11-28 07:00:00
"""

from typing import Sequence, Union

from alembic import op
import sqlalchemy as sa


revision: str = "0011_authored_rubrics"
down_revision: Union[str, None] = "0010_ids_never_reused"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table("judgetemplate") as batch:
        batch.alter_column(
            "benchmark", existing_type=sa.String(length=40), type_=sa.String(length=120), existing_nullable=False
        )
    with op.batch_alter_table("verdict") as batch:
        batch.add_column(sa.Column("template_version", sa.String(length=80), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("verdict") as batch:
        batch.drop_column("template_version")
    with op.batch_alter_table("judgetemplate") as batch:
        batch.alter_column(
            "benchmark", existing_type=sa.String(length=120), type_=sa.String(length=40), existing_nullable=False
        )
