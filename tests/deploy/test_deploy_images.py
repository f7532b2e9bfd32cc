"""Build both images for real and start each one's entrypoint from the image's own filesystem.

No container engine runs on these machines, so the images are built with
`podman build --isolation=chroot` from a local base image (docker/base-image.sh:
debootstrap + podman import, cached by hash outside the repository), and
"running" an image means: mount its filesystem (`podman image mount`), bind it
read-only in a private mount namespace with a tmpfs on /tmp and /proc and /dev
as a container runtime would give them, chroot into it as the image's USER with
the image's ENV and WORKDIR, exec its ENTRYPOINT, and run its HEALTHCHECK
command the same way. The servers share the host's network namespace and are
bound to loopback. Needs root (podman storage, mount namespaces, chroot); where
any piece is missing the tests skip with the reason.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from deploy_helpers import REPO, free_port, tool, wait_until

# Building both images (debootstrap base, pip installs in podman) is charged to the first test: more than
# pytest-timeout's default 300 s on a loaded 2-core machine.
BUILD_TIMEOUT = 900
pytestmark = [pytest.mark.slow, pytest.mark.timeout(3 * BUILD_TIMEOUT)]
START_TIMEOUT = 30.0
IMAGES = {"engine": "localhost/domino-engine:test", "gateway": "localhost/domino-gateway:test"}
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
#: The gateway's image carries the archive's database stack (SQLAlchemy, Alembic, psycopg with its
#: libpq: about 40 MB with bytecode, issue 25), which the engine's image leaves out.
MAX_IMAGE_MB = {"engine": 260, "gateway": 300}

# Runs on the host in a private mount namespace, then becomes the image's process.
CHROOT_SCRIPT = r"""
set -e
root=$1 image=$2 user=$3 workdir=$4
shift 4
mount --bind "$image" "$root"
mount -o remount,bind,ro "$root"
mount -t tmpfs -o size=64m,mode=1777,nosuid,nodev tmpfs "$root/tmp"
mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
mount --rbind /dev "$root/dev"
exec /usr/sbin/chroot --userspec="$user" "$root" /bin/sh -c 'cd "$0" && exec "$@"' "$workdir" "$@"
"""


def _run(argv: Sequence[str], timeout: float = 120, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False, **kwargs)


def _tail(text: str, lines: int = 25) -> str:
    return "\n".join(text.splitlines()[-lines:])


@dataclass
class Image:
    """A built image, its configuration and its filesystem mounted on the host."""

    tag: str
    config: dict[str, Any]
    healthcheck: list[str]
    size_bytes: int
    rootfs: Path
    build_seconds: float
    processes: list[subprocess.Popen[str]] = field(default_factory=list)

    @property
    def user(self) -> str:
        return str(self.config["User"])

    def env(self, **overrides: str) -> dict[str, str]:
        env = dict(item.split("=", 1) for item in self.config.get("Env") or [])
        env.update(overrides)
        return env

    def _argv(self, command: Sequence[str], scratch: Path) -> list[str]:
        root = scratch / f"root-{len(self.processes)}-{time.monotonic_ns()}"
        root.mkdir()
        return ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", CHROOT_SCRIPT,
                "chroot-image", str(root), str(self.rootfs), self.user,
                str(self.config.get("WorkingDir") or "/"), *command]

    def start(self, scratch: Path, log: Path, command: Sequence[str] | None = None,
              **env: str) -> subprocess.Popen[str]:
        """Exec the ENTRYPOINT (+ CMD), or `command`, inside the image; returns the process."""
        argv = list(command) if command is not None else \
            list(self.config.get("Entrypoint") or []) + list(self.config.get("Cmd") or [])
        with log.open("w") as out:
            proc = subprocess.Popen(self._argv(argv, scratch), env=self.env(**env), stdout=out,
                                    stderr=subprocess.STDOUT, text=True)
        self.processes.append(proc)
        return proc

    def run(self, scratch: Path, command: Sequence[str], timeout: float = 30,
            **env: str) -> subprocess.CompletedProcess[str]:
        return _run(self._argv(command, scratch), timeout=timeout, env=self.env(**env))

    def health(self, scratch: Path, **env: str) -> subprocess.CompletedProcess[str]:
        """The image's own HEALTHCHECK command, run inside the image, as a runtime would."""
        kind, *command = self.healthcheck
        if kind == "CMD-SHELL":
            command = ["/bin/sh", "-c", command[0]]
        assert kind in ("CMD", "CMD-SHELL") and command, self.healthcheck
        return self.run(scratch, command, **env)

    def stop_all(self) -> None:
        for proc in self.processes:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)


