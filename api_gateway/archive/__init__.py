"""The archive: finished matches, players and their ratings, kept in a relational database.

Live data (a sealed match's latest version, its spectators' lines) is the live
store's (`api_gateway.store`: Redis or SQLite, expiring); what must last is here:
SQLite embedded by default, PostgreSQL for a cluster, through SQLAlchemy with
Alembic migrations (`database`, `schema`, `migrations/`).

- `Archive.finish` (`service`): the entry point when a match ends. It writes the
  match (result, players, the engine's record) and every player's rating update
  in one transaction, exactly once per match id; the database down, the match
  waits in the `outbox` and is written when it is back.
- `results`: what the archive reads of a finished match (sides, places, rating
  points), from the engine's record alone; `skill`: the openskill rating.
- `players`: player ids, vouched for by the host app (signed) or guests.
- `routes`: ``GET /v1/players/{id}``, ``/v1/players/{id}/matches``,
  ``/v1/leaderboard``, ``/v1/matches/{id}/record``.
- ``python -m api_gateway.archive upgrade``: migrate a database (the k8s Job).

Nothing is imported here: `api_gateway.server` reads `database` and `players`
in gunicorn's master before the metrics directory is set, and must not import
prometheus-client there (`service` does, through `metrics`).
"""
