"""`plan` on real manifests, session 18: what a platform engineer who pasted them would have read wrong.

Each test names its source (fixtures/real/, each with its URL)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from karpplan.cli.main import app

from conftest import FIXTURES

REAL = FIXTURES / "real"
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
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 5
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: api, image: x, resources: {requests: {cpu: 500m, memory: 1Gi}}}]
"""


def _plan(*paths: str, code: int = 0) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["plan", *paths, "--engine", "karpenter", "-o", "json"])
    assert result.exit_code == code, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


# https://github.com/aws/containers-roadmap/issues/1706: a managed node group's Node, pasted alone
def test_nodes_pasted_without_their_pods_are_said_to_be_planned_as_empty(tmp_path: Path) -> None:
    apps = tmp_path / "apps.yaml"
    apps.write_text(POOL)
    plan = _plan(str(REAL / "eks-managed-node-group-node.yaml"), str(apps))
    existing = [n for n in plan["nodes"] if not n["new"]]
    assert [n["name"] for n in existing] == ["ip-192-168-22-69.ec2.internal"]
    assert len(existing[0]["pods"]) == 3  # 3 x 1Gi of its 3388360Ki; the rest on a new node
    notes = [w for w in plan["warnings"] if "read without the pods running on them" in w]
    assert len(notes) == 1 and "ip-192-168-22-69.ec2.internal" in notes[0]
    assert "kubectl get pods -A -o yaml" in notes[0]
    # with the node's own pods in the input there is nothing to say
    bound = tmp_path / "coredns.yaml"
    bound.write_text("""\
apiVersion: v1
kind: Pod
metadata: {name: coredns-5948f55769-2xk8z, namespace: kube-system}
spec:
  nodeName: ip-192-168-22-69.ec2.internal
  containers: [{name: coredns, image: coredns, resources: {requests: {cpu: 100m, memory: 70Mi}}}]
status: {phase: Running}
""")
    with_pods = _plan(str(REAL / "eks-managed-node-group-node.yaml"), str(apps), str(bound))
    assert not [w for w in with_pods["warnings"] if "read without the pods" in w]


# https://github.com/grafana/mimir/blob/main/operations/helm/tests/test-oss-multizone-values-generated/mimir-distributed/templates/ingester/ingester-statefulset.yaml
def test_a_required_pod_affinity_no_pod_matches_is_said_first(tmp_path: Path) -> None:
    pool = tmp_path / "pool.yaml"
    pool.write_text(POOL.split("---")[0])
    plan = _plan(str(REAL / "mimir-multizone-ingester.yaml"), str(pool), code=1)
    assert plan["summary"]["unschedulable"] == 7
    reasons = plan["unschedulable"][0]["reasons"]
    assert reasons[0].startswith("its required podAffinity term 0 (topologyKey topology.kubernetes.io/zone, "
                                 "selector security In [S1]) matches no pod in the input, not even itself")
    # with a pod labelled security=S1 in the namespace, the term has a zone to join: the ingesters are placed
    peer = tmp_path / "peer.yaml"
    peer.write_text("""\
apiVersion: apps/v1
kind: Deployment
metadata: {name: gateway, namespace: citestns}
spec:
  replicas: 1
  selector: {matchLabels: {security: S1}}
  template:
    metadata: {labels: {security: S1}}
    spec:
      containers: [{name: gw, image: x, resources: {requests: {cpu: 100m, memory: 128Mi}}}]
""")
    joined = _plan(str(REAL / "mimir-multizone-ingester.yaml"), str(pool), str(peer))
    assert joined["summary"]["unschedulable"] == 0


# https://github.com/linkerd/linkerd2/blob/main/cli/cmd/testdata/install_ha_output.golden (linkerd-identity, HA)
LINKERD_IDENTITY = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: linkerd-identity, namespace: linkerd}
spec:
  replicas: 3
  selector: {matchLabels: {linkerd.io/control-plane-component: identity}}
  template:
    metadata: {labels: {linkerd.io/control-plane-component: identity}}
    spec:
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - podAffinityTerm:
              labelSelector:
                matchExpressions:
                - {key: linkerd.io/control-plane-component, operator: In, values: [identity]}
              topologyKey: topology.kubernetes.io/zone
            weight: 100
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector:
              matchExpressions:
              - {key: linkerd.io/control-plane-component, operator: In, values: [identity]}
            topologyKey: kubernetes.io/hostname
      containers:
      - name: identity
        image: cr.l5d.io/linkerd/controller
        resources: {requests: {cpu: 100m, memory: 50Mi}}
"""
ZONE_SPREAD = """\
      topologySpreadConstraints:
      - maxSkew: 1
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: ScheduleAnyway
        labelSelector: {matchLabels: {linkerd.io/control-plane-component: identity}}
      containers:
"""


def test_why_karpenter_leaves_a_preferred_zone_anti_affinity_unmet_and_what_spreads_them(tmp_path: Path) -> None:
    pool = tmp_path / "pool.yaml"
    pool.write_text(POOL.split("---")[0])
    identity = tmp_path / "identity.yaml"
    identity.write_text(LINKERD_IDENTITY)
    args = (str(identity), str(pool), "--zones", "us-east-1a,us-east-1b,us-east-1c")
    plan = _plan(*args)
    assert len({n["zone"] for n in plan["nodes"]}) == 1  # one batch: Karpenter relaxes it for the 2nd and 3rd
    unmet = [w for w in plan["warnings"] if "preferred pod anti-affinity" in w]
    assert len(unmet) == 1
    assert "in one provisioning batch the replicas after the first relax this preference" in unmet[0]
    assert "a topologySpreadConstraint on topology.kubernetes.io/zone" in unmet[0]
    # the advice, taken: one pod per zone, nothing unmet
    identity.write_text(LINKERD_IDENTITY.replace("      containers:\n", ZONE_SPREAD))
    spread = _plan(*args)
    assert sorted(n["zone"] for n in spread["nodes"]) == ["us-east-1a", "us-east-1b", "us-east-1c"]
    assert not [w for w in spread["warnings"] if "preferred pod anti-affinity" in w]