def _requirements() -> tuple[str, str]:
    if os.geteuid() != 0:
        pytest.skip("needs root: podman's image storage, `podman image mount`, mount namespaces and chroot")
    podman = tool("podman")
    tool("debootstrap")
    for needed in ("/usr/bin/unshare", "/usr/sbin/chroot"):
        if not os.access(needed, os.X_OK):
            pytest.skip(f"{needed} is missing")
    probe = _run(["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
                  "mount -t tmpfs tmpfs /mnt && umount /mnt"], timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"this machine refuses a private mount namespace with mounts (needed to start an "
                    f"image read-only): {probe.stderr.strip()}")
    return podman, str(REPO / "docker" / "base-image.sh")


def _build(podman: str, base: str, name: str) -> tuple[float, str]:
    argv = [podman, "build", "--isolation=chroot", "--format", "docker", "--layers",
            "-f", f"docker/Dockerfile.{name}", "--build-arg", f"BASE_IMAGE={base}", "-t", IMAGES[name]]
    if HOST_CA.is_file():
        # TLS to PyPI may be intercepted by a proxy whose CA only the host trusts.
        argv += ["--volume", f"{HOST_CA}:/run/host-ca.crt:ro", "--build-arg", "PIP_CERT=/run/host-ca.crt"]
    start = time.monotonic()
    result = _run([*argv, "."], timeout=BUILD_TIMEOUT, cwd=REPO)
    elapsed = time.monotonic() - start
    if result.returncode != 0:
        pytest.fail(f"podman build of docker/Dockerfile.{name} failed after {elapsed:.0f}s:\n"
                    f"{_tail(result.stdout + result.stderr, 40)}")
    return elapsed, result.stdout


@pytest.fixture(scope="module")
def images() -> Iterator[dict[str, Image]]:
    podman, base_script = _requirements()
    start = time.monotonic()
    made = _run(["bash", base_script], timeout=BUILD_TIMEOUT)
    if made.returncode != 0:
        pytest.skip(f"cannot make the local base image (debootstrap + podman import) on this machine: "
                    f"{_tail(made.stderr, 8)}")
    base = made.stdout.strip().splitlines()[-1]
    base_seconds = time.monotonic() - start
    built: dict[str, Image] = {}
    try:
        for name, tag in IMAGES.items():
            seconds, _ = _build(podman, base, name)
            inspect = json.loads(_run([podman, "image", "inspect", tag]).stdout)[0]
            mounted = _run([podman, "image", "mount", tag])
            assert mounted.returncode == 0, mounted.stderr
            built[name] = Image(tag=tag, config=inspect["Config"],
                                healthcheck=list((inspect.get("Healthcheck") or {}).get("Test") or []),
                                size_bytes=int(inspect["Size"]), rootfs=Path(mounted.stdout.strip()),
                                build_seconds=seconds)
        # Untagged leftovers of earlier builds (build stages, replaced images) older than a
        # day go; younger ones stay as the layer cache that makes a re-run take seconds.
        _run([podman, "image", "prune", "--force", "--filter", "until=24h"])
        print(f"\nbase image {base}: {base_seconds:.1f}s; " + "; ".join(
            f"{name} build {image.build_seconds:.1f}s, {image.size_bytes / 1e6:.0f} MB"
            for name, image in built.items()))
        yield built
    finally:
        for image in built.values():
            image.stop_all()
            _run([podman, "image", "unmount", image.tag])


def _addresses(log: Path, proc: subprocess.Popen[str], timeout: float = START_TIMEOUT) -> dict[str, str]:
    """The one JSON line a server prints once it listens."""
    found: dict[str, str] = {}

    def printed() -> bool:
        for line in log.read_text().splitlines():
            if line.startswith("{") and '"level"' not in line:
                found.update(json.loads(line))
                return True
        return proc.poll() is not None

    wait_until(printed, timeout)
    assert found, f"no address line; exit {proc.poll()}; output:\n{_tail(log.read_text())}"
    return found


def _stop(proc: subprocess.Popen[str], log: Path) -> int:
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"no exit within 20 s of SIGTERM:\n{_tail(log.read_text())}")


# ------------------------------------------------------------------ the images themselves


