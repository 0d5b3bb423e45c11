"""A Windows NodePool that Linux pods may land on: nothing in the plan is wrong, the pods just never start."""

from __future__ import annotations

from collections.abc import Iterator

from karpplan.lint.context import LintContext, object_name
from karpplan.lint.core import Hit, Severity, lint_rule
from karpplan.lint.rules.examples import NODE_CLASS, NODEPOOL, deployment
from karpplan.model.node_os import WINDOWS, launches_only, names_an_os

_WINDOWS_POOL = NODEPOOL.replace("  name: default", "  name: windows").replace("name: default}", "name: windows}").replace(
    "        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n",
    "        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n"
    "        - {key: kubernetes.io/os, operator: In, values: [windows]}\n") + """\
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: windows}
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{alias: windows2022@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
---
"""
_TAINTED = _WINDOWS_POOL.replace(
    "      requirements:\n", "      taints: [{key: os, value: windows, effect: NoSchedule}]\n      requirements:\n")
_FIX = ("taint the Windows NodePool (e.g. os=windows:NoSchedule) and tolerate it in the Windows workloads, or give "
        "every Linux workload nodeSelector kubernetes.io/os: linux")


@lint_rule("windows-pool-takes-linux-pods", "KPL407", Severity.warning, fix=_FIX,
           bad=NODEPOOL + NODE_CLASS + "---\n" + _WINDOWS_POOL + deployment(""),
           good=NODEPOOL + NODE_CLASS + "---\n" + _TAINTED + deployment(""))
def WINDOWS_POOL_TAKES_LINUX_PODS(ctx: LintContext) -> Iterator[Hit]:
    """A Windows NodePool without a taint may launch nodes for pods that name no OS.

    Karpenter (and kube-scheduler) place a pod with no `kubernetes.io/os` selector on any node it fits,
    Windows ones included: when the Windows NodePool is the one Karpenter picks (its weight, or the only one
    whose types fit), it launches a Windows node, and the pod's Linux image never starts
    (ErrImagePull: "no matching manifest for windows"). Taint the Windows pool, as AWS's guide does, or give
    Linux workloads an OS selector. Flagged on the pool when a workload in the input (with replicas) may use it.
    """
    problem = ctx.planner.problem
    workloads: dict[str, list[str]] = {}
    for group_info in problem.groups:
        if names_an_os(group_info.template):
            continue
        for verdict in group_info.verdicts:
            doc = ctx.group_document(group_info)
            if verdict.ok and launches_only(verdict.pool.requirements, WINDOWS) and (doc is None or id(doc) not in ctx.scaled_to_zero):
                listed = workloads.setdefault(verdict.pool.name, [])
                name = object_name(doc) if doc is not None else group_info.group.workload
                if name not in listed:
                    listed.append(name)
    for pool in problem.pools:
        names = workloads.get(pool.name, [])
        pool_doc = ctx.by_origin.get(pool.origin)
        if not names or pool_doc is None:
            continue
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        yield Hit(pool_doc, "spec.template.spec",
                  f"NodePool {pool.name} launches Windows nodes and has no taint, so pods that name no OS may land "
                  f"there and their Linux images never start: {shown}", _FIX)


RULES = (WINDOWS_POOL_TAKES_LINUX_PODS,)
