"""The archive: players, their ratings per family, finished matches and tournaments.

Revision ID: 0001
Revises:
Create Date: 2026-12-02
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

SEQ = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
PLAYER = sa.String(length=80)


def upgrade() -> None:
    op.create_table(
        "players",
        sa.Column("id", PLAYER, nullable=False),
        sa.Column("name", sa.String(length=64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_players")),
    )
    op.create_table(
        "ratings",
        sa.Column("player_id", PLAYER, nullable=False),
        sa.Column("family", sa.String(length=8), nullable=False),
        sa.Column("mu", sa.Double(), nullable=False),
        sa.Column("sigma", sa.Double(), nullable=False),
        sa.Column("ordinal", sa.Double(), nullable=False),
        sa.Column("points", sa.Integer(), nullable=False),
        sa.Column("matches", sa.Integer(), nullable=False),
        sa.Column("rated", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("places_1", sa.Integer(), nullable=False),
        sa.Column("places_2", sa.Integer(), nullable=False),
        sa.Column("places_3", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], name=op.f("fk_ratings_player_id_players")),
        sa.PrimaryKeyConstraint("player_id", "family", name=op.f("pk_ratings")),
    )
    op.create_index(op.f("ix_ratings_family_ordinal_player_id"), "ratings", ["family", "ordinal", "player_id"])
    op.create_index(op.f("ix_ratings_family_points_player_id"), "ratings", ["family", "points", "player_id"])
    op.create_table(
        "matches",
        sa.Column("seq", SEQ, autoincrement=True, nullable=False),
        sa.Column("match_id", sa.String(length=64), nullable=False),
        sa.Column("variant", sa.String(length=40), nullable=False),
        sa.Column("family", sa.String(length=8), nullable=False),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("timed_out", sa.Integer(), nullable=True),
        sa.Column("result", sa.JSON(), nullable=False),
        sa.Column("record", sa.Text(), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_matches")),
        sa.UniqueConstraint("match_id", name=op.f("uq_matches_match_id")),
    )
    op.create_table(
        "match_seats",
        sa.Column("match_seq", SEQ, nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("player_id", PLAYER, nullable=True),
        sa.Column("side", sa.Integer(), nullable=False),
        sa.Column("place", sa.Integer(), nullable=False),
        sa.Column("points", sa.Integer(), nullable=False),
        sa.Column("mu_before", sa.Double(), nullable=True),
        sa.Column("sigma_before", sa.Double(), nullable=True),
        sa.Column("mu_after", sa.Double(), nullable=True),
        sa.Column("sigma_after", sa.Double(), nullable=True),
        sa.ForeignKeyConstraint(["match_seq"], ["matches.seq"], name=op.f("fk_match_seats_match_seq_matches")),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], name=op.f("fk_match_seats_player_id_players")),
        sa.PrimaryKeyConstraint("match_seq", "seat", name=op.f("pk_match_seats")),
    )
    op.create_index(op.f("ix_match_seats_player_id_match_seq"), "match_seats", ["player_id", "match_seq"])
    op.create_table(
        "tournaments",
        sa.Column("seq", SEQ, autoincrement=True, nullable=False),
        sa.Column("tournament_id", sa.String(length=64), nullable=False),
        sa.Column("standings", sa.JSON(), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_tournaments")),
        sa.UniqueConstraint("tournament_id", name=op.f("uq_tournaments_tournament_id")),
    )
    op.create_table(
        "tournament_places",
        sa.Column("tournament_seq", SEQ, nullable=False),
        sa.Column("participant", sa.Integer(), nullable=False),
        sa.Column("player_id", PLAYER, nullable=True),
        sa.Column("place", sa.Integer(), nullable=False),
        sa.Column("official", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], name=op.f("fk_tournament_places_player_id_players")),
        sa.ForeignKeyConstraint(["tournament_seq"], ["tournaments.seq"],
                                name=op.f("fk_tournament_places_tournament_seq_tournaments")),
        sa.PrimaryKeyConstraint("tournament_seq", "participant", name=op.f("pk_tournament_places")),
    )
    op.create_index(op.f("ix_tournament_places_player_id_tournament_seq"), "tournament_places",
                    ["player_id", "tournament_seq"])


def downgrade() -> None:
    for table in ("tournament_places", "tournaments", "match_seats", "matches", "ratings", "players"):
        op.drop_table(table)