@pytest.mark.parametrize("name", sorted(IMAGES))
def test_image_runs_as_non_root_with_a_health_check(images: dict[str, Image], name: str) -> None:
    image = images[name]
    uid, _, gid = image.user.partition(":")
    assert uid.isdigit() and int(uid) != 0 and gid.isdigit() and int(gid) != 0, image.user
    assert image.healthcheck[:1] == ["CMD"], image.healthcheck
    assert image.config.get("Entrypoint"), image.config
    exposed = set(image.config.get("ExposedPorts") or {})
    assert exposed == ({"50051/tcp", "9464/tcp"} if name == "engine" else {"8080/tcp", "9465/tcp"}), exposed


@pytest.mark.parametrize("name", sorted(IMAGES))
def test_image_is_small_and_has_no_build_tools(images: dict[str, Image], name: str) -> None:
    image = images[name]
    root = image.rootfs
    for absent in ("usr/bin/gcc", "usr/bin/cc", "usr/bin/make", "usr/bin/g++", "opt/venv/bin/pip",
                   "opt/venv/bin/pip3"):
        assert not (root / absent).exists(), absent
    site = next((root / "opt/venv/lib").glob("python3*/site-packages"))
    assert not list(site.glob("grpc_tools*")), "grpcio-tools (protoc) is a build tool"
    assert not list(site.glob("setuptools*")) and not list(site.glob("pip*"))
    assert (site / "domino" / "v1" / "engine_pb2.py").is_file() and (site / "domino" / "v1" / "errors.py").is_file()
    own = "engine_service" if name == "engine" else "api_gateway"
    assert (site / own).is_dir()
    if name == "gateway":  # it carries states unread: no rules, no engine, no clients in its image
        assert not (site / "engine_service").exists() and not (site / "clients").exists()
        assert not (root / "opt/venv/bin/domino").exists()
    # Bytecode compiled at build time: the root filesystem is read-only at run time.
    assert list((site / own / "__pycache__").glob("*.pyc"))
    if name == "engine":  # the engine keeps no database
        assert not list(site.glob("sqlalchemy*")) and not list(site.glob("psycopg*"))
    assert image.size_bytes < MAX_IMAGE_MB[name] * 1e6, f"{image.size_bytes / 1e6:.0f} MB"
    if name == "gateway":   # the Deployment's preStop hook runs it
        assert os.access(root / "bin" / "sleep", os.X_OK)


def test_harness_root_is_read_only(images: dict[str, Image], tmp_path: Path) -> None:
    """The smoke tests below start the servers on a root filesystem they cannot write."""
    image = images["engine"]
    wrote = image.run(tmp_path, ["/bin/sh", "-c", "touch /opt/domino/x"])
    assert wrote.returncode != 0 and "Read-only file system" in wrote.stdout + wrote.stderr
    tmp_ok = image.run(tmp_path, ["/bin/sh", "-c", "touch /tmp/x && id -u"])
    assert tmp_ok.returncode == 0 and tmp_ok.stdout.strip() == image.user.split(":")[0]


# ------------------------------------------------------------------ smoke tests


def test_engine_image_runs_the_compiled_build_of_these_sources(images: dict[str, Image], tmp_path: Path) -> None:
    """The engine's hot modules are the mypyc-compiled ones (scripts/build_compiled.sh), built from this tree."""
    from bench.compiled import source_hash

    image = images["engine"]
    where = image.run(tmp_path, ["/opt/venv/bin/python", "-c",
                                 "import engine_service.rules.match as m, engine_service.edge.wire as w, "
                                 "engine_service.servicer as s; print(m.__file__, w.__file__, s.__file__)"])
    assert where.returncode == 0, where.stdout + where.stderr
    match, wire, servicer = where.stdout.split()
    for path in (match, wire):
        assert path.startswith("/opt/domino/compiled/engine_service/") and path.endswith(".so"), path
    assert servicer.startswith("/opt/domino/compiled/engine_service/") and servicer.endswith(".py")
    stamp = image.rootfs / "opt" / "domino" / "compiled" / "SOURCE_HASH"
    assert stamp.read_text().strip() == source_hash()


