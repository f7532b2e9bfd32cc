"""The Kubernetes manifests: every overlay builds with `kubectl kustomize`, every built
object is accepted by `kubernetes-validate --strict` (custom resources are checked
here by shape instead), and the built objects do what issue 7 asks: hardened pods,
probes, limits, HPA and PDB, a headless engine Service the gateway resolves, a
default-deny NetworkPolicy whose allows admit exactly the intended flows."""
from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from deploy_helpers import REPO, tool

OVERLAYS = sorted(p.name for p in (REPO / "k8s" / "overlays").iterdir() if (p / "kustomization.yaml").is_file())
NAMESPACES = {"dev": "domino-dev", "prod": "domino"}
KUBERNETES_VERSIONS = ["1.29.0", "1.37.0"]   # oldest and newest schemas we promise
CUSTOM_GROUPS = ("monitoring.coreos.com/",)
SERVICES = ("domino-engine", "domino-gateway")

Obj = dict[str, Any]


def test_overlays_exist() -> None:
    assert OVERLAYS == ["dev", "prod"]


_BUILT: dict[str, list[Obj]] = {}


def build(overlay: str) -> list[Obj]:
    if overlay not in _BUILT:
        kubectl = tool("kubectl", "kubectl ships on this machine image; elsewhere install kubectl >= 1.27")
        result = subprocess.run([kubectl, "kustomize", str(REPO / "k8s" / "overlays" / overlay)],
                                capture_output=True, text=True, timeout=120, check=False)
        assert result.returncode == 0, result.stderr
        _BUILT[overlay] = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    return _BUILT[overlay]


def find(objs: list[Obj], kind: str, name: str | None = None) -> list[Obj]:
    return [o for o in objs if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]


def one(objs: list[Obj], kind: str, name: str) -> Obj:
    found = find(objs, kind, name)
    assert len(found) == 1, f"{kind}/{name}: {len(found)} found"
    return found[0]


def matches(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """Label selector semantics (matchLabels and matchExpressions); {} selects everything."""
    selector = selector or {}
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], expr.get("values") or []
        ok = {"In": key in labels and labels[key] in values,
              "NotIn": key not in labels or labels[key] not in values,
              "Exists": key in labels, "DoesNotExist": key not in labels}[op]
        if not ok:
            return False
    return True


def pod_template(deployment: Obj) -> Obj:
    return deployment["spec"]["template"]  # type: ignore[no-any-return]


