"""A Provisioner migrated to a NodePool, as a reviewer sees it in `karpplan diff`: every field moves
(`spec.requirements` -> `spec.template.spec.requirements`, `ttlSecondsUntilExpired` -> `expireAfter`), so the pool
is compared by its settings in effect (`karpplan/diff/effect.py`) and only what the migration changes is named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from diff_helpers import deployment, karpplan, write

from karpplan.diff.effect import duration_text

# aws/karpenter-provider-aws#5733 "Consolidation not working": "We are in a migration process from `Provisioners`
# to `NodePools` ... The only changed made is PRovisioner>NodePool using `karpenter-convert`"; its Provisioner
# (zones and provider reference as the thread shows them, cut to what a plan reads)
PROVISIONER = """apiVersion: karpenter.sh/v1alpha5
kind: Provisioner
metadata:
  name: monitoring-arm-spot-on-demand
spec:
  consolidation:
    enabled: true
  labels:
    rasp.nodegroup/name: arm
    rasp.nodegroup/namespace: monitoring
  limits:
    resources: {}
  providerRef:
    name: monitoring-arm
  requirements:
  - key: kubernetes.io/arch
    operator: In
    values: [arm64]
  - key: node.kubernetes.io/instance-type
    operator: In
    values: [c7g.large, c7g.xlarge, c6g.large, c6g.xlarge]
  - key: karpenter.sh/capacity-type
    operator: In
    values: [spot, on-demand]
  - key: topology.kubernetes.io/zone
    operator: In
    values: [us-east-1a, us-east-1b]
---
apiVersion: karpenter.k8s.aws/v1alpha1
kind: AWSNodeTemplate
metadata:
  name: monitoring-arm
spec:
  amiFamily: Bottlerocket
  subnetSelector: {karpenter.sh/discovery: my-cluster}
  securityGroupSelector: {karpenter.sh/discovery: my-cluster}
"""


def _nodepool(api: str = "karpenter.sh/v1beta1", disruption: str = "consolidationPolicy: WhenUnderutilized\n"
              "    expireAfter: Never", extra_requirement: str = "") -> str:
    ref = ("nodeClassRef:\n        name: monitoring-arm" if api.endswith("v1beta1") else
           "nodeClassRef:\n        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n        name: monitoring-arm")
    node_class_api = "karpenter.k8s.aws/v1beta1" if api.endswith("v1beta1") else "karpenter.k8s.aws/v1"
    return f"""apiVersion: {api}
kind: NodePool
metadata:
  name: monitoring-arm-spot-on-demand
spec:
  disruption:
    {disruption}
  template:
    metadata:
      labels:
        rasp.nodegroup/name: arm
        rasp.nodegroup/namespace: monitoring
    spec:
      {ref}
      requirements:
      - key: kubernetes.io/arch
        operator: In
        values: [arm64]
      - key: node.kubernetes.io/instance-type
        operator: In
        values: [c7g.large, c7g.xlarge, c6g.large, c6g.xlarge]
      - key: karpenter.sh/capacity-type
        operator: In
        values: [spot, on-demand]
      - key: topology.kubernetes.io/zone
        operator: In
        values: [us-east-1a, us-east-1b]{extra_requirement}
---
apiVersion: {node_class_api}
kind: EC2NodeClass
metadata:
  name: monitoring-arm
spec:
  amiFamily: Bottlerocket
  role: KarpenterNodeRole
  subnetSelectorTerms: [{{tags: {{karpenter.sh/discovery: my-cluster}}}}]
  securityGroupSelectorTerms: [{{tags: {{karpenter.sh/discovery: my-cluster}}}}]
