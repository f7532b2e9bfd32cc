"""Alembic's environment for the archive: migrations run on the connection `database.upgrade` hands over.

`python -m api_gateway.archive upgrade` (and the gateway itself, for an embedded
SQLite archive) call `api_gateway.archive.database.upgrade`, which opens one
write transaction and passes its connection in ``config.attributes``; nothing
here opens a connection of its own. SQLite gets batch mode, so that a later
migration that alters a table copies it (SQLite cannot alter columns in place).
"""
from __future__ import annotations

from alembic import context

from api_gateway.archive.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run the archive's migrations with `python -m api_gateway.archive upgrade`")
context.configure(connection=connection, target_metadata=metadata,
                  render_as_batch=connection.dialect.name == "sqlite")
with context.begin_transaction():
    context.run_migrations()
