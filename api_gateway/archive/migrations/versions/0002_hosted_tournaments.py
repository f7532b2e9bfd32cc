"""Hosted tournaments being played (issue 41): a row per tournament, its state as JSON and a version.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-06
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "hosted_tournaments",
        sa.Column("tournament_id", sa.String(length=64), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("public", sa.Boolean(), nullable=False),
        sa.Column("state", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("tournament_id", name=op.f("pk_hosted_tournaments")),
    )
    op.create_index(op.f("ix_hosted_tournaments_status_public_created_at"), "hosted_tournaments",
                    ["status", "public", "created_at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_hosted_tournaments_status_public_created_at"), table_name="hosted_tournaments")
    op.drop_table("hosted_tournaments")
