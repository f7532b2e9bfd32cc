"""Notifications to the host apps' servers: signed webhooks in the Standard Webhooks form (issue 38,
docs/notifications.md).

- `endpoints`: the host apps' endpoints and secrets (``GATEWAY_WEBHOOKS``), which addresses may be reached;
- `events`: what is told to whom (your turn to away seats, the match over, the table dealt, ...);
- `outbox`: the deliveries kept until answered 2xx (SQLite beside the live store, or its Redis);
- `sender`: a thread per worker posting them, with retries and dead letters;
- `notifier`: the hooks the hosting calls (`changed`, `joined`), never raising into play;
- `routes`: the operator's dead letters (``GATEWAY_OPERATOR_TOKEN``).
"""