# ------------------------------------------------------------------ build and validate


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_kustomize_builds_and_everything_is_in_the_overlay_namespace(overlay: str) -> None:
    objs = build(overlay)
    kinds = {(o["kind"], o["metadata"]["name"]) for o in objs}
    for name in SERVICES:
        for kind in ("ServiceAccount", "Deployment", "Service", "HorizontalPodAutoscaler",
                     "PodDisruptionBudget", "ServiceMonitor"):
            assert (kind, name) in kinds, (kind, name)
    assert ("Ingress", "domino-gateway") in kinds
    assert ("PrometheusRule", "domino") in kinds
    assert ("ConfigMap", "domino-grafana-dashboard") in kinds
    namespace = NAMESPACES[overlay]
    assert one(objs, "Namespace", namespace)
    for o in objs:
        if o["kind"] != "Namespace":
            assert o["metadata"]["namespace"] == namespace, (o["kind"], o["metadata"]["name"])


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_kubernetes_validate_strict(overlay: str, version: str, tmp_path: Path) -> None:
    validate = tool("kubernetes-validate", "pip install -e '.[deploy]'")
    objs = [o for o in build(overlay) if not o["apiVersion"].startswith(CUSTOM_GROUPS)]
    manifest = tmp_path / f"{overlay}.yaml"
    manifest.write_text(yaml.safe_dump_all(objs))
    result = subprocess.run([validate, "--strict", "-k", version, str(manifest)],
                            capture_output=True, text=True, timeout=120, check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert output.count(" passed for resource ") == len(objs), output
    assert "ERROR" not in output and "Couldn't find schema" not in output, output


def test_kubernetes_validate_rejects_a_stray_field(tmp_path: Path) -> None:
    """--strict is really strict: an unknown field in a built Deployment fails."""
    validate = tool("kubernetes-validate", "pip install -e '.[deploy]'")
    deployment = one(build("prod"), "Deployment", "domino-engine")
    broken = json.loads(json.dumps(deployment))
    broken["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["grpcc"] = {"port": 1}
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(broken))
    result = subprocess.run([validate, "--strict", str(tmp_path / "bad.yaml")],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode != 0 and "grpcc" in result.stdout + result.stderr


# ------------------------------------------------------------------ workloads


def dockerfile_user(name: str) -> int:
    text = (REPO / "docker" / f"Dockerfile.{name}").read_text()
    return int(re.findall(r"^USER (\d+)", text, re.MULTILINE)[-1])


@pytest.mark.parametrize("overlay", OVERLAYS)
@pytest.mark.parametrize("name", SERVICES)
def test_pods_are_hardened_probed_and_bounded(overlay: str, name: str) -> None:
    objs = build(overlay)
    template = pod_template(one(objs, "Deployment", name))
    spec = template["spec"]
    pod_sc = spec["securityContext"]
    assert pod_sc["runAsNonRoot"] is True
    assert pod_sc["runAsUser"] == dockerfile_user(name.removeprefix("domino-"))
    assert pod_sc["seccompProfile"]["type"] == "RuntimeDefault"
    assert spec["serviceAccountName"] == name and one(objs, "ServiceAccount", name)
    assert spec["automountServiceAccountToken"] is False
    (container,) = spec["containers"]
    sc = container["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"]["drop"] == ["ALL"] and "add" not in sc["capabilities"]
    for bound in ("requests", "limits"):
        assert set(container["resources"][bound]) == {"cpu", "memory"}, bound
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert probe in container, probe
    # read-only root: the only writable path is a size-limited memory emptyDir on /tmp (the gateway's
    # worker heartbeats and metric files, the engine's bot-worker forkserver socket)
    (mount,) = container["volumeMounts"]
    (volume,) = spec["volumes"]
    assert mount["mountPath"] == "/tmp" and mount["name"] == volume["name"]
    assert volume["emptyDir"]["medium"] == "Memory" and volume["emptyDir"]["sizeLimit"]
    if name == "domino-engine":
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            assert container[probe]["grpc"]["port"] == ports["grpc"], probe
    else:
        assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
        assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
        assert container["readinessProbe"]["httpGet"]["port"] in ("http", ports["http"])
        # serve on while the endpoint removal propagates, within the grace period
        pause = container["lifecycle"]["preStop"]["exec"]["command"]
        assert pause[0] == "/bin/sleep" and int(pause[1]) + 15 < spec["terminationGracePeriodSeconds"]
    # the graceful stop fits in the termination grace period
    settings = settings_of(objs)
    if name == "domino-engine":
        drain = float(settings["ENGINE_SHUTDOWN_DELAY_SECONDS"]) + float(settings["ENGINE_GRACE_SECONDS"])
        assert spec["terminationGracePeriodSeconds"] > drain


def settings_of(objs: list[Obj]) -> dict[str, str]:
    (config_map,) = [o for o in find(objs, "ConfigMap") if o["metadata"]["name"].startswith("domino-settings-")]
    return dict(config_map["data"])


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_settings_configmap_and_token_secret_are_wired(overlay: str) -> None:
    objs = build(overlay)
    (config_map,) = [o for o in find(objs, "ConfigMap") if o["metadata"]["name"].startswith("domino-settings-")]
    for name in SERVICES:
        container = pod_template(one(objs, "Deployment", name))["spec"]["containers"][0]
        refs = [e["configMapRef"]["name"] for e in container.get("envFrom", []) if "configMapRef" in e]
        assert refs == [config_map["metadata"]["name"]], name   # hashed name: a change rolls the pods
    gateway = pod_template(one(objs, "Deployment", "domino-gateway"))["spec"]["containers"][0]
    secret_refs = {e["valueFrom"]["secretKeyRef"]["name"] for e in gateway["env"]
                   if "secretKeyRef" in e.get("valueFrom", {})}
    assert secret_refs == {"domino-state-token-keys", "domino-database"}   # the archive's URL: test_deploy_database
    secrets = find(objs, "Secret", "domino-state-token-keys")
    if overlay == "prod":
        assert secrets == [], "production keys are created in the cluster, never applied from git"
    else:
        (secret,) = secrets
        assert secret["type"] == "Opaque"
        keys = secret["stringData"]["STATE_TOKEN_KEYS"]
        tokens = pytest.importorskip("api_gateway.tokens", reason="the gateway's key ring parses the keys")
        assert tokens.KeyRing.parse(keys).ids  # the gateway accepts the key


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_gateway_balances_over_the_headless_engine_service(overlay: str) -> None:
    objs = build(overlay)
    service = one(objs, "Service", "domino-engine")
    assert service["spec"]["clusterIP"] == "None"
    engine_pods = pod_template(one(objs, "Deployment", "domino-engine"))["metadata"]["labels"]
    assert matches({"matchLabels": service["spec"]["selector"]}, engine_pods)
    grpc_port = next(p["port"] for p in service["spec"]["ports"] if p["name"] == "grpc")
    target = settings_of(objs)["GATEWAY_ENGINE"]
    assert target == f"dns:///domino-engine.{NAMESPACES[overlay]}.svc.cluster.local:{grpc_port}"
    gateway_service = one(objs, "Service", "domino-gateway")
    assert gateway_service["spec"].get("clusterIP") != "None"
    assert matches({"matchLabels": gateway_service["spec"]["selector"]},
                   pod_template(one(objs, "Deployment", "domino-gateway"))["metadata"]["labels"])


@pytest.mark.parametrize("overlay", OVERLAYS)
@pytest.mark.parametrize("name", SERVICES)
def test_autoscaler_and_disruption_budget(overlay: str, name: str) -> None:
    objs = build(overlay)
    deployment = one(objs, "Deployment", name)
    hpa = one(objs, "HorizontalPodAutoscaler", name)
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": name}
    low, high = hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]
    assert 1 <= low <= deployment["spec"]["replicas"] <= high
    assert {m["resource"]["name"] for m in hpa["spec"]["metrics"]} == {"cpu"}
    pdb = one(objs, "PodDisruptionBudget", name)
    assert pdb["apiVersion"] == "policy/v1"
    assert matches(pdb["spec"]["selector"], pod_template(deployment)["metadata"]["labels"])
    # the budget never forbids every eviction at the smallest size
    if "minAvailable" in pdb["spec"]:
        assert pdb["spec"]["minAvailable"] < low
    else:
        assert pdb["spec"]["maxUnavailable"] >= 1


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_ingress_exposes_only_the_api(overlay: str) -> None:
    objs = build(overlay)
    ingress = one(objs, "Ingress", "domino-gateway")
    service = one(objs, "Service", "domino-gateway")
    port_names = {p["name"] for p in service["spec"]["ports"]}
    (rule,) = ingress["spec"]["rules"]
    paths = rule["http"]["paths"]
    assert [p["path"] for p in paths] == ["/v1"]
    for p in paths:
        assert p["backend"]["service"]["name"] == "domino-gateway"
        assert p["backend"]["service"]["port"]["name"] in port_names
    if overlay == "prod":
        assert ingress["spec"]["tls"][0]["hosts"] == [rule["host"]]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_images_are_pinned_per_overlay(overlay: str) -> None:
    objs = build(overlay)
    for name in SERVICES:
        image = pod_template(one(objs, "Deployment", name))["spec"]["containers"][0]["image"]
        assert ":" in image and not image.endswith(":latest"), image


# ------------------------------------------------------------------ network policy


@dataclass
class Pod:
    namespace: str
    labels: dict[str, str]
    ports: dict[str, int] = field(default_factory=dict)

    @property
    def namespace_labels(self) -> dict[str, str]:
        return {"kubernetes.io/metadata.name": self.namespace}


def _peer_matches(peer: Obj, policy_namespace: str, pod: Pod) -> bool:
    if "ipBlock" in peer:
        return False
    if "namespaceSelector" in peer:
        if not matches(peer["namespaceSelector"], pod.namespace_labels):
            return False
    elif pod.namespace != policy_namespace:
        return False
    return "podSelector" not in peer or matches(peer["podSelector"], pod.labels)


def _port_matches(rule: Obj, port: int, protocol: str, target: Pod) -> bool:
    if not rule.get("ports"):
        return True
    for entry in rule["ports"]:
        if entry.get("protocol", "TCP") != protocol:
            continue
        wanted = entry.get("port")
        if wanted is None or wanted == port or (isinstance(wanted, str) and target.ports.get(wanted) == port):
            return True
    return False


def allowed(policies: list[Obj], src: Pod, dst: Pod, port: int, protocol: str = "TCP") -> bool:
    """Would these NetworkPolicies let src open port/protocol on dst? (Both ends' policies.)"""
    def side(direction: str, owner: Pod, peer: Pod, key: str) -> bool:
        selecting = [p for p in policies if p["metadata"]["namespace"] == owner.namespace
                     and direction in p["spec"].get("policyTypes", ["Ingress"])
                     and matches(p["spec"]["podSelector"], owner.labels)]
        if not selecting:
            return True
        for policy in selecting:
            for rule in policy["spec"].get(direction.lower(), []) or []:
                peers = rule.get(key)
                if (not peers or any(_peer_matches(x, owner.namespace, peer) for x in peers)) \
                        and _port_matches(rule, port, protocol, dst):
                    return True
        return False

    return side("Egress", src, dst, "to") and side("Ingress", dst, src, "from")


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_network_policy_default_deny_with_explicit_allows(overlay: str) -> None:
    objs = build(overlay)
    policies = find(objs, "NetworkPolicy")
    ns = NAMESPACES[overlay]
    deny = one(objs, "NetworkPolicy", "default-deny-all")["spec"]
    assert deny["podSelector"] == {} and set(deny["policyTypes"]) == {"Ingress", "Egress"}
    assert "ingress" not in deny and "egress" not in deny

    def pod_of(name: str) -> Pod:
        template = pod_template(one(objs, "Deployment", name))
        ports = {p["name"]: p["containerPort"] for p in template["spec"]["containers"][0]["ports"]}
        return Pod(ns, template["metadata"]["labels"], ports)

    engine, gateway = pod_of("domino-engine"), pod_of("domino-gateway")
    prometheus = Pod("monitoring", {"app.kubernetes.io/name": "prometheus"})
    ingress_nginx = Pod("ingress-nginx", {"app.kubernetes.io/name": "ingress-nginx"})
    kube_dns = Pod("kube-system", {"k8s-app": "kube-dns"})
    stranger = Pod(ns, {"app": "debug-shell"})
    elsewhere = Pod("default", {"app.kubernetes.io/name": "domino-gateway"})  # same labels, other namespace
    other_monitor = Pod("monitoring", {"app.kubernetes.io/name": "grafana"})

    grpc, metrics, http = engine.ports["grpc"], engine.ports["metrics"], gateway.ports["http"]
    gateway_metrics = gateway.ports["metrics"]
    must = [(gateway, engine, grpc, "TCP"), (ingress_nginx, gateway, http, "TCP"),
            (prometheus, engine, metrics, "TCP"), (prometheus, gateway, gateway_metrics, "TCP"),
            (gateway, kube_dns, 53, "UDP"), (gateway, kube_dns, 53, "TCP")]
    for src, dst, port, proto in must:
        assert allowed(policies, src, dst, port, proto), (src.labels, dst.labels, port, proto)
    must_not = [(stranger, engine, grpc, "TCP"), (ingress_nginx, engine, grpc, "TCP"),
                (engine, gateway, http, "TCP"), (prometheus, engine, grpc, "TCP"),
                (gateway, engine, metrics, "TCP"), (elsewhere, engine, grpc, "TCP"),
                (other_monitor, engine, metrics, "TCP"), (engine, kube_dns, 53, "UDP"),
                (stranger, gateway, http, "TCP"), (gateway, prometheus, 9090, "TCP"),
                # the gateway's metrics are Prometheus's alone: not the ingress's, nor anyone's in the namespace
                (ingress_nginx, gateway, gateway_metrics, "TCP"), (stranger, gateway, gateway_metrics, "TCP"),
                (prometheus, gateway, http, "TCP")]
    for src, dst, port, proto in must_not:
        assert not allowed(policies, src, dst, port, proto), (src.labels, dst.labels, port, proto)


# ------------------------------------------------------------------ monitoring objects


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_service_monitors_select_the_services_metrics_ports(overlay: str) -> None:
    objs = build(overlay)
    for name in SERVICES:
        monitor = one(objs, "ServiceMonitor", name)
        assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
        services = [s for s in find(objs, "Service") if matches(monitor["spec"]["selector"], s["metadata"]["labels"])]
        assert [s["metadata"]["name"] for s in services] == [name]
        port_names = {p["name"] for p in services[0]["spec"]["ports"]}
        for endpoint in monitor["spec"]["endpoints"]:
            assert endpoint["port"] in port_names and endpoint["path"] == "/metrics"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_rules_and_dashboard_ship_unchanged(overlay: str) -> None:
    objs = build(overlay)
    rule = one(objs, "PrometheusRule", "domino")
    source = yaml.safe_load((REPO / "monitoring" / "rules" / "domino.rules.yml").read_text())
    assert rule["spec"]["groups"] == source["groups"]
    dashboard = one(objs, "ConfigMap", "domino-grafana-dashboard")
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    shipped = json.loads(dashboard["data"]["domino-dashboard.json"])
    assert shipped == json.loads((REPO / "monitoring" / "grafana" / "domino-dashboard.json").read_text())


# ------------------------------------------------------------------ the token version store


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_token_store_is_one_hardened_redis_only_the_gateway_reaches(overlay: str) -> None:
    objs = build(overlay)
    redis = one(objs, "Deployment", "domino-redis")
    assert redis["spec"]["replicas"] == 1 and redis["spec"]["strategy"]["type"] == "Recreate"
    spec = pod_template(redis)["spec"]
    assert spec["securityContext"]["runAsNonRoot"] is True and spec["automountServiceAccountToken"] is False
    (container,) = spec["containers"]
    sc = container["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True and sc["capabilities"]["drop"] == ["ALL"]
    assert sc["allowPrivilegeEscalation"] is False
    for bound in ("requests", "limits"):
        assert set(container["resources"][bound]) == {"cpu", "memory"}, bound
    assert {"startupProbe", "readinessProbe", "livenessProbe"} <= set(container)
    assert ":" in container["image"] and not container["image"].endswith(":latest")
    # the gateway is pointed at it
    settings = settings_of(objs)
    service = one(objs, "Service", "domino-redis")
    ns = NAMESPACES[overlay]
    assert settings["GATEWAY_TOKEN_STORE"] == "redis://domino-redis:6379/0"  # the Service, in its own namespace
    assert service["spec"]["ports"][0]["port"] == 6379
    assert int(settings["GATEWAY_MATCH_TTL"]) > 0
    # and only the gateway reaches it
    policies = find(objs, "NetworkPolicy")

    def pod_of(name: str) -> Pod:
        template = pod_template(one(objs, "Deployment", name))
        ports = {p["name"]: p["containerPort"] for p in template["spec"]["containers"][0]["ports"]}
        return Pod(ns, template["metadata"]["labels"], ports)

    store, gateway, engine = pod_of("domino-redis"), pod_of("domino-gateway"), pod_of("domino-engine")
    stranger = Pod(ns, {"app": "debug-shell"})
    assert allowed(policies, gateway, store, 6379)
    for src in (engine, stranger, Pod("default", {"app.kubernetes.io/name": "domino-gateway"})):
        assert not allowed(policies, src, store, 6379), src.labels
    assert not allowed(policies, store, gateway, gateway.ports["http"])
