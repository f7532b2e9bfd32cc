"""The domino engine: the pure rules library (`engine_service.rules`) and the stateless gRPC service around it.

Service modules: `codec` (dict <-> protobuf), `servicer` (decode -> rules ->
encode), `status` (the one rules-exception -> gRPC-status mapping), `metrics`
(Prometheus and the per-call log line), `config` (flags and environment) and
`server` (process entry point: `domino serve engine` / `python -m engine_service`).
"""
