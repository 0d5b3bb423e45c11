"""Prices are never silently zero, and the plan says where they come from (issue 24, item 6).

Fargate: a rate for every region of the embedded catalog that AWS publishes one for, with its source in
`catalog --info`; a region without one is exit 2 naming `--fargate-prices`. Spot: the summary names the rule
behind estimated spot prices, and `plan --spot-prices FILE` reads `aws ec2 describe-spot-price-history` JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from karpplan.model.fargate_prices import FARGATE_PRICES, parse_fargate_prices

DATA = Path(__file__).parent / "data"
FARGATE_CLUSTER = """\
apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: c, region: ap-northeast-1}
fargateProfiles:
  - name: fp-default
    selectors:
      - namespace: default
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: nginx
          resources: {requests: {cpu: 500m, memory: 512Mi}}
"""
SPOT_POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: spot}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}
        - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large, c5.large]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
        - name: api
          image: nginx
          resources: {requests: {cpu: "1", memory: 2Gi}}
"""


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "karpplan.cli.main", *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "NO_COLOR": "1", "COLUMNS": "80"})


def _flat(text: str) -> str:
    """A table's words, with the summary panel's borders and line wraps taken out."""
    return " ".join(text.replace("│", " ").split())


def _json(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert result.returncode in (0, 1), result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


@pytest.fixture
def fargate(tmp_path: Path) -> Path:
    path = tmp_path / "fargate.yaml"
    path.write_text(FARGATE_CLUSTER)
    return path


@pytest.fixture
def spot(tmp_path: Path) -> Path:
    path = tmp_path / "spot.yaml"
    path.write_text(SPOT_POOL)
    return path


def test_fargate_in_tokyo_costs_its_published_rate(fargate: Path) -> None:
    plan = _json(_run("plan", str(fargate), "-o", "json", "--time-limit", "2"))
    # Two pods of 0.5 vCPU / 1 GB (512Mi + 256Mi rounds up) at $0.05056 per vCPU-hour and $0.00553 per GB-hour.
    assert plan["summary"]["hourlyCost"] == pytest.approx(2 * (0.5 * 0.05056 + 1 * 0.00553))
    assert "$0.05056 per vCPU-hour" in plan["summary"]["fargatePrices"]
    assert "aws.amazon.com/fargate/pricing" in plan["summary"]["fargatePrices"]


def test_a_region_without_a_known_fargate_rate_is_an_error_naming_the_option(fargate: Path) -> None:
    result = _run("plan", str(fargate), "--region", "ap-northeast-3")
    assert result.returncode == 2 and result.stdout == ""
    assert "no Fargate price is known for region ap-northeast-3" in result.stderr
    assert "--fargate-prices cpu=" in result.stderr
    supplied = _json(_run("plan", str(fargate), "--region", "ap-northeast-3", "--fargate-prices",
                          "cpu=0.06,memory=0.006", "-o", "json", "--time-limit", "2"))
    assert supplied["summary"]["hourlyCost"] == pytest.approx(2 * (0.5 * 0.06 + 0.006))
    assert "--fargate-prices" in supplied["summary"]["fargatePrices"]


@pytest.mark.parametrize("flag", ["cpu=0.05", "cpu=abc,memory=0.005", "cpu=0,memory=0.005", "gpu=1,memory=1"])
def test_malformed_fargate_prices_are_a_usage_error(fargate: Path, flag: str) -> None:
    result = _run("plan", str(fargate), "--fargate-prices", flag)
    assert result.returncode == 2 and result.stdout == ""
    assert "--fargate-prices" in result.stderr
    with pytest.raises(ValueError):
        parse_fargate_prices(flag)


def test_catalog_info_cites_the_fargate_rate_and_its_source() -> None:
    result = _run("catalog", "--info", "--region", "eu-central-1")
    assert result.returncode == 0
    assert "Fargate prices:" in result.stdout and "$0.04656 per vCPU-hour" in result.stdout
    assert "aws.amazon.com/fargate/pricing" in result.stdout and "2021-01-10" in result.stdout
    osaka = _run("catalog", "--info", "--region", "ap-northeast-3", "-o", "json")
    assert "--fargate-prices" in json.loads(osaka.stdout)["sources"]["Fargate prices"]


def test_every_rate_is_positive_and_x86_at_least_arm() -> None:
    for region, rate in FARGATE_PRICES.items():
        assert rate.per_vcpu_hour > 0 and rate.per_gb_hour > 0, region
        if rate.arm_per_vcpu_hour is not None:
            assert rate.arm_per_vcpu_hour < rate.per_vcpu_hour, region


def test_estimated_spot_prices_name_their_rule(spot: Path) -> None:
    plan = _json(_run("plan", str(spot), "-o", "json", "--time-limit", "2"))
    assert plan["summary"]["spotPrices"] == "estimated: 0.4 x on-demand"
    table = _run("plan", str(spot), "--time-limit", "2")
    assert "spot estimated as 0.4 x on-demand (real ones: --spot-prices FILE)" in _flat(table.stdout)


def test_spot_price_history_json_prices_the_plan(spot: Path) -> None:
    history = DATA / "catalog" / "spot-price-history.json"
    plan = _json(_run("plan", str(spot), "--spot-prices", str(history), "-o", "json", "--time-limit", "2"))
    assert plan["summary"]["spotPrices"].startswith(f"file:{history}")
    # m5.large's latest spot price in us-east-1a (0.0254, not the older 0.03) beats c5.large's estimate (0.034).
    m5 = [n for n in plan["nodes"] if n["instanceType"] == "m5.large"]
    assert m5 and {(n["zone"], n["hourlyPrice"], n["priceEstimated"]) for n in m5} == {("us-east-1a", 0.0254, False)}
    table = _run("plan", str(spot), "--spot-prices", str(history), "--time-limit", "2")
    assert f"spotfrom{history}" in _flat(table.stdout).replace(" ", "")  # a long path may fold


def test_a_spot_price_file_that_does_not_parse_is_exit_2_at_its_line(spot: Path, tmp_path: Path) -> None:
    broken = tmp_path / "history.json"
    broken.write_text('{"SpotPriceHistory": [\n  {"AvailabilityZone": "us-east-1a",,}\n]}\n')
    result = _run("plan", str(spot), "--spot-prices", str(broken))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith(f"{broken}:2: ")
    wrong = tmp_path / "prices.json"
    wrong.write_text('{"SpotPriceHistory": [\n  {"AvailabilityZone": "us-east-1a", "InstanceType": "m5.large",\n'
                     '   "SpotPrice": "cheap"}\n]}\n')
    result = _run("plan", str(spot), "--spot-prices", str(wrong))
    assert result.returncode == 2 and "cheap" in result.stderr and result.stderr.startswith(f"{wrong}:")
    other = tmp_path / "types.json"
    other.write_text('{"InstanceTypes": []}\n')
    result = _run("plan", str(spot), "--spot-prices", str(other))
    assert result.returncode == 2 and "describe-spot-price-history" in result.stderr


def test_supplied_fargate_prices_also_price_the_fixes_replans(fargate: Path, tmp_path: Path) -> None:
    """A plan with an unschedulable pod searches fixes by re-planning: those plans use the supplied rate too."""
    huge = tmp_path / "huge.yaml"
    huge.write_text("""\
apiVersion: v1
kind: Pod
metadata: {name: huge, namespace: other}
spec:
  containers:
    - name: app
      image: nginx
      resources: {requests: {cpu: "4"}}
""")
    result = _run("plan", str(fargate), str(huge), "--region", "ap-northeast-3", "--fargate-prices",
                  "cpu=0.06,memory=0.006", "-o", "json", "--time-limit", "2")
    assert result.returncode == 1, result.stderr  # the pod has no NodePool; the plan is still made
    plan = json.loads(result.stdout)
    assert [u["pod"] for u in plan["unschedulable"]] == ["other/huge"]
    assert plan["summary"]["hourlyCost"] == pytest.approx(2 * (0.5 * 0.06 + 0.006))


PINNED_SPOT = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: batch}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}
        - {key: node.kubernetes.io/instance-type, operator: In, values: [c5a.8xlarge, m5.large]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: recalc, namespace: batch}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {topology.kubernetes.io/zone: us-east-1b}
      containers:
        - name: recalc
          image: x
          resources: {requests: {cpu: "24", memory: 40Gi}}
