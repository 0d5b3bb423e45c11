"""Required pod anti-affinity that caps a workload: one pod per domain, fewer domains than replicas.

A workload whose pods repel each other (required podAntiAffinity whose labelSelector selects its own pods)
holds at most one pod per value of the topologyKey. On a zone (or any zone-like key) the pods can reach only
the zones the planner's launch options (NodePool requirements x catalog offerings) and usable existing nodes
carry, read from the same option table `spread-caps-replicas` reads; a zone already holding a matching bound
pod is taken. On kubernetes.io/hostname the count is only sure when every NodePool that may take the pods
caps its nodes (`limits.nodes`): then the free nodes are the limits' headroom plus the usable existing nodes.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from karpplan.inputs.loader import Document
from karpplan.lint.context import LintContext
from karpplan.lint.core import Hit, Severity, lint_rule
from karpplan.lint.rules.capacity import _cannot_launch, _groups, _Reach, _short
from karpplan.lint.rules.examples import NODEPOOL, ZONE_SPREAD, deployment
from karpplan.model.labels import HOSTNAME
from karpplan.scheduling.problem import GroupInfo
from karpplan.scheduling.problem import Problem as SchedulingProblem
from karpplan.scheduling.topology import AffinityRule, AffinityTerm

_TWO_ZONES = NODEPOOL.replace(
    "values: [c, m, r]}\n",
    "values: [c, m, r]}\n        - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b]}\n")

ZONE_ANTI_AFFINITY = """\
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            - topologyKey: topology.kubernetes.io/zone
              labelSelector: {matchLabels: {app: web}}
"""

FIX = ("use a topologySpreadConstraint with maxSkew 1 on {key} instead (it spreads the replicas evenly and lets "
       "more than one run per {unit}), or make the anti-affinity preferred "
       "(preferredDuringSchedulingIgnoredDuringExecution)")


def _domains(problem: SchedulingProblem, group_info: GroupInfo, key: str, reach: _Reach) -> frozenset[str] | None:
    """The values of `key` the group's pods can reach (launch options, usable existing nodes); None when some
    launch option or usable node lacks the label (anti-affinity does not hold the pods off such a node)."""
    codes, _, _ = reach.table.labels(key)
    if bool(np.any(codes[reach.table.rows_of(group_info.option_ids)] < 0)):
        return None
    existing = [problem.existing[i].node.domain(key) for i in group_info.existing_ok]
    if any(value is None for value in existing):
        return None
    return reach.domains(group_info, key) | {value for value in existing if value is not None}


def _term_path(ctx: LintContext, group_info: GroupInfo, doc: Document, term: AffinityTerm) -> str:
    written = group_info.template.pod_anti_affinity.required
    index = next((i for i, raw in enumerate(written) if raw is term.term), 0)
    return (f"{ctx.group_spec_path(group_info, doc)}.affinity.podAntiAffinity."
            f"requiredDuringSchedulingIgnoredDuringExecution[{index}].topologyKey")


def _own_terms(problem: SchedulingProblem, group_info: GroupInfo) -> Iterator[tuple[AffinityRule, int, AffinityTerm]]:
    topology = problem.topology
    rule = topology.anti_affinity.get(id(group_info.template))
    if rule is None:
        return
    template = group_info.template
    for t, term in enumerate(rule.terms):
        if term.matches(template.namespace, template.labels, topology.namespace_labels):
            yield rule, t, term


@lint_rule("anti-affinity-caps-replicas", "KPL406", Severity.error, needs_pools=True,
           fix=FIX.format(key="topology.kubernetes.io/zone", unit="zone"),
           bad=_TWO_ZONES + deployment(ZONE_ANTI_AFFINITY, replicas=3),
           good=_TWO_ZONES + deployment(ZONE_SPREAD, replicas=3))
def ANTI_AFFINITY_CAPS_REPLICAS(ctx: LintContext) -> Iterator[Hit]:
    """Required pod anti-affinity against its own pods allows fewer pods than the workload's replicas.

    A required podAntiAffinity term whose labelSelector selects the workload's own pods lets at most one of
    them run per value of its topologyKey. With topology.kubernetes.io/zone and more replicas than the zones
    the pods can reach (NodePool requirements x catalog offerings x existing nodes, cut by the pods'
    nodeSelector and affinity), the replicas past the number of zones stay Pending forever.
    """
    problem = ctx.planner.problem
    reach: _Reach | None = None
    for group_info, doc in _groups(ctx, "anti-affinity-caps-replicas", counting=True):
        if _cannot_launch(group_info, problem):
            continue  # no-pool-can-launch says why
        for rule, t, term in _own_terms(problem, group_info):
            taken_counts = rule.existing[t] if t < len(rule.existing) else {}
            taken = frozenset(d for d, n in taken_counts.items() if n)
            if term.key == HOSTNAME:
                # Not judged: Karpenter checks limits.nodes only against the nodes a provisioning batch starts
                # with, so one batch may launch a node per replica past it (the plan warns so); no cap is sure.
                continue
            reach = reach or _Reach(problem)
            domains = _domains(problem, group_info, term.key, reach)
            if domains is None:
                continue
            free_domains = sorted(domains - taken)
            if len(free_domains) >= group_info.size:
                continue
            held = sorted(domains & taken)
            held_text = (f"; {_short(held)} already hold(s) a matching pod" if held else "")
            unit = "zone" if "zone" in term.key else f"{term.key} domain"
            pending = group_info.size - len(free_domains)
            yield Hit(
                doc, _term_path(ctx, group_info, doc, term),
                f"required podAntiAffinity on {term.key} selects these pods' own labels, so at most one runs per "
                f"{unit}, and they can reach {len(domains)} ({_short(sorted(domains)) or 'none'}; "
                f"NodePool requirements x the cluster's zones and offerings x existing nodes{held_text}): "
                f"at most {len(free_domains)} of {group_info.size} replicas can run, at least {pending} "
                f"stay{'s' if pending == 1 else ''} Pending",
                FIX.format(key=term.key, unit=unit),
            )
            break


RULES = (ANTI_AFFINITY_CAPS_REPLICAS,)
