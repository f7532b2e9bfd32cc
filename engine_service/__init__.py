"""The domino rules engine: the pure rules core (`engine_service.rules`) and the stateless gRPC service."""
