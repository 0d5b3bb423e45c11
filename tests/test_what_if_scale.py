"""What-if scale (issue 24, item 8): --replicas, --scale, HorizontalPodAutoscalers and --hpa, and a plan whose
every workload has zero replicas said in plain words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from manifests import deployment, nodepool
from typer.testing import CliRunner

from karpplan.cli.main import app

POOL = nodepool()
# karpenter's getting-started `inflate`, as it ships: replicas 0.
INFLATE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: inflate
spec:
  replicas: 0
  selector:
    matchLabels:
      app: inflate
  template:
    metadata:
      labels:
        app: inflate
    spec:
      terminationGracePeriodSeconds: 0
      containers:
        - name: inflate
          image: public.ecr.aws/eks-distro/kubernetes/pause:3.7
          resources:
            requests:
              cpu: 1
"""
HPA_V2 = """\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 5
  maxReplicas: 12
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}
"""
HPA_V1 = """\
apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 4
  targetCPUUtilizationPercentage: 80
"""


def _web(kind: str = "Deployment") -> str:
    """shop/web: 3 replicas of 500m and 512Mi."""
    return deployment("web", 3, namespace="shop", kind=kind, cpu="500m", memory="512Mi")


def _write(tmp_path: Path, *texts: str) -> str:
    path = tmp_path / "m.yaml"
    path.write_text("---\n".join(texts))
    return str(path)


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["plan", *args, "--engine", "karpenter", "--zones", "us-east-1a"])
    return result.exit_code, result.stdout, result.stderr


def _plan(*args: str) -> dict[str, Any]:
    code, out, err = _run(*args, "-o", "json")
    assert code == 0, err
    document: dict[str, Any] = json.loads(out)
    return document


def _names(plan: dict[str, Any]) -> list[str]:
    return sorted(f"{p['namespace']}/{p['name']}" for p in plan["pods"])


def test_every_workload_at_zero_replicas_is_said_with_the_option(tmp_path: Path) -> None:
    path = _write(tmp_path, POOL, INFLATE)
    plan = _plan(path)
    assert plan["summary"]["pods"] == 0
    zero = [w for w in plan["warnings"] if "0 replicas" in w]
    assert zero == [f"{path}:16: every workload in the input has 0 replicas (workloads: default/Deployment/inflate), "
                    "so there is no pod to plan; to plan some, give a count, e.g. --replicas default/inflate=3"]
    scaled = _plan(path, "--scale", "10")
    assert any(w.endswith("--replicas default/inflate=3 (--scale multiplies, and 0 stays 0)")
               for w in scaled["warnings"])


def test_replicas_flag_plans_that_many(tmp_path: Path) -> None:
    plan = _plan(_write(tmp_path, POOL, INFLATE, _web()), "--replicas", "default/inflate=4",
                 "--replicas", "shop/web=1")
    assert _names(plan) == ["default/inflate-0", "default/inflate-1", "default/inflate-2", "default/inflate-3",
                            "shop/web-0"]
    assert plan["summary"]["scheduled"] == 5
    assert not any("0 replicas" in w for w in plan["warnings"])


def test_scale_multiplies_and_rounds_up_but_not_an_explicit_count(tmp_path: Path) -> None:
    path = _write(tmp_path, POOL, INFLATE, _web())
    assert len(_plan(path, "--scale", "2.5")["pods"]) == 8  # web 3 x 2.5 = 7.5 -> 8; inflate 0 stays 0
    plan = _plan(path, "--scale", "2", "--replicas", "default/inflate=1")
    assert _names(plan).count("default/inflate-0") == 1 and len(plan["pods"]) == 7


def test_a_replicas_name_that_matches_nothing_is_bad_input(tmp_path: Path) -> None:
    code, out, err = _run(_write(tmp_path, POOL, INFLATE), "--replicas", "prod/cache=3")
    assert code == 2 and out == ""
    assert err.strip() == ("--replicas: 'prod/cache=3' matches no workload in the input "
                           "(workloads: default/Deployment/inflate)")


def test_a_name_in_another_namespace_is_suggested_with_its_namespace(tmp_path: Path) -> None:
    """A bare name means namespace default (as kubectl's); the workload of that name elsewhere is suggested."""
    path = _write(tmp_path, POOL, INFLATE, deployment("web", 3, namespace="shop", cpu="500m", memory="512Mi"))
    code, out, err = _run(path, "--replicas", "web=3")
    assert code == 2 and out == ""
    assert err.strip() == ("--replicas: 'web=3' matches no workload in namespace default; did you mean "
                           "--replicas shop/web=3?")
    code, _, err = _run(path, "--replicas", "prod/deploy/inflate=2")
    assert code == 2
    assert err.strip().endswith("did you mean --replicas default/Deployment/inflate=2?")
    path = _write(tmp_path, POOL, deployment("web", 3, namespace="shop", cpu="500m", memory="512Mi"), deployment("web", 3, namespace="shop", kind="StatefulSet", cpu="500m", memory="512Mi"))
    code, _, err = _run(path, "--replicas", "web=3")
    assert code == 2
    assert err.strip().endswith("did you mean --replicas shop/Deployment/web=3 or --replicas shop/StatefulSet/web=3?")


def test_a_shared_name_needs_its_kind(tmp_path: Path) -> None:
    path = _write(tmp_path, POOL, _web(), _web("StatefulSet"))
    code, out, err = _run(path, "--replicas", "shop/web=2")
    assert code == 2 and out == ""
    assert "matches Deployment/web and StatefulSet/web; say which, e.g. shop/Deployment/web=2" in err
    plan = _plan(path, "--replicas", "shop/statefulset/web=1")
    assert [p["workload"] for p in plan["pods"]].count("StatefulSet/web") == 1
    assert [p["workload"] for p in plan["pods"]].count("Deployment/web") == 3


