"""KPL206: a pod (anti-)affinity term written for the workload's own pods that selects none of them (the
kubernetes/website ZooKeeper tutorial: `app In [zk]` on pods labelled `app.kubernetes.io/name: zk`)."""

from __future__ import annotations

from pathlib import Path

from karpplan.lint.run import LintOptions, lint

STATEFULSET = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: zk}}
spec:
  replicas: 3
  selector: {{matchLabels: {{app.kubernetes.io/name: zk}}}}
  template:
    metadata:
      labels: {{app.kubernetes.io/name: zk}}
    spec:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            - labelSelector:
                matchExpressions:
                  - {{key: "{key}", operator: In, values: [{value}]}}
              topologyKey: kubernetes.io/hostname
      containers: [{{name: c, image: zk, resources: {{requests: {{cpu: 500m, memory: 1Gi}}}}}}]
"""
OTHER = """\
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: cache}
spec:
  replicas: 1
  selector: {matchLabels: {app: zk}}
  template:
    metadata: {labels: {app: zk}}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: 100m, memory: 100Mi}}}]
"""


def _codes(tmp_path: Path, text: str) -> list[tuple[str, int, str]]:
    path = tmp_path / "zk.yaml"
    path.write_text(text)
    report = lint(LintOptions(paths=(str(path),)))
    return [(f.code, f.line, f.message) for f in report.findings if f.code == "KPL206"]


def test_the_tutorials_anti_affinity_on_a_renamed_label_is_flagged_at_its_selector(tmp_path: Path) -> None:
    hits = _codes(tmp_path, STATEFULSET.format(key="app", value="zk"))
    assert [(code, line) for code, line, _ in hits] == [("KPL206", 14)]
    assert "app.kubernetes.io/name=zk" in hits[0][2]


def test_a_selector_that_matches_the_own_pods_is_not_flagged(tmp_path: Path) -> None:
    assert _codes(tmp_path, STATEFULSET.format(key="app.kubernetes.io/name", value="zk")) == []


def test_an_affinity_to_other_pods_in_the_input_is_not_flagged(tmp_path: Path) -> None:
    assert _codes(tmp_path, STATEFULSET.format(key="app", value="zk") + OTHER) == []


def test_a_selector_of_values_foreign_to_the_workload_is_not_flagged(tmp_path: Path) -> None:
    # Anti-affinity to another team's pods, not pasted: nothing says it was meant for these pods.
    assert _codes(tmp_path, STATEFULSET.format(key="app", value="kafka")) == []
