"""`plan` reads its input once: Karpenter's steady state takes the Node annotations, the NodePools'
`spec.disruption` and the PodDisruptionBudgets from the plan's own reading (`Inventory.disruption_documents`),
and `-o html`'s lint takes the documents the plan read. So every file is read once per run, and input on stdin
(which cannot be read twice) gets both the steady state and the lint findings.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from karpplan.cli.main import app
from karpplan.inputs import loader

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
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [m5, c5]}
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 30s
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
"""

# A large node of the pool running one small pod: consolidation removes it (its pod fits beside the plan's
# new pods), unless the node says karpenter.sh/do-not-disrupt.
NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: ip-10-0-1-9.ec2.internal
  annotations: {{{annotations}}}
  labels:
    kubernetes.io/hostname: ip-10-0-1-9.ec2.internal
    karpenter.sh/nodepool: default
    karpenter.sh/capacity-type: on-demand
    node.kubernetes.io/instance-type: m5.2xlarge
    topology.kubernetes.io/zone: us-east-1a
status:
  allocatable: {{cpu: 7910m, memory: 30Gi, pods: "58"}}
---
apiVersion: v1
kind: Pod
metadata:
  name: cache-7d9f-abc
  namespace: default
  labels: {{app: cache}}
  ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: cache-7d9f, uid: x, controller: true}}]
spec:
  nodeName: ip-10-0-1-9.ec2.internal
  containers: [{{name: c, image: redis, resources: {{requests: {{cpu: 200m, memory: 256Mi}}}}}}]
"""

APPS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx, resources: {requests: {cpu: 1500m, memory: 2Gi}}}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: default}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: web}}
"""

COMMON = ("--engine", "karpenter", "--zones", "us-east-1a,us-east-1b")


def files(tmp_path: Path, annotations: str = "") -> Path:
    (tmp_path / "pool.yaml").write_text(POOL)
    (tmp_path / "node.yaml").write_text(NODE.format(annotations=annotations))
    (tmp_path / "apps.yaml").write_text(APPS)
    return tmp_path


def stdin_text(annotations: str = "") -> str:
    return "---\n".join((POOL, NODE.format(annotations=annotations), APPS))


@pytest.fixture()
def reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every file the loader reads, counted by name."""
    counted: Counter[str] = Counter()
    real = loader._read_file

    def counting(path: Path, label: str, max_bytes: int) -> str:
        counted[label] += 1
        return real(path, label, max_bytes)

    monkeypatch.setattr(loader, "_read_file", counting)
    return counted


def plan(*args: str, stdin: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["plan", *args, *COMMON], input=stdin)
    return result.exit_code, result.stdout


def karpenter_summary(stdout: str) -> dict[str, object]:
    summary: dict[str, object] = json.loads(stdout)["summary"]["karpenter"]
    return summary


@pytest.mark.parametrize("output", ["json", "html"])
def test_each_input_file_is_read_once_per_plan(tmp_path: Path, reads: Counter[str], output: str) -> None:
    path = files(tmp_path)
    code, stdout = plan(str(path), "-o", output)
    assert code == 0, stdout
    assert reads == Counter({str(path / name): 1 for name in ("apps.yaml", "node.yaml", "pool.yaml")})


def test_the_steady_state_of_stdin_is_computed_from_the_one_reading(reads: Counter[str]) -> None:
    code, stdout = plan("-", "-o", "json", stdin=stdin_text())
    assert code == 0 and not reads
    karpenter = karpenter_summary(stdout)
    assert isinstance(karpenter["steadyStateHourlyCost"], float)
    assert karpenter["steadyStateHourlyCost"] < karpenter["hourlyCost"]  # type: ignore[operator]
    assert "ip-10-0-1-9.ec2.internal" in str(karpenter["steadyStateNote"])  # the under-used node goes


def test_stdin_and_files_give_the_same_steady_state_and_the_node_annotation_is_read(tmp_path: Path) -> None:
    """karpenter.sh/do-not-disrupt on the Node keeps it: the annotation comes with the one reading, stdin too."""
    annotated = 'karpenter.sh/do-not-disrupt: "true"'
    from_stdin = karpenter_summary(plan("-", "-o", "json", stdin=stdin_text(annotated))[1])
    from_files = karpenter_summary(plan(str(files(tmp_path, annotated)), "-o", "json")[1])
    assert from_stdin == from_files
    assert from_stdin["steadyStateHourlyCost"] is not None
    assert "ip-10-0-1-9.ec2.internal" not in str(from_stdin["steadyStateNote"])


def test_the_html_report_of_stdin_has_lint_findings_at_stdin_lines(reads: Counter[str]) -> None:
    code, stdout = plan("-", "-o", "html", stdin=stdin_text())
    assert code == 0 and not reads
    assert "Lint was not run" not in stdout
    assert "replicas-without-spread" in stdout and "&lt;stdin&gt;:" in stdout
