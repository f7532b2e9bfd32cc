"""The REST gateway: JSON over HTTP for mobile apps and third parties, forwarded to the engine over gRPC.

It validates (marshmallow), documents itself (OpenAPI 3 at /openapi.json, Swagger
UI at /docs), answers errors as RFC 9457 problems, and carries the match either
transparently (the state as JSON) or sealed (an encrypted token and per-seat
keys). It holds no rules logic: legality is always the engine's answer.

Run it with ``domino serve gateway --port 8080 --engine 127.0.0.1:50051`` (gunicorn);
see docs/rest.md and docs/security.md.
"""
