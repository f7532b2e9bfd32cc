"""Alembic migrations of the archive (env.py, versions/): see api_gateway.archive.database."""
