"""Pods a Fargate profile selects but Fargate refuses (they never fall back to EC2)."""

from __future__ import annotations

from collections.abc import Iterator

from karpplan.lint.context import LintContext
from karpplan.lint.core import Hit, Severity, lint_rule
from karpplan.lint.rules.examples import FARGATE_CLUSTER, deployment
from karpplan.model.fargate import profile_for, size_pod
from karpplan.model.resources import CPU, MEMORY


@lint_rule("fargate-incompatible", "KPL501", Severity.error, needs_pools=True,
           fix="drop the refused field, or keep the pod out of the profile's selectors",
           bad=FARGATE_CLUSTER + deployment("      hostNetwork: true\n"),
           good=FARGATE_CLUSTER + deployment(""))
def FARGATE_INCOMPATIBLE(ctx: LintContext) -> Iterator[Hit]:
    """A pod a Fargate profile selects but Fargate refuses (DaemonSet, privileged, hostNetwork, ...).

    A pod that matches a Fargate profile is scheduled by the Fargate scheduler only; it never falls back to
    EC2. Fargate refuses DaemonSets, privileged containers, hostNetwork, hostPort, hostPath volumes,
    non-amd64/linux selectors and pods too large for its sizes, so such pods stay pending.
    """
    seen: set[int] = set()
    for pod, profile in ctx.planner.fargate:
        pod_template = pod.template
        doc = ctx.by_origin.get(pod.origin)
        if id(pod_template) in seen or doc is None:
            continue
        seen.add(id(pod_template))
        for path, why in pod_template.fargate.refusals:
            yield Hit(doc, path, f"Fargate profile {profile.name!r} selects this pod but Fargate refuses "
                                 f"{path}: {why}; the pod does not fall back to EC2" + ctx.zero_replicas_note(doc),
                      "drop the field, or keep the pod out of the profile's selectors")
        if size_pod(pod.requests.get(CPU), pod.requests.get(MEMORY)) is None:
            yield Hit(doc, "spec", f"Fargate profile {profile.name!r} selects this pod but cannot size it: "
                                   f"{pod.requests.formatted()} plus 256Mi exceeds 16 vCPU / 120 GB"
                                   + ctx.zero_replicas_note(doc),
                      "lower the requests or keep the pod out of the profile's selectors")
    profiles = ctx.inventory.fargate_profiles
    for ds in ctx.inventory.daemonsets if profiles else ():
        selected = profile_for(profiles, ds.namespace, ds.template.labels)
        doc = ctx.by_origin.get(ds.origin)
        if selected is not None and doc is not None:
            yield Hit(doc, "kind", f"Fargate profile {selected.name!r} selects this DaemonSet's pods, but Fargate "
                                   "runs no DaemonSets: they run only on EC2 nodes",
                      "run the agent as a sidecar on Fargate, or keep the namespace/labels out of the profile")


RULES = (FARGATE_INCOMPATIBLE,)
