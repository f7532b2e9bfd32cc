"""Prometheus metrics of the archive (exported with the gateway's, `api_gateway.metrics`).

- ``domino_gateway_archive_writes_total{kind, outcome}``: finished matches and
  tournaments handed to the archive, by what became of them: ``recorded``
  (written with their rating updates), ``duplicate`` (archived already: another
  gateway, or a second call, got there first) or ``queued`` (the database did not
  answer: waiting in the outbox).
- ``domino_gateway_archive_errors_total{operation, reason}``: archive operations
  that failed: ``write``, ``drain`` or ``read`` with reason ``unavailable`` (the
  database did not answer) or ``outbox-unavailable`` (nor did the live store
  holding the outbox: the finish call itself failed).
- ``domino_gateway_archive_rated_matches_total``: rated matches written with their
  players' rating updates (counted once, by the write that committed them:
  at once or from the outbox; a duplicate adds nothing).
- ``domino_gateway_archive_outbox_depth``: finished matches waiting for the
  database, as the workers' drainers last counted them (the largest count).

Every label set is created at import, so each series exists (at 0) from a
worker's start: the dashboard's rates have data before the first match ends.
"""
from __future__ import annotations

from prometheus_client import Counter, Gauge

KINDS = ("match", "tournament")
OUTCOMES = ("recorded", "duplicate", "queued")
OPERATIONS = ("write", "drain", "read")
REASONS = ("unavailable", "outbox-unavailable")

WRITES = Counter("domino_gateway_archive_writes_total",
                 "Finished matches and tournaments handed to the archive, by kind and outcome.",
                 ["kind", "outcome"])
ERRORS = Counter("domino_gateway_archive_errors_total",
                 "Archive operations that failed, by operation and reason.", ["operation", "reason"])
RATED = Counter("domino_gateway_archive_rated_matches_total",
                "Rated matches written with their players' rating updates (once per match).")
OUTBOX_DEPTH = Gauge("domino_gateway_archive_outbox_depth",
                     "Finished matches and tournaments waiting in the outbox for the archive database.",
                     multiprocess_mode="livemax")

for _kind in KINDS:
    for _outcome in OUTCOMES:
        WRITES.labels(_kind, _outcome)
for _operation in OPERATIONS:
    for _reason in REASONS:
        ERRORS.labels(_operation, _reason)
OUTBOX_DEPTH.set(0)
