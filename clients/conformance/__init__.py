"""Conformance scenarios (docs/FORMAT.md) run against any surface of the engine."""
