"""The archive database in the Kubernetes manifests (issue 25): the gateway and a migration Job read its
URL from a Secret; the dev overlay runs one hardened PostgreSQL with a volume that only those two reach;
the prod overlay points at a managed one (its Secret created in the cluster, an egress rule to its
address). Checked offline on the built overlays, like the rest of tests/deploy."""
from __future__ import annotations

from typing import Any

import pytest
from test_deploy_k8s import NAMESPACES, OVERLAYS, Pod, allowed, build, find, one, pod_template

Obj = dict[str, Any]
SECRET = "domino-database"


def env_secret(container: Obj, name: str) -> tuple[str, str]:
    (found,) = [e["valueFrom"]["secretKeyRef"] for e in container.get("env", [])
                if e["name"] == name and "secretKeyRef" in e.get("valueFrom", {})]
    return found["name"], found["key"]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_gateway_and_the_migration_job_read_the_database_url_from_one_secret(overlay: str) -> None:
    objs = build(overlay)
    gateway = pod_template(one(objs, "Deployment", "domino-gateway"))["spec"]["containers"][0]
    assert env_secret(gateway, "GATEWAY_DATABASE") == (SECRET, "GATEWAY_DATABASE")
    job = one(objs, "Job", "domino-migrate")
    spec = job["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    assert container["command"][-3:] == ["-m", "api_gateway.archive", "upgrade"]
    assert container["image"] == gateway["image"]   # the schema of the gateway it serves
    assert env_secret(container, "GATEWAY_DATABASE") == (SECRET, "GATEWAY_DATABASE")
    assert spec["restartPolicy"] == "OnFailure" and job["spec"]["backoffLimit"] >= 5
    assert job["spec"]["ttlSecondsAfterFinished"] > 0
    assert spec["securityContext"]["runAsNonRoot"] is True and spec["automountServiceAccountToken"] is False
    sc = container["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True and sc["capabilities"]["drop"] == ["ALL"]
    assert set(container["resources"]["limits"]) == {"cpu", "memory"}
    secrets = find(objs, "Secret", SECRET)
    if overlay == "prod":
        assert secrets == [], "the production database URL is created in the cluster, never applied from git"
    else:
        (secret,) = secrets
        assert secret["stringData"]["GATEWAY_DATABASE"].startswith("postgresql://")
        from api_gateway.archive.database import parse_url

        assert parse_url(secret["stringData"]["GATEWAY_DATABASE"]).host == "domino-postgres"


def test_dev_runs_one_hardened_postgresql_with_a_volume() -> None:
    objs = build("dev")
    (statefulset,) = find(objs, "StatefulSet", "domino-postgres")
    assert statefulset["spec"]["replicas"] == 1
    (claim,) = statefulset["spec"]["volumeClaimTemplates"]
    assert claim["spec"]["resources"]["requests"]["storage"]
    spec = pod_template(statefulset)["spec"]
    assert spec["securityContext"]["runAsNonRoot"] is True and spec["automountServiceAccountToken"] is False
    (container,) = spec["containers"]
    assert ":" in container["image"] and not container["image"].endswith(":latest")
    sc = container["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True and sc["capabilities"]["drop"] == ["ALL"]
    assert sc["allowPrivilegeEscalation"] is False
    assert {"startupProbe", "readinessProbe", "livenessProbe"} <= set(container)
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    assert mounts["/var/lib/postgresql/data"] == claim["metadata"]["name"]
    env = {e["name"]: e for e in container["env"]}
    assert env["PGDATA"]["value"].startswith("/var/lib/postgresql/data/")
    assert env["POSTGRES_PASSWORD"]["valueFrom"]["secretKeyRef"]["name"] == "domino-postgres"
    url = one(objs, "Secret", SECRET)["stringData"]["GATEWAY_DATABASE"]
    password = one(objs, "Secret", "domino-postgres")["stringData"]["POSTGRES_PASSWORD"]
    assert f":{password}@" in url and f"/{env['POSTGRES_DB']['value']}" in url
    service = one(objs, "Service", "domino-postgres")
    assert service["spec"]["ports"][0]["port"] == 5432


def test_dev_network_policy_lets_only_the_gateway_and_the_migration_job_reach_postgresql() -> None:
    objs = build("dev")
    policies = find(objs, "NetworkPolicy")
    ns = NAMESPACES["dev"]

    def pod_of(kind: str, name: str) -> Pod:
        template = pod_template(one(objs, kind, name)) if kind != "Job" else one(objs, kind, name)["spec"]["template"]
        ports = {p["name"]: p["containerPort"] for p in template["spec"]["containers"][0].get("ports", [])}
        return Pod(ns, template["metadata"]["labels"], ports)

    postgres = pod_of("StatefulSet", "domino-postgres")
    gateway, migrate = pod_of("Deployment", "domino-gateway"), pod_of("Job", "domino-migrate")
    engine, redis = pod_of("Deployment", "domino-engine"), pod_of("Deployment", "domino-redis")
    kube_dns = Pod("kube-system", {"k8s-app": "kube-dns"})
    stranger = Pod(ns, {"app": "debug-shell"})
    elsewhere = Pod("default", {"app.kubernetes.io/name": "domino-gateway"})
    assert allowed(policies, gateway, postgres, 5432) and allowed(policies, migrate, postgres, 5432)
    assert allowed(policies, migrate, kube_dns, 53, "UDP")
    for src in (engine, redis, stranger, elsewhere):
        assert not allowed(policies, src, postgres, 5432), src.labels
    assert not allowed(policies, migrate, engine, 50051) and not allowed(policies, migrate, redis, 6379)
    assert not allowed(policies, postgres, gateway, 8080)


def test_prod_reaches_a_managed_database_by_its_address_only() -> None:
    objs = build("prod")
    assert find(objs, "StatefulSet") == []
    policy = one(objs, "NetworkPolicy", "domino-database-egress")
    selected = policy["spec"]["podSelector"]["matchExpressions"][0]["values"]
    assert sorted(selected) == ["domino-gateway", "domino-migrate"]
    (rule,) = policy["spec"]["egress"]
    (peer,) = rule["to"]
    assert peer["ipBlock"]["cidr"].endswith("/32")
    assert rule["ports"] == [{"port": 5432, "protocol": "TCP"}]