"""


def _pool(tmp_path: Path, head: str) -> dict[str, Any]:
    write(tmp_path / "base" / "all.yaml", PROVISIONER, deployment("prometheus", 2, cpu="500m"))
    write(tmp_path / "head" / "all.yaml", head, deployment("prometheus", 2, cpu="500m"))
    out = karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    [pool] = json.loads(out.stdout)["pools"]
    assert isinstance(pool, dict)
    return pool


def test_a_faithful_conversion_is_the_same_in_effect_but_for_budgets(tmp_path: Path) -> None:
    # karpenter-convert's v1beta1 output: consolidation.enabled -> WhenUnderutilized, no ttlSecondsUntilExpired ->
    # expireAfter: Never; the one thing a NodePool adds is Karpenter's default budget of 10% of its nodes
    pool = _pool(tmp_path, _nodepool())
    assert pool["change"] == "changed"
    assert pool["fields"] == [
        "Provisioner (karpenter.sh/v1alpha5) -> NodePool (karpenter.sh/v1beta1), compared by effect:",
        'disruption.budgets: ["none (v1alpha5 has no budgets)"] -> ["nodes: 10%"]']
    assert not any("spec.consolidation" in f or "spec.requirements" in f for f in pool["fields"])


def test_a_conversion_that_leaves_expire_after_out_expires_nodes_after_720h(tmp_path: Path) -> None:
    # the Provisioner never expired its nodes; a NodePool without expireAfter expires them after 720h (30 days)
    pool = _pool(tmp_path, _nodepool(disruption="consolidationPolicy: WhenUnderutilized"))
    assert "disruption.expireAfter: Never -> 720h" in pool["fields"]


def test_a_v1_nodepool_with_a_narrowed_requirement_names_it_in_effect(tmp_path: Path) -> None:
    # migrated straight to karpenter.sh/v1 and, in the same change, pinned to on-demand c7g: both show as effects
    head = _nodepool(api="karpenter.sh/v1", disruption="consolidationPolicy: WhenEmptyOrUnderutilized\n"
                     "    consolidateAfter: 0s\n    budgets:\n    - nodes: 10%",
                     extra_requirement="\n      - key: karpenter.k8s.aws/instance-family\n        operator: In\n"
                                       "        values: [c7g]")
    pool = _pool(tmp_path, head)
    fields = pool["fields"]
    assert fields[0] == "Provisioner (karpenter.sh/v1alpha5) -> NodePool (karpenter.sh/v1), compared by effect:"
    assert "disruption.expireAfter: Never -> 720h" in fields  # v1's default too
    assert "requirements[karpenter.k8s.aws/instance-family]: (any value) -> In [c7g]" in fields


def test_the_same_api_on_both_sides_is_still_compared_field_by_field(tmp_path: Path) -> None:
    write(tmp_path / "base" / "all.yaml", _nodepool(), deployment("prometheus", 2, cpu="500m"))
    write(tmp_path / "head" / "all.yaml", _nodepool(disruption="consolidationPolicy: WhenEmpty\n"
                                                    "    consolidateAfter: 30s\n    expireAfter: Never"),
          deployment("prometheus", 2, cpu="500m"))
    out = karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "json", cwd=tmp_path)
    [pool] = json.loads(out.stdout)["pools"]
    assert "spec.disruption.consolidationPolicy: WhenUnderutilized -> WhenEmpty" in pool["fields"]
    assert not any("compared by effect" in f for f in pool["fields"])


def test_durations_are_compared_by_length() -> None:
    assert duration_text(2592000) == duration_text("720h") == duration_text("720h0m0s") == "720h"
    assert duration_text("90m") == "1h30m"
    assert duration_text(None) == duration_text("Never") == "Never"
    assert duration_text("0s") == "0s"


def test_a_migration_under_a_new_name_is_paired_and_compared_by_effect(tmp_path: Path) -> None:
    # the Provisioner goes, a NodePool of another name comes: one pool removed and one added, read as one migration
    head = _nodepool().replace("name: monitoring-arm-spot-on-demand", "name: monitoring-arm")
    write(tmp_path / "base" / "all.yaml", PROVISIONER, deployment("prometheus", 2, cpu="500m"))
    write(tmp_path / "head" / "all.yaml", head, deployment("prometheus", 2, cpu="500m"))
    out = karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "json", cwd=tmp_path)
    pools = {p["name"]: p for p in json.loads(out.stdout)["pools"]}
    assert pools["monitoring-arm-spot-on-demand"]["change"] == "removed"
    assert pools["monitoring-arm-spot-on-demand"]["fields"] == ["migrated to monitoring-arm"]
    assert pools["monitoring-arm"]["change"] == "added"
    assert pools["monitoring-arm"]["fields"] == [
        "migrated from monitoring-arm-spot-on-demand",
        "Provisioner (karpenter.sh/v1alpha5) -> NodePool (karpenter.sh/v1beta1), compared by effect:",
        'disruption.budgets: ["none (v1alpha5 has no budgets)"] -> ["nodes: 10%"]']


def test_two_pools_replaced_by_two_are_not_guessed_into_pairs(tmp_path: Path) -> None:
    second = PROVISIONER.replace("name: monitoring-arm-spot-on-demand", "name: other")
    write(tmp_path / "base" / "all.yaml", PROVISIONER, second.split("---")[0], deployment("prometheus", 1))
    head = _nodepool().replace("name: monitoring-arm-spot-on-demand", "name: a")
    write(tmp_path / "head" / "all.yaml", head, head.split("---")[0].replace("name: a", "name: b"),
          deployment("prometheus", 1))
    out = karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "json", cwd=tmp_path)
    assert not any(f.startswith("migrated") for p in json.loads(out.stdout)["pools"] for f in p["fields"])


def test_a_v1beta1_nodepool_rewritten_as_v1_is_the_same_in_effect(tmp_path: Path) -> None:
    # Karpenter's v1 upgrade: `WhenUnderutilized` becomes `WhenEmptyOrUnderutilized` (consolidateAfter 0s),
    # `spec.disruption.expireAfter` moves to `spec.template.spec.expireAfter`, `amiFamily: AL2023` becomes the
    # alias `al2023@latest`, `nodeClassRef.apiVersion` becomes `group`: nothing the pool does changes
    data = Path(__file__).parent / "data" / "diff_v1beta1_to_v1"
    write(tmp_path / "base" / "all.yaml", (data / "v1beta1.yaml").read_text(), deployment("web", 2))
    write(tmp_path / "head" / "all.yaml", (data / "v1.yaml").read_text(), deployment("web", 2))
    out = karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "json", cwd=tmp_path)
    [pool] = json.loads(out.stdout)["pools"]
    assert pool["fields"] == [
        "NodePool (karpenter.sh/v1beta1) -> NodePool (karpenter.sh/v1), compared by effect:",
        "the same in effect (requirements, labels, taints, limits, kubelet, disruption, node class)"]


def test_budgets_a_migration_adds_are_named_in_karpenters_terms(tmp_path: Path) -> None:
    # the NodePool adds what v1alpha5 could not say: no consolidation during business hours
    budgets = ("consolidationPolicy: WhenUnderutilized\n    expireAfter: Never\n    budgets:\n"
               "    - {nodes: \"0\", reasons: [Underutilized], schedule: \"0 9 * * mon-fri\", duration: 8h}\n"
               "    - {nodes: \"10%\"}")
    pool = _pool(tmp_path, _nodepool(disruption=budgets))
    assert pool["fields"][1] == ('disruption.budgets: ["none (v1alpha5 has no budgets)"] -> '
                                 '["nodes: 0, reasons: [Underutilized], schedule: 0 9 * * mon-fri, duration: 8h",'
                                 '"nodes: 10%"]')


def test_a_workload_still_selecting_the_provisioner_name_is_told_why(tmp_path: Path) -> None:
    # https://github.com/aws/karpenter-provider-aws/issues/5645, the maintainer: "Karpenter is ignoring the pod
    # because it sees `karpenter.sh/provisioner-name` as a no longer valid label" ("ignoring pod, label
    # karpenter.sh/provisioner-name is restricted"): the Provisioner became a NodePool, the nodeSelector stayed
    selected = deployment("prometheus", 2, cpu="500m").replace(
        "      containers:", "      nodeSelector: {karpenter.sh/provisioner-name: monitoring-arm-spot-on-demand}\n"
        "      containers:", 1)
    assert "provisioner-name" in selected
    write(tmp_path / "base" / "all.yaml", PROVISIONER, selected)
    write(tmp_path / "head" / "all.yaml", _nodepool(), selected)
    out = karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "json", cwd=tmp_path)
    doc = json.loads(out.stdout)
    assert out.returncode == 1 and len(doc["newlyUnschedulable"]) == 2
    [note] = [n for n in doc["notes"] if "provisioner-name" in n]
    assert note.startswith("Deployment/") and "select karpenter.sh/nodepool" in note
    assert "is restricted" in note


def _split_pool(v1: bool) -> str:
    # the shape of aws-samples/karpenter-blueprints' od-spot-split NodePool `node-od` before and after its commit
    # "Updates to match the Karpenter v1.0.1 release" (8a040e5), written here in brief
    disruption = ("consolidationPolicy: WhenEmptyOrUnderutilized\n    consolidateAfter: 1m" if v1 else
                  "consolidationPolicy: WhenUnderutilized\n    expireAfter: 168h0m0s")
    ref = ("group: karpenter.k8s.aws, kind: EC2NodeClass, name: default" if v1 else "name: default")
    return f"""apiVersion: karpenter.sh/{'v1' if v1 else 'v1beta1'}