"""


def test_a_spot_prices_file_that_leaves_a_zone_out_is_named_as_the_reason(tmp_path: Path) -> None:
    """A new user's trial: the file priced c5a.8xlarge spot in one zone only; the pod, pinned to another, was
    told only "no instance type met all requirements" (without the file it schedules)."""
    manifests = tmp_path / "batch.yaml"
    manifests.write_text(PINNED_SPOT)
    history = tmp_path / "spot-syd.json"
    history.write_text(json.dumps({"SpotPriceHistory": [
        {"AvailabilityZone": "us-east-1a", "InstanceType": "c5a.8xlarge", "ProductDescription": "Linux/UNIX",
         "SpotPrice": "0.498000", "Timestamp": "2026-11-27T20:01:00+00:00"}]}))
    without = _json(_run("plan", str(manifests), "--engine", "karpenter", "-o", "json"))
    assert without["summary"]["unschedulable"] == 0
    plan = _json(_run("plan", str(manifests), "--spot-prices", str(history), "--engine", "karpenter", "-o", "json"))
    reasons = plan["unschedulable"][0]["reasons"]
    assert reasons[0].startswith(f"the spot prices file {history} has no spot price for c5a.8xlarge in us-east-1b")
    assert "or plan without --spot-prices" in reasons[0]
    pool = next(r for r in reasons if r.startswith('nodepool "batch": '))
    assert pool.endswith("that have no price here (first reason)")
