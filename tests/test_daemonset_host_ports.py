"""A DaemonSet's host port is held on every node it runs on, the nodes Karpenter launches included.

kubernetes-sigs/karpenter#2083 (Karpenter scaled out without end for a pod whose hostPort a DaemonSet held) and its
fix #2102 (v1.4: a new NodeClaim starts with the host ports of the DaemonSets compatible with its NodePool; v1.14,
#2975: per group of instance types). The pod is unschedulable, and the plan says which DaemonSet holds which port.
"""

from __future__ import annotations

import json
from typing import Any

from typer.testing import CliRunner

from karpplan.cli.main import app

POOL = """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: NAME}
spec:
  weight: WEIGHT
  template:
    metadata: {labels: {role: NAME}}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [m5]}
---
"""

# The DaemonSet and the Deployment of kubernetes-sigs/karpenter#2083, as the issue pastes them.
DAEMONSET = """
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: daemon-test, namespace: kube-system}
spec:
  selector: {matchLabels: {name: daemon-test}}
  template:
    metadata: {labels: {name: daemon-test}}
    spec:
      SELECTOR
      priorityClassName: system-node-critical
      containers:
      - name: daemon-test
        image: nginx
        ports:
        - {name: web, containerPort: 80, hostPort: 8080, protocol: TCP}
        resources:
          limits: {memory: 200Mi}
          requests: {cpu: 100m, memory: 200Mi}
---
"""

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: nginx-deployment}
spec:
  replicas: 2
  selector: {matchLabels: {app: nginx}}
  template:
    metadata: {labels: {app: nginx}}
    spec:
      containers:
      - name: nginx
        image: nginx
        ports:
        - {containerPort: 80, hostPort: 8080}
        resources: {requests: {cpu: 500m, memory: 512Mi}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: other}
spec:
  replicas: 2
  selector: {matchLabels: {app: other}}
  template:
    metadata: {labels: {app: other}}
    spec:
      containers:
      - name: o
        image: nginx
        resources: {requests: {cpu: 500m, memory: 512Mi}}
"""


def pool(name: str, weight: int = 10) -> str:
    return POOL.replace("NAME", name).replace("WEIGHT", str(weight))


def plan(manifests: str, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["plan", "-", "--time-limit", "10", "--zones", "us-east-1a", "-o", "json",
                                      *args], input=manifests)
    document: dict[str, Any] = json.loads(result.stdout)
    assert result.exit_code == (1 if document["unschedulable"] else 0), result.stderr  # cli-contract.md
    return document


def test_pod_asking_for_a_daemonsets_host_port_is_unschedulable_and_the_reason_names_both() -> None:
    document = plan(pool("default") + DAEMONSET.replace("SELECTOR", "") + DEPLOYMENT)
    unschedulable = {u["pod"]: u["reasons"] for u in document["unschedulable"]}
    assert set(unschedulable) == {"default/nginx-deployment-0", "default/nginx-deployment-1"}
    reasons = "\n".join(unschedulable["default/nginx-deployment-0"])
    assert 'nodepool "default": checking host port usage: host port 8080/TCP is held by DaemonSet ' \
           "kube-system/daemon-test on every node of this NodePool" in reasons
    assert "give the pod another host port" in reasons
    # Nothing is launched for them: no node runs the nginx pods, and Karpenter's own plan (v1.4+) agrees.
    placed = {p for node in document["nodes"] for p in node["pods"]}
    assert placed == {"default/other-0", "default/other-1"}
    assert document["summary"]["karpenter"]["scheduled"] == 2


def test_pod_goes_to_the_pool_the_daemonset_keeps_off() -> None:
    """The DaemonSet runs only on the heavier `edge` pool's nodes: the pod asking for its port goes to `general`,
    in the optimal plan and in Karpenter's, and nobody calls it unschedulable."""
    daemonset = DAEMONSET.replace("SELECTOR", "nodeSelector: {role: edge}")
    document = plan(pool("edge", 50) + pool("general", 10) + daemonset + DEPLOYMENT)
    assert document["unschedulable"] == []
    pools = {p: node["nodePool"] for node in document["nodes"] for p in node["pods"]}
    assert pools["default/nginx-deployment-0"] == pools["default/nginx-deployment-1"] == "general"
    assert document["summary"]["karpenter"]["scheduled"] == 4


EXISTING = """
apiVersion: v1
kind: Node
metadata:
  name: ip-10-0-1-10.ec2.internal
  labels: {topology.kubernetes.io/zone: us-east-1a, kubernetes.io/hostname: ip-10-0-1-10.ec2.internal,
           node.kubernetes.io/instance-type: m5.xlarge, kubernetes.io/os: linux, kubernetes.io/arch: amd64}
status:
  allocatable: {cpu: 3920m, memory: 14Gi, pods: "58"}
  capacity: {cpu: "4", memory: 16Gi, pods: "58"}
---
"""