kind: NodePool
metadata: {{name: node-od}}
spec:
  disruption:
    {disruption}
  limits: {{cpu: 1k, memory: 500Gi}}
  template:
    metadata:
      labels: {{intent: apps}}
    spec:
{'      expireAfter: 168h0m0s' if v1 else ''}
      nodeClassRef: {{{ref}}}
      requirements:
      - {{key: capacity-spread, operator: In, values: ["1"]}}
      - {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}
      - {{key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}}
      - {{key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["2"]}}
      taints: [{{effect: NoSchedule, key: intent, value: workload-split}}]
"""


def test_the_blueprints_v1_upgrade_changed_only_consolidate_after(tmp_path: Path) -> None:
    # every field of the upgrade moved or was renamed; in effect only `consolidateAfter` changed, 0s -> 1m (v1beta1's
    # WhenUnderutilized consolidated at once)
    write(tmp_path / "base" / "all.yaml", _split_pool(v1=False))
    write(tmp_path / "head" / "all.yaml", _split_pool(v1=True))
    out = karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "json", cwd=tmp_path)
    [pool] = json.loads(out.stdout)["pools"]
    assert pool["fields"] == ["NodePool (karpenter.sh/v1beta1) -> NodePool (karpenter.sh/v1), compared by effect:",
                              "disruption.consolidateAfter: 0s -> 1m"]


def test_a_provisioner_that_never_consolidated_and_a_nodepool_that_waits_forever_are_alike(tmp_path: Path) -> None:
    # v1alpha5 without `consolidation` or `ttlSecondsAfterEmpty` never removed a node; v1's `consolidateAfter:
    # Never` does not either, whatever the policy says
    never = PROVISIONER.replace("  consolidation:\n    enabled: true\n", "")
    write(tmp_path / "base" / "all.yaml", never, deployment("prometheus", 1))
    write(tmp_path / "head" / "all.yaml", _nodepool(disruption="consolidationPolicy: WhenEmpty\n"
                                                    "    consolidateAfter: Never\n    expireAfter: Never"),
          deployment("prometheus", 1))
    out = karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "json", cwd=tmp_path)
    [pool] = json.loads(out.stdout)["pools"]
    assert not any("consolidationPolicy" in f or "consolidateAfter" in f for f in pool["fields"])


def test_kubelet_settings_moved_to_the_node_class_are_the_same_in_effect(tmp_path: Path) -> None:
    # v1 moved the Provisioner's kubeletConfiguration to the EC2NodeClass's spec.kubelet: carried over, not changed
    base = PROVISIONER.replace("  providerRef:\n", "  kubeletConfiguration: {maxPods: 110}\n  providerRef:\n")
    head = _nodepool().replace("  role: KarpenterNodeRole\n", "  role: KarpenterNodeRole\n  kubelet: {maxPods: 110}\n")
    assert "kubelet: {maxPods: 110}" in head and "kubeletConfiguration" in base
    pool = _pool_of(tmp_path, base, head)
    assert not any("kubelet" in f for f in pool["fields"])
    dropped = _pool_of(tmp_path, base, _nodepool())
    assert "kubelet.maxPods removed" in dropped["fields"]


def _pool_of(tmp_path: Path, base: str, head: str) -> dict[str, Any]:
    write(tmp_path / "base" / "all.yaml", base, deployment("prometheus", 1))
    write(tmp_path / "head" / "all.yaml", head, deployment("prometheus", 1))
    out = karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "json", cwd=tmp_path)
    [pool] = json.loads(out.stdout)["pools"]
    assert isinstance(pool, dict)
    return pool


def test_an_inline_provider_s_default_ami_family_is_al2(tmp_path: Path) -> None:
    # the oldest Provisioners (v0.5-era, aws/karpenter-provider-aws#1146) carry `spec.provider` inline, no
    # providerRef: AL2 unless it says otherwise, so a NodePool on an AL2 EC2NodeClass keeps the AMI family
    inline = PROVISIONER.split("---")[0].replace("  providerRef:\n    name: monitoring-arm\n",
                                                  "  provider:\n    subnetSelector: {karpenter.sh/discovery: c}\n")
    head = _nodepool().replace("amiFamily: Bottlerocket", "amiFamily: AL2")
    pool = _pool_of(tmp_path, inline, head)
    assert not any("amiFamily" in f for f in pool["fields"])