def test_engine_image_starts_answers_and_reports_healthy(images: dict[str, Image], tmp_path: Path) -> None:
    from clients.engine_client import EngineClient

    image = images["engine"]
    port, metrics_port = free_port(), free_port()
    env = {"ENGINE_HOST": "127.0.0.1", "ENGINE_PORT": str(port), "ENGINE_METRICS_PORT": str(metrics_port)}
    # Not serving yet: the image's health check says so.
    assert image.health(tmp_path, **env).returncode == 1

    log = tmp_path / "engine.log"
    proc = image.start(tmp_path, log, **env)
    bound = _addresses(log, proc)
    assert bound == {"grpc": f"127.0.0.1:{port}", "metrics": f"127.0.0.1:{metrics_port}"}
    health = image.health(tmp_path, **env)
    assert health.returncode == 0, health.stdout + health.stderr

    with EngineClient(f"127.0.0.1:{port}", timeout=10) as client:
        names = {variant["name"] for variant in client.list_variants()}
        assert "kozel" in names
        answer = client.new_match("kozel", 4, seed=7)
        _seat, actions = client.legal_actions(answer.state)
        assert actions
    # Expert decisions run in the engine's bot worker processes (their forkserver's socket is in /tmp).
    import grpc
    import orjson
    from domino.v1 import engine_pb2, engine_pb2_grpc

    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = engine_pb2_grpc.JsonEngineStub(channel)  # type: ignore[no-untyped-call]
        bots = [{"seat": s, "level": "expert"} for s in (1, 2, 3)]
        seated = stub.NewMatch(engine_pb2.JsonCall(args=orjson.dumps(
            {"variant": "kozel", "players": 4, "seed": 3, "bots": bots})), timeout=30)
        assert orjson.loads(seated.answer)["state"]["round"]["to_move"] == 0  # seat 1 led: the bots played
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5) as reply:
        text = reply.read().decode()
    assert 'grpc_server_handled_total{grpc_code="OK",grpc_method="ListVariants"' in text

    assert _stop(proc, log) == 0, _tail(log.read_text())
    assert '"stopped"' in log.read_text()
    assert image.health(tmp_path, **env).returncode == 1


def test_gateway_image_serves_the_api_against_the_engine_image(images: dict[str, Image], tmp_path: Path) -> None:
    engine, gateway = images["engine"], images["gateway"]
    engine_port, gateway_port, metrics_port = free_port(), free_port(), free_port()
    engine_env = {"ENGINE_HOST": "127.0.0.1", "ENGINE_PORT": str(engine_port), "ENGINE_METRICS_PORT": "off"}
    gateway_env = {"GATEWAY_HOST": "127.0.0.1", "GATEWAY_PORT": str(gateway_port), "GATEWAY_WORKERS": "2",
                   "GATEWAY_METRICS_PORT": str(metrics_port),
                   "GATEWAY_ENGINE": f"127.0.0.1:{engine_port}",
                   "STATE_TOKEN_KEYS": "k1:8vqif28BflUK815iBARrWUfbf2xP836S0ob3WV13xbw="}
    assert gateway.health(tmp_path, **gateway_env).returncode == 1   # nothing listens yet

    engine_log, gateway_log = tmp_path / "engine.log", tmp_path / "gateway.log"
    engine_proc = engine.start(tmp_path, engine_log, **engine_env)
    _addresses(engine_log, engine_proc)
    gateway_proc = gateway.start(tmp_path, gateway_log, **gateway_env)
    bound = _addresses(gateway_log, gateway_proc)
    assert bound == {"http": f"127.0.0.1:{gateway_port}", "metrics": f"127.0.0.1:{metrics_port}"}, bound

    health = gateway.health(tmp_path, **gateway_env)
    assert health.returncode == 0, health.stdout + health.stderr
    base = f"http://127.0.0.1:{gateway_port}"
    with urllib.request.urlopen(f"{base}/readyz", timeout=10) as reply:
        assert json.loads(reply.read())["status"] == "ready"
    request = urllib.request.Request(f"{base}/v1/matches", method="POST",
                                     data=json.dumps({"variant": "kozel", "players": 4, "mode": "sealed"}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as reply:
        assert reply.status == 201
        answer = json.loads(reply.read())
    assert answer["token"].startswith("v1.k1.") and len(answer["seat_keys"]) == 4 and "state" not in answer
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    assert 'domino_gateway_http_requests_total{method="POST",route="/v1/matches",status="201"}' in text
    with pytest.raises(urllib.error.HTTPError) as not_here:  # nothing of it on the API's port
        urllib.request.urlopen(f"{base}/metrics", timeout=10)
    assert not_here.value.code == 404

    # both stop gracefully on SIGTERM (gunicorn drains its workers)
    assert _stop(gateway_proc, gateway_log) == 0, _tail(gateway_log.read_text())
    assert _stop(engine_proc, engine_log) == 0, _tail(engine_log.read_text())
    assert gateway.health(tmp_path, **gateway_env).returncode == 1