def test_malformed_replicas_and_scale_are_bad_input(tmp_path: Path) -> None:
    path = _write(tmp_path, POOL, INFLATE)
    for args, start in ((("--replicas", "inflate"), "--replicas: 'inflate': expected NAMESPACE/NAME=N"),
                        (("--replicas", "default/inflate=-1"), "--replicas: 'default/inflate=-1': the replica count"),
                        (("--scale", "0"), "--scale: 0.0: the factor must be a number greater than 0")):
        code, out, err = _run(path, *args)
        assert code == 2 and out == "" and err.startswith(start), err


def test_hpa_picks_the_replica_count(tmp_path: Path) -> None:
    path = _write(tmp_path, POOL, _web(), HPA_V2)
    current = _plan(path)
    assert len(current["pods"]) == 5  # replicas 3 kept within 5..12
    assert any("Deployment/web is planned with 5 replicas, not 3: HorizontalPodAutoscaler web" in w
               for w in current["warnings"])
    assert len(_plan(path, "--hpa", "min")["pods"]) == 5
    assert len(_plan(path, "--hpa", "max")["pods"]) == 12
    assert len(_plan(path, "--hpa", "max", "--scale", "0.5")["pods"]) == 6


def test_autoscaling_v1_hpa_and_one_without_its_workload(tmp_path: Path) -> None:
    path = _write(tmp_path, POOL, _web(), HPA_V1,
                  HPA_V1.replace("name: web, namespace: shop", "name: api, namespace: shop")
                  .replace("kind: Deployment, name: web", "kind: Deployment, name: api"))
    plan = _plan(path)
    assert len(plan["pods"]) == 3  # 3 is within 2..4
    assert len(_plan(path, "--hpa", "max")["pods"]) == 4
    assert any("HorizontalPodAutoscaler shop/api scales Deployment/api, which is not in the input" in w
               for w in plan["warnings"])


def test_a_second_hpa_of_one_workload_is_not_said_to_scale_a_missing_one(tmp_path: Path) -> None:
    # kubernetes/examples AI/vllm-deployment/hpa: gpu-horizontal-pod-autoscaler.yaml and horizontal-pod-autoscaler.yaml
    # both scale Deployment vllm-gemma-deployment (alternatives); the second was said to scale a workload "not in
    # the input". Two HPAs of one target: the HPA controller scales neither (kubernetes#112011, AmbiguousSelector).
    path = _write(tmp_path, POOL, _web(), HPA_V2, HPA_V1.replace("name: web, namespace: shop", "name: web-v1, namespace: shop"))
    plan = _plan(path)
    assert len(plan["pods"]) == 5  # the first HPA's bounds, as before
    assert not any("not in the input" in w for w in plan["warnings"]), plan["warnings"]
    said = [w for w in plan["warnings"] if "HorizontalPodAutoscaler shop/web-v1 scales Deployment/web, as" in w]
    assert len(said) == 1 and "AmbiguousSelector" in said[0] and "keep one of them" in said[0]


def test_replicas_on_a_workload_its_hpa_scales_wins_and_says_when_outside_the_bounds(tmp_path: Path) -> None:
    # A new user's `--replicas shop/storefront-web=N` on a Deployment with an HPA was told the HPA "scales
    # Deployment/storefront-web, which is not in the input", for every N; and N below minReplicas went unsaid.
    path = _write(tmp_path, POOL, _web(), HPA_V2)
    inside = _plan(path, "--replicas", "shop/web=8")
    assert len(inside["pods"]) == 8
    assert not any("HorizontalPodAutoscaler" in w for w in inside["warnings"]), inside["warnings"]
    below = _plan(path, "--replicas", "shop/web=2")
    assert len(below["pods"]) == 2  # the flag wins
    said = [w for w in below["warnings"] if "HorizontalPodAutoscaler" in w]
    assert len(said) == 1, below["warnings"]
    assert "Deployment/web is planned with 2 replicas (--replicas), outside 5..12" in said[0]
    assert "not in the input" not in said[0]


SCALED_OBJECT = """\
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {name: web}
  minReplicaCount: 5
  maxReplicaCount: 9
  triggers:
    - type: prometheus
      metadata: {serverAddress: "http://prometheus:9090", query: "sum(rate(http_requests_total[1m]))", threshold: "100"}
"""


def test_a_keda_scaled_object_scales_its_target_as_the_hpa_it_makes(tmp_path: Path) -> None:
    # A game studio's ScaledObject (minReplicaCount 18 over replicas 12) was "kind not read": 12 pods were planned
    # where KEDA's HPA keeps 18. scaleTargetRef.kind defaults to Deployment.
    path = _write(tmp_path, POOL, _web(), SCALED_OBJECT)
    plan = _plan(path)
    assert len(plan["pods"]) == 5  # replicas 3 kept within 5..9
    assert any("Deployment/web is planned with 5 replicas, not 3: ScaledObject web scales it" in w
               for w in plan["warnings"]), plan["warnings"]
    assert len(_plan(path, "--hpa", "max")["pods"]) == 9
    defaults = SCALED_OBJECT.replace("  minReplicaCount: 5\n  maxReplicaCount: 9\n", "")
    assert len(_plan(_write(tmp_path, POOL, _web(), defaults), "--hpa", "min")["pods"]) == 0  # KEDA's min is 0
