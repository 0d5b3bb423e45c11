"""no-pool-can-launch when a DaemonSet holds the pod's host port on every node: the finding sits at the port the
pod asks for and its fix names the DaemonSet, where it is written, the port and what to change (session 18)."""

from __future__ import annotations

import io

from karpplan.lint.report import LintReport
from karpplan.lint.rules.examples import NODEPOOL
from karpplan.lint.run import LintOptions, lint

# kubernetes/kubernetes cluster/addons/dns/nodelocaldns/nodelocaldns.yaml (abridged): hostNetwork, so its
# containerPorts (53/UDP, 53/TCP, 9253/TCP) are held on every node.
NODE_LOCAL_DNS = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: node-local-dns
  namespace: kube-system
spec:
  selector:
    matchLabels: {k8s-app: node-local-dns}
  template:
    metadata:
      labels: {k8s-app: node-local-dns}
    spec:
      priorityClassName: system-node-critical
      hostNetwork: true
      dnsPolicy: Default
      tolerations:
      - key: "CriticalAddonsOnly"
        operator: "Exists"
      - effect: "NoExecute"
        operator: "Exists"
      - effect: "NoSchedule"
        operator: "Exists"
      containers:
      - name: node-cache
        image: registry.k8s.io/dns/k8s-dns-node-cache:1.22.20
        resources:
          requests:
            cpu: 25m
            memory: 5Mi
        ports:
        - containerPort: 53
          name: dns
          protocol: UDP
        - containerPort: 53
          name: dns-tcp
          protocol: TCP
        - containerPort: 9253
          name: metrics
          protocol: TCP
---
"""


def exporter(ports: str, host_network: bool = False) -> str:
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: exporter
spec:
  replicas: 2
  selector:
    matchLabels: {{app: exporter}}
  template:
    metadata:
      labels: {{app: exporter}}
    spec:
{'      hostNetwork: true' + chr(10) if host_network else ''}      topologySpreadConstraints:
      - maxSkew: 1
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: ScheduleAnyway
        labelSelector: {{matchLabels: {{app: exporter}}}}
      containers:
      - name: exporter
        image: exporter
        ports:
{ports}        resources:
          requests: {{cpu: 100m, memory: 64Mi}}
"""


def lint_text(text: str) -> LintReport:
    return lint(LintOptions(paths=("-",), stdin=io.StringIO(text)))


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_host_port_a_daemonset_holds_is_reported_at_the_port_with_the_daemonset_named() -> None:
    text = NODEPOOL + NODE_LOCAL_DNS + exporter("        - containerPort: 9253\n          hostPort: 9253\n")
    errors = [f for f in lint_text(text).findings if f.rule == "no-pool-can-launch"]
    assert len(errors) == 1
    finding = errors[0]
    assert finding.line == line_of(text, "hostPort: 9253")
    assert finding.field.endswith("containers[0].ports[0].hostPort")
    ds_line = line_of(text, "kind: DaemonSet") - 1  # the document starts at its apiVersion
    assert f"DaemonSet kube-system/node-local-dns (<stdin>:{ds_line})" in finding.fix
    assert "9253/TCP" in finding.fix and "give container exporter another hostPort" in finding.fix
    assert "loosen the pod's nodeSelector" not in finding.fix  # the generic advice does not apply


def test_the_fix_works_another_host_port_launches() -> None:
    text = NODEPOOL + NODE_LOCAL_DNS + exporter("        - containerPort: 9253\n          hostPort: 9254\n")
    assert [f for f in lint_text(text).findings if f.rule == "no-pool-can-launch"] == []


def test_under_host_network_the_container_port_is_the_host_port_and_the_fix_says_so() -> None:
    text = NODEPOOL + NODE_LOCAL_DNS + exporter("        - containerPort: 9253\n", host_network=True)
    errors = [f for f in lint_text(text).findings if f.rule == "no-pool-can-launch"]
    assert len(errors) == 1
    exporter_host_network = [i for i, line in enumerate(text.splitlines(), 1) if "hostNetwork: true" in line][-1]
    assert errors[0].line == exporter_host_network
    assert errors[0].field == "spec.template.spec.hostNetwork"
    assert "drop hostNetwork or use another port" in errors[0].fix
    assert "DaemonSet kube-system/node-local-dns" in errors[0].fix
    fixed = NODEPOOL + NODE_LOCAL_DNS + exporter("        - containerPort: 9254\n", host_network=True)
    assert [f for f in lint_text(fixed).findings if f.rule == "no-pool-can-launch"] == []
