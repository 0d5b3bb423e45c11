#!/usr/bin/env python3
"""Benchmark `karpplan lint`: Deployments spread over files with 20 NodePools (issue 13).

    python bench/lint_bench.py            # 100, 1,000 (the 100-file target), 10,000 objects
Prints one Markdown table row per size; bench/results.md holds the recorded figures.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from karpplan.lint.run import LintOptions, lint

POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: pool-{i}}}
spec:
  limits: {{cpu: "1000"}}
  template:
    metadata: {{labels: {{team: t{i}}}}}
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
      requirements:
        - {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}
        - {{key: karpenter.k8s.aws/instance-category, operator: In, values: [{cat}]}}
---
"""
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: app-{i}, namespace: ns-{ns}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: app-{i}}}}}
  template:
    metadata: {{labels: {{app: app-{i}}}}}
    spec:
      nodeSelector: {{team: t{team}}}
      topologySpreadConstraints:
        - {{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
            labelSelector: {{matchLabels: {{app: app-{i}}}}}}}
      containers:
        - name: app
          image: nginx
          resources: {{requests: {{cpu: {cpu}m, memory: {mem}Mi}}}}
---
"""


def write(root: Path, objects: int, files: int) -> None:
    cats = ["c", "m", "r", "c, m", "m, r"]
    (root / "pools.yaml").write_text("".join(POOL.format(i=i, cat=cats[i % 5]) for i in range(20)))
    per_file = max(objects // files, 1)
    for f in range(files):
        body = "".join(
            DEPLOYMENT.format(i=i, ns=i % 7, replicas=1 + i % 3, team=i % 20, cpu=250 + 50 * (i % 5),
                              mem=256 + 128 * (i % 4))
            for i in range(f * per_file, (f + 1) * per_file)
        )
        (root / f"apps-{f:03d}.yaml").write_text(body)


def measure(objects: int, files: int) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write(root, objects, files)
        start = time.perf_counter()
        report = lint(LintOptions(paths=(str(root),)))
        return time.perf_counter() - start, len(report.findings)


def main() -> None:
    sizes = [(100, 10), (1_000, 100), (10_000, 100)] if len(sys.argv) < 2 else [(int(sys.argv[1]), 100)]
    print("| Deployments | files | NodePools | seconds | findings |")
    print("|---:|---:|---:|---:|---:|")
    for objects, files in sizes:
        seconds, findings = measure(objects, files)
        print(f"| {objects:,} | {files} | 20 | {seconds:.2f} | {findings} |", flush=True)


if __name__ == "__main__":
    main()
