"""The archive: its database on SQLite and PostgreSQL, its faults, its REST routes (api_gateway/archive)."""
