"""LimitRanges and ResourceQuotas at admission: the requests a namespace's LimitRange gives containers that set
none, and the pods the API server refuses (LimitRange min/max/ratio, a default limit below a request, a quota's
"must specify"), which are never created: not planned, and said. A quota the input's pods exceed is a warning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from karpplan.cli.main import app

POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
"""


def _limit_range(items: str) -> str:
    return f"apiVersion: v1\nkind: LimitRange\nmetadata: {{name: limits, namespace: team}}\nspec:\n  limits:\n{items}"


def _deployment(name: str, resources: str, replicas: int = 2, extra: str = "") -> str:
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: team}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
        - name: app
          image: x
          resources: {resources}
{extra}"""


def _plan(tmp_path: Path, *docs: str) -> tuple[int, dict[str, Any]]:
    path = tmp_path / "m.yaml"
    path.write_text("---\n".join((POOL, *docs)))
    result = CliRunner().invoke(app, ["plan", str(path), "--engine", "karpenter", "--zones", "us-east-1a", "-o", "json"])
    assert result.exit_code in (0, 1), result.stderr
    return result.exit_code, json.loads(result.stdout)


def _workloads(plan: dict[str, Any]) -> set[str]:
    return {p["workload"] for p in plan["pods"]}


def _warning(plan: dict[str, Any], text: str) -> str:
    found = [w for w in plan["warnings"] if text in w]
    assert found, plan["warnings"]
    return found[0]


LIMITS = _limit_range("""\
    - type: Container
      max: {cpu: "1", memory: 2Gi}
      min: {cpu: 50m}
      default: {cpu: 500m, memory: 512Mi}
      defaultRequest: {cpu: 100m, memory: 128Mi}
""")


def test_pods_over_the_limit_ranges_max_are_never_created_and_the_plan_says_why(tmp_path: Path) -> None:
    code, plan = _plan(tmp_path, LIMITS, _deployment("big", "{requests: {cpu: '2', memory: 1Gi}, limits: {cpu: '2'}}"),
                       _deployment("ok", "{}"))
    assert code == 0  # nothing pending is left unplaced: big's pods never exist
    assert _workloads(plan) == {"Deployment/ok"}
    warning = _warning(plan, "Deployment/big")
    assert "never created in namespace team" in warning
    assert "maximum cpu usage per Container is 1, but limit is 2" in warning
    assert {p["name"]: p["requests"] for p in plan["pods"]}["ok-0"] == {"cpu": "100m", "memory": "128Mi"}
    assert plan["summary"]["pods"] == 2


def test_a_default_limit_below_the_containers_request_makes_the_pod_invalid(tmp_path: Path) -> None:
    # request 800m, no limit: the LimitRange's default limit 500m is set, and requests may not exceed limits
    code, plan = _plan(tmp_path, LIMITS, _deployment("web", "{requests: {cpu: 800m}}"))
    assert _workloads(plan) == set()
    assert 'requests.cpu: Invalid value: "800m": must be less than or equal to cpu limit of 500m' in _warning(plan, "web")


def test_min_defaults_the_request_and_a_pod_item_caps_the_sum_of_the_containers(tmp_path: Path) -> None:
    ranges = _limit_range("""\
    - type: Container
      min: {cpu: 200m}
    - type: Pod
      max: {memory: 1Gi}
""")
    sidecar = "        - {name: proxy, image: envoy, resources: {limits: {memory: 768Mi}}}\n"
    _, plan = _plan(tmp_path, ranges, _deployment("api", "{limits: {memory: 512Mi}}", extra=sidecar),
                    _deployment("lean", "{limits: {memory: 256Mi}}"))
    assert _workloads(plan) == {"Deployment/lean"}
    assert "maximum memory usage per Pod is 1Gi, but limit is 1280Mi" in _warning(plan, "Deployment/api")
    assert {p["name"]: p["requests"] for p in plan["pods"]}["lean-0"] == {"cpu": "200m", "memory": "256Mi"}


def test_a_quota_on_limits_refuses_containers_that_set_none(tmp_path: Path) -> None:
    quota = ("apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute, namespace: team}\n"
             "spec:\n  hard: {requests.cpu: '20', limits.cpu: '40'}\n")
    _, plan = _plan(tmp_path, quota, _deployment("web", "{requests: {cpu: 250m}}"),
                    _deployment("capped", "{requests: {cpu: 250m}, limits: {cpu: 500m}}"))
    assert _workloads(plan) == {"Deployment/capped"}
    assert "failed quota: compute: must specify limits.cpu for: app" in _warning(plan, "Deployment/web")


def test_a_quota_the_replicas_exceed_is_a_warning_not_a_refusal(tmp_path: Path) -> None:
    quota = ("apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute, namespace: team}\n"
             "spec:\n  hard: {pods: '5', requests.memory: 100Gi}\n")
    _, plan = _plan(tmp_path, quota, _deployment("web", "{requests: {cpu: 250m, memory: 256Mi}}", replicas=8))
    assert len(plan["pods"]) == 8
    warning = _warning(plan, "ResourceQuota team/compute")
    assert "hard pods is 5 but the namespace's 8 pod(s) in the input use 8" in warning
    assert "requests.memory" not in warning


def test_pods_already_running_are_not_judged_again(tmp_path: Path) -> None:
    running = """\
apiVersion: v1
kind: Pod
metadata: {name: old-1, namespace: team}
spec:
  nodeName: ip-10-0-0-1.ec2.internal
  containers: [{name: app, image: x, resources: {requests: {cpu: '3'}}}]
status: {phase: Running}
"""
    _, plan = _plan(tmp_path, LIMITS, running)
    assert not [w for w in plan["warnings"] if "never created" in w]


def test_a_daemonset_the_limit_range_refuses_runs_on_no_node(tmp_path: Path) -> None:
    agent = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: team}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: x, resources: {requests: {cpu: '2'}, limits: {cpu: '2'}}}]
"""
    _, plan = _plan(tmp_path, LIMITS, agent, _deployment("ok", "{}"))
    assert "DaemonSet/agent: its pods are never created in namespace team" in _warning(plan, "DaemonSet/agent")
    assert [n["requested"] for n in plan["nodes"]] == [{"cpu": "200m", "memory": "256Mi", "pods": "2"}]  # no agent
