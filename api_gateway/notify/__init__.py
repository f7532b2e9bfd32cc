"""Notifications (issue 38, docs/notifications.md): signed webhooks in the Standard Webhooks form to the host
apps' servers, Web Push to a seat's browser.

- `endpoints`: the host apps' endpoints and secrets (``GATEWAY_WEBHOOKS``), which addresses may be reached;
- `events`: what is told to whom (your turn to away seats, reminders, the match over, the table dealt, ...);
- `webpush`: a browser's push subscription checked, the VAPID key, a message encrypted for the browser;
- `outbox`: the deliveries kept until answered 2xx (SQLite beside the live store, or its Redis);
- `sender`: a thread per worker posting them, with retries and dead letters;
- `notifier`: the hooks the hosting calls (`changed`, `joined`), never raising into play;
- `routes`: the operator's dead letters (``GATEWAY_OPERATOR_TOKEN``);
- `push_routes`: a seat's push subscription (its credential), the VAPID public key.
"""
