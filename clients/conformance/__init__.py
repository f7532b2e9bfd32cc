"""Conformance scenarios (../shared/conformance/FORMAT.md) run against any surface of the engine."""
