"""The alert rules and the dashboard: checked and unit-tested by promtool, and built only from
metric names the services really export (a renamed metric must break a test, not an alert)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.manifests import DEPLOY, REPO_ROOT

MONITORING = DEPLOY / "monitoring"
RULES = MONITORING / "memloop-rules.yaml"
RULE_TESTS = MONITORING / "tests" / "memloop-rules.test.yaml"
DASHBOARD = MONITORING / "grafana-dashboard.json"
_METRIC_DEF = re.compile(r"""(Counter|Gauge|Histogram|Summary)\(\s*["'](memloop_[a-z0-9_]+)["']""")
_SUFFIXES = {"Histogram": ("_bucket", "_sum", "_count"), "Summary": ("_sum", "_count")}


def promtool() -> str:
    path = shutil.which("promtool")
    assert path, "promtool missing: `make install` installs Debian's prometheus package"
    return path


def _promtool(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([promtool(), *map(str, args)], capture_output=True, text=True, timeout=120, check=False)


def exported_metrics() -> set[str]:
    """Every series name the services can expose, from their prometheus_client definitions."""
    names: set[str] = set()
    for path in (REPO_ROOT / "services").rglob("*.py"):
        for kind, name in _METRIC_DEF.findall(path.read_text(encoding="utf-8")):
            names.add(name)
            names |= {name + suffix for suffix in _SUFFIXES.get(kind, ())}
    return names


def _rules() -> list[dict[str, Any]]:
    return [rule for group in yaml.safe_load(RULES.read_text(encoding="utf-8"))["groups"] for rule in group["rules"]]


def _dashboard_exprs() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]


def _metric_names(expr: str) -> set[str]:
    return set(re.findall(r"\bmemloop_[a-z0-9_]+", expr))


def test_the_rules_pass_promtool_check() -> None:
    done = _promtool("check", "rules", RULES)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(_rules())} rules found" in done.stdout


def test_every_rule_behaves_as_its_unit_tests_say() -> None:
    done = _promtool("test", "rules", RULE_TESTS)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_alert_has_a_firing_case_in_the_unit_tests() -> None:
    tests = yaml.safe_load(RULE_TESTS.read_text(encoding="utf-8"))["tests"]
    fired = {case["alertname"] for test in tests for case in test.get("alert_rule_test", []) if case.get("exp_alerts")}
    assert {rule["alert"] for rule in _rules()} == fired


def test_the_issue_s_signals_each_have_an_alert() -> None:
    watched = set().union(*(_metric_names(rule["expr"]) for rule in _rules()))
    assert {
        "memloop_outbox_oldest_age_seconds",  # outbox age
        "memloop_worker_consumer_pending",  # consumer lag
        "memloop_worker_consumer_oldest_pending_age_seconds",  # oldest pending age
        "memloop_worker_dlq_depth",  # DLQ depth
        "memloop_memory_decisions_total",  # decisions by outcome, each applied decision once
        "memloop_retrieval_seconds_bucket",  # retrieval latency
        "memloop_deletion_oldest_open_step_age_seconds",  # deletion steps stuck
    } <= watched


def test_rules_and_dashboard_use_only_metrics_the_services_export() -> None:
    exported = exported_metrics()
    used = set().union(*(_metric_names(r["expr"]) for r in _rules()), *map(_metric_names, _dashboard_exprs()))
    assert used and used - exported == set()


def test_every_runbook_link_points_at_a_section_of_the_monitoring_readme() -> None:
    headings = re.findall(r"^### (\S+)$", (MONITORING / "README.md").read_text(encoding="utf-8"), re.M)
    anchors = {f"deploy/monitoring/README.md#{h.lower()}" for h in headings}
    assert {rule["annotations"]["runbook_url"] for rule in _rules()} <= anchors


def test_every_dashboard_query_is_valid_promql(tmp_path: Path) -> None:
    # promtool parses PromQL offline only inside rule files: one recording rule per panel query
    exprs = _dashboard_exprs()
    rules = {
        "groups": [
            {"name": "dashboard", "rules": [{"record": f"dashboard:q{i}", "expr": e} for i, e in enumerate(exprs)]}
        ]
    }
    path = tmp_path / "dashboard-queries.yaml"
    path.write_text(yaml.safe_dump(rules), encoding="utf-8")
    done = _promtool("check", "rules", path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(exprs) >= 15


@pytest.mark.parametrize(
    "broken", ["sum(rate(memloop_worker_dlq_depth[5m])", "max(memloop_outbox_oldest_age_seconds) >"]
)
def test_promtool_would_refuse_a_broken_query(tmp_path: Path, broken: str) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "x", "rules": [{"record": "x:y", "expr": broken}]}]}))
    assert _promtool("check", "rules", path).returncode != 0
