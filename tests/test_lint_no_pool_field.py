"""no-pool-can-launch points at the field that excludes every NodePool (issue 25): the nodeSelector entry or
node-affinity expression, the container request, the tolerations; resources only when they are the cause."""

from __future__ import annotations

import io

import pytest

from karpplan.lint.rules.examples import NODEPOOL, deployment
from karpplan.lint.run import LintOptions, lint

SPEC = "spec.template.spec"
TERM = f"{SPEC}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
ZONE_AFFINITY = """\
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions:
                  - {key: kubernetes.io/os, operator: In, values: [linux]}
                  - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1z]}
"""
GPU = NODEPOOL + deployment("").replace(
    "resources: {requests: {cpu: 500m, memory: 512Mi}}",
    "resources:\n            requests: {cpu: 500m, memory: 512Mi}\n            limits: {nvidia.com/gpu: 1}")
TAINTED = NODEPOOL.replace("      requirements:\n",
                           "      taints: [{key: dedicated, value: gpu, effect: NoSchedule}]\n      requirements:\n")

CASES = {
    # aws/karpenter-provider-aws examples/workloads/arm64.yaml against examples/v1/general-purpose.yaml
    # (amd64 only): the arch entry, not the requests.
    "arch": (NODEPOOL.replace("values: [c, m, r]}\n", "values: [c, m, r]}\n        - {key: kubernetes.io/arch, "
                              "operator: In, values: [amd64]}\n")
             + deployment("      nodeSelector:\n        kubernetes.io/os: linux\n        kubernetes.io/arch: arm64\n"),
             f"{SPEC}.nodeSelector[kubernetes.io/arch]", "kubernetes.io/arch: arm64"),
    "zone no offering serves": (NODEPOOL + deployment(ZONE_AFFINITY), f"{TERM}.matchExpressions[1]", "us-east-1z"),
    "instance type outside the pool": (
        NODEPOOL + deployment("      nodeSelector: {kubernetes.io/os: linux, node.kubernetes.io/instance-type: p3.2xlarge}\n"),
        f"{SPEC}.nodeSelector[node.kubernetes.io/instance-type]", "p3.2xlarge"),
    "another pool's name": (NODEPOOL + deployment("      nodeSelector: {karpenter.sh/nodepool: gpu}\n"),
                            f"{SPEC}.nodeSelector[karpenter.sh/nodepool]", "karpenter.sh/nodepool"),
    "untolerated taint": (TAINTED + deployment("      tolerations: [{key: other, operator: Exists}]\n"),
                          f"{SPEC}.tolerations", "tolerations"),
    "gpu no type of the pool offers": (GPU, f"{SPEC}.containers[0].resources.limits[nvidia.com/gpu]", "nvidia.com/gpu"),
    "more cpu than any type": (NODEPOOL + deployment("").replace("cpu: 500m", 'cpu: "500"'),
                               f"{SPEC}.containers[0].resources.requests[cpu]", 'cpu: "500"'),
}


@pytest.mark.parametrize("text, field, written", CASES.values(), ids=list(CASES))
def test_the_finding_is_at_the_field_that_excludes_every_pool(text: str, field: str, written: str) -> None:
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(text)))
    (finding,) = [f for f in report.findings if f.rule == "no-pool-can-launch"]
    assert finding.field == field
    line = text.splitlines()[finding.line - 1]
    assert written in line


def test_the_field_that_refuses_most_pools_wins() -> None:
    # Two pools: both refuse the arch entry, one also the zone; the arch entry is blamed.
    amd = NODEPOOL.replace("values: [c, m, r]}\n", "values: [c, m, r]}\n        - {key: kubernetes.io/arch, "
                           "operator: In, values: [amd64]}\n")
    zoned = amd.replace("name: default\n", "name: zoned\n", 1).replace(
        "values: [amd64]}\n", "values: [amd64]}\n        - {key: topology.kubernetes.io/zone, operator: In, "
        "values: [us-east-1a]}\n")
    text = amd + zoned + deployment("      nodeSelector: {kubernetes.io/arch: arm64, topology.kubernetes.io/zone: us-east-1b}\n")
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(text)))
    (finding,) = [f for f in report.findings if f.rule == "no-pool-can-launch"]
    assert finding.field == f"{SPEC}.nodeSelector[kubernetes.io/arch]"
