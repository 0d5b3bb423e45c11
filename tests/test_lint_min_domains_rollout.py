"""min-domains-unreachable says what the cap means when it equals the replicas (a new user's trial: ingress-nginx,
minDomains 4 over 3 zones, 3 replicas: "at most 3 pods can run" read as harmless). A Deployment's rolling update
adds maxSurge pods (25%, rounded up: 1) that the spread counts with the old ones, and with maxUnavailable 0
(25% of 3, rounded down) it removes no old pod first: the surge pod never schedules and the rollout hangs."""

from __future__ import annotations

import io

from karpplan.lint.run import LintOptions, lint

POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]
---
"""
WORKLOAD = """\
apiVersion: apps/v1
kind: KIND
metadata: {name: ingress, namespace: ingress}
spec:
  replicas: REPLICAS
STRATEGY  selector: {matchLabels: {app: ingress}}
  template:
    metadata: {labels: {app: ingress}}
    spec:
      topologySpreadConstraints:
        - maxSkew: 1
          minDomains: 4
          topologyKey: topology.kubernetes.io/zone
          whenUnsatisfiable: DoNotSchedule
          labelSelector: {matchLabels: {app: ingress}}
KEYS      containers:
        - {name: controller, image: controller:1, resources: {requests: {cpu: 100m, memory: 90Mi}}}
"""
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")


def _message(kind: str = "Deployment", replicas: int = 3, strategy: str = "", keys: str = "") -> str:
    text = (POOL + WORKLOAD.replace("KIND", kind).replace("REPLICAS", str(replicas))
            .replace("STRATEGY", strategy).replace("KEYS", keys))
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(text), zones=ZONES))
    (finding,) = [f for f in report.findings if f.rule == "min-domains-unreachable"]
    return finding.message


def test_as_many_pods_as_replicas_hangs_every_rollout_of_a_default_deployment() -> None:
    message = _message()
    assert "3 pod(s) can run, exactly the 3 replicas" in message
    assert "the surge pod a rolling update adds (maxSurge 1, maxUnavailable 0) can never schedule" in message
    assert "every rollout hangs" in message and "scale-out" in message


def test_with_max_unavailable_the_rollout_goes_on_short_of_replicas() -> None:
    message = _message(strategy="  strategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 1}}\n")
    assert "cannot schedule until old pods go (maxUnavailable 1)" in message
    assert "hangs" not in message


def test_recreate_and_statefulsets_have_no_surge_only_scale_out_stays_pending() -> None:
    for message in (_message(strategy="  strategy: {type: Recreate}\n"),
                    _message(kind="StatefulSet", strategy="  serviceName: ingress\n")):
        assert "surge" not in message
        assert message.endswith("any scale-out (HPA or more replicas) stays pending")


def test_pods_counted_per_revision_leave_the_surge_its_own_room() -> None:
    message = _message(keys="          matchLabelKeys: [pod-template-hash]\n")
    assert "surge" not in message and "scale-out" in message


def test_fewer_replicas_than_the_cap_leave_room_for_the_surge() -> None:
    message = _message(replicas=2)
    assert "surge" not in message
    assert "(1 more than the 2 replicas); any scale-out past 3" in message


def test_more_replicas_than_the_cap_say_how_many_stay_pending() -> None:
    assert _message(replicas=5).endswith("3 pod(s) can run: 2 of the 5 replicas stay pending")
