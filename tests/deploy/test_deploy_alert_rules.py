"""The alert rules: promtool accepts them, their unit tests pass, every alert has a case
where it fires and one where it stays quiet, and the PrometheusRule carries the same rules."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from deploy_helpers import REPO, tool

RULES = REPO / "monitoring" / "rules" / "domino.rules.yml"
RULE_TESTS = REPO / "monitoring" / "rules" / "domino.rules.test.yml"


def alerts() -> list[dict[str, object]]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return [rule for group in groups for rule in group["rules"] if "alert" in rule]


def promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([tool("promtool"), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False)


def test_promtool_check_rules() -> None:
    result = promtool("check", "rules", str(RULES), cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(alerts())} rules found" in result.stdout


def test_promtool_unit_tests_pass() -> None:
    result = promtool("test", "rules", str(RULE_TESTS), cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_every_alert_has_a_unit_test_and_the_issue_s_alerts_exist() -> None:
    names = {str(rule["alert"]) for rule in alerts()}
    tested = {case["alertname"] for test in yaml.safe_load(RULE_TESTS.read_text())["tests"]
              for case in test.get("alert_rule_test", [])}
    assert names == tested
    # error ratio, p99 latency, engine unavailable from the gateway, pods restarting
    for needed in ("DominoEngineErrorRatioHigh", "DominoGatewayErrorRatioHigh", "DominoEngineLatencyP99High",
                   "DominoGatewayLatencyP99High", "DominoEngineUnavailableFromGateway", "DominoPodRestarting"):
        assert needed in names
    for rule in alerts():
        assert rule["labels"]["severity"] in ("warning", "critical"), rule["alert"]  # type: ignore[index]
        anchor = str(rule["alert"]).lower()
        assert rule["annotations"]["runbook"] == f"docs/operations.md#{anchor}"  # type: ignore[index]
        assert f"### {rule['alert']}" in (REPO / "docs" / "operations.md").read_text(), \
            f"docs/operations.md has no runbook section for {rule['alert']}"


@pytest.mark.parametrize("mutation", ["never", "always"])
def test_unit_tests_catch_an_alert_that_never_or_always_fires(mutation: str, tmp_path: Path) -> None:
    """Replace one alert's expression at a time: the unit tests must then fail (so each
    alert has a test where it fires, and one where it must not)."""
    groups = yaml.safe_load(RULES.read_text())["groups"]
    shutil.copy(RULE_TESTS, tmp_path / RULE_TESTS.name)
    for name in [str(rule["alert"]) for rule in alerts()]:
        mutated = yaml.safe_load(yaml.safe_dump(groups))
        for group in mutated:
            for rule in group["rules"]:
                if rule.get("alert") == name:
                    rule["expr"] = "vector(1) > 2" if mutation == "never" else "vector(1)"
        (tmp_path / RULES.name).write_text(yaml.safe_dump({"groups": mutated}))
        result = promtool("test", "rules", RULE_TESTS.name, cwd=tmp_path)
        assert result.returncode != 0, f"{name} made to fire {mutation}: its unit tests still pass"


def test_prometheusrule_is_rendered_from_the_rules_file() -> None:
    result = subprocess.run([sys.executable, str(REPO / "monitoring" / "render.py"), "--check"],
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    rendered = yaml.safe_load((REPO / "monitoring" / "prometheusrule.yaml").read_text())
    assert rendered["kind"] == "PrometheusRule"
    assert rendered["spec"]["groups"] == yaml.safe_load(RULES.read_text())["groups"]