def test_existing_node_refuses_the_port_its_daemonset_pod_will_hold() -> None:
    """The node carries no DaemonSet pod yet (a manifest, not a dump): the DaemonSet still runs there, so its port
    is taken, and the reason says by whom beside kube-scheduler's count."""
    document = plan(EXISTING + DAEMONSET.replace("SELECTOR", "") + DEPLOYMENT)
    assert len(document["unschedulable"]) == 2
    reasons = document["unschedulable"][0]["reasons"]
    assert reasons[0] == "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports."
    assert reasons[1].startswith("host port 8080/TCP is held by DaemonSet kube-system/daemon-test on 1 of these nodes")
    placed = {p for node in document["nodes"] for p in node["pods"]}
    assert placed == {"default/other-0", "default/other-1"}


HOST_NETWORK_DAEMONSET = """
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: node-exporter, namespace: monitoring}
spec:
  selector: {matchLabels: {app: node-exporter}}
  template:
    metadata: {labels: {app: node-exporter}}
    spec:
      hostNetwork: true
      containers:
      - name: node-exporter
        image: quay.io/prometheus/node-exporter
        ports: [{name: metrics, containerPort: 9100}]
        resources: {requests: {cpu: 50m, memory: 64Mi}}
---
"""

HOST_NETWORK_DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: exporter-probe}
spec:
  replicas: 1
  selector: {matchLabels: {app: probe}}
  template:
    metadata: {labels: {app: probe}}
    spec:
      hostNetwork: true
      containers:
      - name: probe
        image: probe
        ports: [{containerPort: PORT, protocol: PROTOCOL}]
        resources: {requests: {cpu: 100m, memory: 64Mi}}
"""


def test_host_network_daemonset_holds_its_container_ports() -> None:
    """`hostNetwork: true` makes every containerPort a host port, the DaemonSet's and the pod's alike; another port,
    or the same number over UDP, does not clash."""
    clash = plan(pool("default") + HOST_NETWORK_DAEMONSET
                 + HOST_NETWORK_DEPLOYMENT.replace("PORT", "9100").replace("PROTOCOL", "TCP"))
    (pod,) = clash["unschedulable"]
    assert "host port 9100/TCP is held by DaemonSet monitoring/node-exporter" in "\n".join(pod["reasons"])
    for port, protocol in (("9101", "TCP"), ("9100", "UDP")):
        fine = plan(pool("default") + HOST_NETWORK_DAEMONSET
                    + HOST_NETWORK_DEPLOYMENT.replace("PORT", port).replace("PROTOCOL", protocol))
        assert fine["unschedulable"] == [], (port, protocol)


# Two releases of prometheus-node-exporter (hostNetwork, port 9100) on one cluster, as in
# https://github.com/prometheus-community/helm-charts/issues/2983 and https://github.com/timescale/tobs/issues/43
# (the DaemonSet as rendered by chart prometheus-node-exporter-4.24.0, aws/karpenter-provider-aws#5406).
NODE_EXPORTER = """
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: RELEASE-prometheus-node-exporter, namespace: NAMESPACE}
spec:
  selector:
    matchLabels: {app.kubernetes.io/instance: RELEASE, app.kubernetes.io/name: prometheus-node-exporter}
  template:
    metadata:
      labels: {app.kubernetes.io/instance: RELEASE, app.kubernetes.io/name: prometheus-node-exporter}
    spec:
      hostNetwork: true
      hostPID: true
      containers:
      - name: node-exporter
        image: quay.io/prometheus/node-exporter:v1.7.0
        args: ["--web.listen-address=[$(HOST_IP)]:9100"]
        env: [{name: HOST_IP, value: 0.0.0.0}]
        ports: [{containerPort: 9100, name: http-metrics, protocol: TCP}]
        resources: {requests: {cpu: 10m, memory: 32Mi}}
      tolerations: [{effect: NoSchedule, operator: Exists}]
---
"""


def test_two_daemonsets_on_one_host_port_are_warned_about() -> None:
    """Only one of them runs on each node (the other's pod stays Pending, "didn't have free ports"): the plan says
    which two, the port, on how many of its nodes, and where each is defined; both stay in the overhead, as
    Karpenter counts them."""
    manifests = (pool("default") + NODE_EXPORTER.replace("RELEASE", "prometheus").replace("NAMESPACE", "cluster-monitoring")
                 + NODE_EXPORTER.replace("RELEASE", "kube-prometheus-stack").replace("NAMESPACE", "monitoring")
                 + DEPLOYMENT.split("---")[1])
    document = plan(manifests)
    nodes = len(document["nodes"])
    (warning,) = [w for w in document["warnings"] if w.startswith("DaemonSets ")]
    assert warning.startswith(
        "DaemonSets cluster-monitoring/prometheus-prometheus-node-exporter (<stdin>:") and (
        "and monitoring/kube-prometheus-stack-prometheus-node-exporter (<stdin>:") in warning
    assert f"both claim host port 9100/TCP on {nodes} node{'s' if nodes > 1 else ''} of this plan" in warning
    assert all(n["daemonSetRequests"]["cpu"] == "20m" for n in document["nodes"])
    single = plan(pool("default") + NODE_EXPORTER.replace("RELEASE", "prometheus").replace("NAMESPACE", "monitoring")
                  + DEPLOYMENT.split("---")[1])
    assert not [w for w in single["warnings"] if w.startswith("DaemonSets ")]
