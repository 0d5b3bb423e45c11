"""Satisfiability: what the planner says about the pods, NodePools, catalog and nodes of the input.

Nothing here models scheduling again: the reachable domains are the planner's spread rules
(`scheduling.topology`), the pool verdicts are `scheduling.candidates.check_pool`'s (via `make_problem`),
the reasons are `plan_reasons.reasons_for`'s, and replica counts come from running the planner's
Karpenter engine on the workload alone.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterator, Sequence

import numpy as np

from karpplan.constraints.pool_headroom import Headroom
from karpplan.constraints.spread_counts import minimum_pinned, most_pods_while_pinned
from karpplan.inputs.loader import Document
from karpplan.lint.context import LintContext, object_name
from karpplan.lint.core import Hit, Severity, lint_rule
from karpplan.lint.ignores import silences
from karpplan.lint.locate import path_at
from karpplan.lint.rules.auto_mode_labels import auto_mode_label_fix
from karpplan.lint.rules.blame import blamed_field, written_requirements
from karpplan.lint.rules.examples import NODEPOOL, ZONE_SPREAD, deployment
from karpplan.lint.rules.node_group_labels import node_group_fix
from karpplan.lint.rules.placed import alone, best_placement, placed_of
from karpplan.lint.rules.placeholders import unrendered_documents, unrendered_volume_documents
from karpplan.lint.rules.port_blame import port_blame
from karpplan.lint.rules.rollout import cap_consequence
from karpplan.lint.rules.volume_blame import blamed_volume
from karpplan.lint.rules.zone_fix import zone_fix
from karpplan.lint.skip import Skip
from karpplan.model.labels import ALIASES
from karpplan.model.pools import NodePool
from karpplan.model.taints import SCHEDULING_EFFECTS, untolerated
from karpplan.plan_reasons import keeps_off_karpenter, reasons_for
from karpplan.scheduling.candidates import PoolVerdict, option_table
from karpplan.scheduling.preferences import provided_keys
from karpplan.scheduling.problem import GroupInfo
from karpplan.scheduling.problem import Problem as SchedulingProblem
from karpplan.scheduling.state import PlacementState
from karpplan.scheduling.topology import SpreadRule


def _spread_path(ctx: LintContext, group_info: GroupInfo, doc: Document, index: int, leaf: str = "") -> str:
    base = f"{ctx.group_spec_path(group_info, doc)}.topologySpreadConstraints[{index}]"
    return f"{base}.{leaf}" if leaf else base


def _groups(ctx: LintContext, rule: str, *, counting: bool = False) -> Iterator[tuple[GroupInfo, Document]]:
    """The groups a capacity rule judges: not those the API server rejects (validation findings), nor those
    whose scheduling fields, or whose NodePools' requirements, hold unrendered placeholders (listed as
    skipped: the verdict would be about the placeholder's literal text). A workload scaled to 0 is one
    replica here (`LintContext.planner`); `counting` rules, which judge the real replica count, leave it out."""
    unrendered, unrendered_volumes = unrendered_documents(ctx), unrendered_volume_documents(ctx)
    unrendered_pools = {pool.name for pool in ctx.planner.problem.pools
                        if (d := ctx.by_origin.get(pool.origin)) is not None and id(d) in unrendered}
    for group_info in ctx.planner.problem.groups:
        doc = ctx.group_document(group_info)
        if doc is None or (counting and id(doc) in ctx.scaled_to_zero):
            continue
        pools = sorted({v.pool.name for v in group_info.verdicts} & unrendered_pools)
        volumes = [c for c in group_info.template.volumes.claims
                   if (d := ctx.document_at(c.origin)) is not None and id(d) in unrendered_volumes]
        if id(doc) in unrendered or pools or volumes:
            where = (f"NodePool {', '.join(pools)}" if pools
                     else "its nodeSelector, affinity, tolerations or spread" if id(doc) in unrendered
                     else "its volumes' zones: " + ", ".join(f"{c.subject} ({c.source} at {c.origin})" for c in volumes))
            ctx.skipped.append(Skip(rule, f"unrendered placeholders in {where} (unrendered-placeholder): "
                                          "render the manifests to check these pods", object_name(doc)))
            continue
        yield group_info, doc


def _known_keys(ctx: LintContext) -> frozenset[str]:
    """The label keys some node may carry (`preferences.provided_keys`, which plan's warning on a preferred spread
    asks too), once per lint run."""
    cached = ctx.cache.get("known_keys")
    if isinstance(cached, frozenset):
        return cached
    out = provided_keys(ctx.planner.problem)
    ctx.cache["known_keys"] = out
    return out


def _unknown_key_rules(ctx: LintContext, group_info: GroupInfo) -> list[tuple[int, str]]:
    known = _known_keys(ctx)
    return [(i, c.topology_key) for i, c in enumerate(group_info.template.spread)
            if c.hard and c.topology_key and c.topology_key not in known]


def _cannot_launch(group_info: GroupInfo, problem: SchedulingProblem) -> bool:
    return not group_info.existing_ok and not any(v.ok for v in group_info.verdicts)


def _scaled_templates(ctx: LintContext) -> frozenset[int]:
    """ids of the templates of the one replica the planner's view holds of each workload scaled to 0."""
    out = set()
    for group_info in ctx.planner.problem.groups:
        doc = ctx.by_origin.get(group_info.group.pods[0].origin)
        if doc is not None and id(doc) in ctx.scaled_to_zero:
            out.add(id(group_info.template))
    return frozenset(out)


_ZONED_POOL = NODEPOOL.replace(
    "values: [c, m, r]}\n",
    "values: [c, m, r]}\n        - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b, us-west-2a]}\n")


# ------------------------------------------------------------------------------------------ spread-key-unknown
# A bare key's name and the well-known label it means (kubernetes/website's topology spread examples use
# `zone` and `node`, labels the reader is expected to have set by hand; Karpenter's nodes carry neither).
_MEANT = (("zone", "topology.kubernetes.io/zone"), ("region", "topology.kubernetes.io/region"),
          ("host", "kubernetes.io/hostname"), ("node", "kubernetes.io/hostname"))


def _meant_by_name(key: str, known: Sequence[str], *, exact: bool = False) -> list[str]:
    """The well-known label a key's name points at (`zone`, `node`, `rack-zone`; `exact`: the name is the word,
    as in `kubernetes.io/zone`), if nodes carry it."""
    name = key.rsplit("/", 1)[-1].lower()
    return next(([label] for word, label in _MEANT
                 if (name == word if exact else word in name) and label in known and label != key), [])


@lint_rule("spread-key-unknown", "KPL401", Severity.error, needs_pools=True,
           fix="use a label key nodes carry, e.g. topology.kubernetes.io/zone",
           bad=NODEPOOL + deployment(ZONE_SPREAD.replace("topology.kubernetes.io/zone", "kubernetes.io/zone")),
           good=NODEPOOL + deployment(ZONE_SPREAD))
def SPREAD_KEY_UNKNOWN(ctx: LintContext) -> Iterator[Hit]:
    """A DoNotSchedule topologyKey that no NodePool, Fargate profile or existing node provides.

    kube-scheduler only counts nodes that carry the topologyKey; with DoNotSchedule a node without it never
    qualifies. A typo such as kubernetes.io/zone (for topology.kubernetes.io/zone) makes every pod of the
    workload unschedulable, and the API server does not check it.
    """
    known = sorted(_known_keys(ctx))
    for group_info, doc in _groups(ctx, "spread-key-unknown"):
        for index, key in _unknown_key_rules(ctx, group_info):
            alias = ALIASES.get(key)
            if alias is not None:
                # Karpenter keys every requirement on the normalised label, and its spread domains too, but the
                # spread keeps the key as written: no domain ever matches (kubernetes-sigs/karpenter#3307).
                yield Hit(
                    doc, _spread_path(ctx, group_info, doc, index, "topologyKey"),
                    f"topologyKey {key!r} is a deprecated alias of {alias}: Karpenter finds no domain for it "
                    "(\"unsatisfiable topology constraint for topology spread\"), so with whenUnsatisfiable "
                    f"DoNotSchedule the {group_info.size} pod(s) stay pending" + ctx.zero_replicas_note(doc),
                    f"use {alias}")
                continue
            # A key named `zone` means the zone (kubernetes.io/zone is closer in spelling to kubernetes.io/os).
            close = (_meant_by_name(key, known, exact=True) or difflib.get_close_matches(key, known, n=1, cutoff=0.6)
                     or _meant_by_name(key, known))
            hint = f" (did you mean {close[0]}?)" if close else ""
            yield Hit(
                doc, _spread_path(ctx, group_info, doc, index, "topologyKey"),
                f"topologyKey {key!r} is a label no NodePool, Fargate profile or existing node provides{hint}: "
                f"with whenUnsatisfiable DoNotSchedule no node qualifies and the {group_info.size} pod(s) stay pending"
                + ctx.zero_replicas_note(doc),
                f"use {close[0]}" if close else "use a label key nodes carry, e.g. topology.kubernetes.io/zone",
            )


# ------------------------------------------------------------------------------------------ min-domains
def _short(values: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(sorted(values)[:limit])
    return shown + (f" and {len(values) - limit} more" if len(values) > limit else "")


@lint_rule("min-domains-unreachable", "KPL402", Severity.error, needs_pools=True,
           fix="lower minDomains to the number of reachable domains",
           bad=NODEPOOL + deployment(ZONE_SPREAD.replace("maxSkew: 1", "maxSkew: 1\n          minDomains: 12")),
           good=NODEPOOL + deployment(ZONE_SPREAD.replace("maxSkew: 1", "maxSkew: 1\n          minDomains: 3")))
def MIN_DOMAINS_UNREACHABLE(ctx: LintContext) -> Iterator[Hit]:
    """minDomains above the number of domains the pods can reach.

    While fewer than minDomains domains are eligible, kube-scheduler takes the global minimum as 0, so no
    domain may hold more than maxSkew matching pods. The reachable domains are the planner's: NodePool
    requirements x catalog offerings x existing nodes.
    """
    problem = ctx.planner.problem
    for group_info, doc in _groups(ctx, "min-domains-unreachable"):
        for rule in problem.topology.rules_for(group_info.template):
            c = rule.constraint
            if not rule.hard or c.min_domains is None or rule.hostname:
                continue
            domains = sorted(rule.static_domains())
            if not minimum_pinned(rule, len(domains)):
                continue
            index = group_info.template.spread.index(c)
            most = most_pods_while_pinned(rule, len(domains))
            yield Hit(
                doc, _spread_path(ctx, group_info, doc, index, "minDomains"),
                f"minDomains {c.min_domains} is above the {len(domains)} {c.topology_key} domain(s) the pods can "
                f"reach ({_short(domains) or 'none'}; NodePool requirements x catalog offerings x existing nodes): "
                f"the global minimum stays 0, so at most {len(domains)} x maxSkew {c.max_skew} = "
                f"{most} pod(s) can run" + cap_consequence(
                    doc, group_info.size, most, per_revision="pod-template-hash" in c.match_label_keys) + ctx.zero_replicas_note(doc),
                f"lower minDomains to {len(domains)} or let the NodePools reach more domains",
            )


# ------------------------------------------------------------------------------------------ spread-caps-replicas
def _placed(problem: SchedulingProblem, group_info: GroupInfo, scaled: frozenset[int], *,
            without_hard_spread: bool = False) -> int:
    """How many of the group's pods the planner's Karpenter engine places with the group and the pending
    groups its spread constraints count (what `plan` places beside them), and no other; not the one replica
    of a workload scaled to 0 (`scaled`: their templates' ids), which `plan` would not place."""
    rules = problem.topology.rules_for(group_info.template)
    groups = [g for g in problem.groups if g is group_info or (id(g.template) not in scaled and any(
        r.hard and r.counts(g.template.namespace, g.template.labels) for r in rules))]
    sub = alone(problem, groups, without_hard_spread=group_info if without_hard_spread else None)
    return placed_of(best_placement(sub, [group_info]), group_info)


def _limits_text(pools: Sequence[NodePool], problem: SchedulingProblem) -> str:
    parts = []
    for pool in pools:
        remaining, nodes_left = problem.headroom[pool.name]
        limits = []
        if nodes_left is not None:
            limits.append(f"nodes: {nodes_left}")
        if remaining is not None:
            limits.extend(f"{k}: {v}" for k, v in remaining.formatted().items())
        if limits:
            parts.append(f"NodePool {pool.name} limits {', '.join(limits)}")
    return " with " + " and ".join(parts) if parts else ""


class _Reach:
    """What a group's launch options reach, read from the planner's option table (vectorised: a group may
    use thousands of options, and lint asks for every workload)."""

    def __init__(self, problem: SchedulingProblem) -> None:
        self.table = option_table(problem.options)
        self._domains: dict[tuple[frozenset[int], str], frozenset[str]] = {}

    def domains(self, group_info: GroupInfo, key: str) -> frozenset[str]:
        """The values of label `key` among the group's launch options."""
        cache_key = (group_info.option_ids, key)
        cached = self._domains.get(cache_key)
        if cached is None:
            codes, values, _ = self.table.labels(key)
            present = np.unique(codes[self.table.rows_of(group_info.option_ids)])
            cached = self._domains[cache_key] = frozenset(values[int(c)] for c in present if c >= 0)
        return cached

    def largest(self, verdict: PoolVerdict, key: str) -> int:
        """The largest capacity of `key` among the verdict's options (0 when it has none)."""
        rows = verdict.rows_in(self.table)
        return int(self.table.column("capacity", key)[rows].max()) if len(rows) else 0


def _usable_domains(problem: SchedulingProblem, group_info: GroupInfo, rule: SpreadRule) -> set[str]:
    """The rule's domains of the existing nodes the group's pods may use (kube-scheduler's static filters)."""
    names = {problem.existing[i].node.name for i in group_info.existing_ok}
    return {domain for name, domain in rule.existing_domains.items() if name in names}


def _rule_text(problem: SchedulingProblem, rule: SpreadRule, group_info: GroupInfo, reach: _Reach) -> str:
    if rule.hostname:
        return f"maxSkew {rule.max_skew} over nodes ({rule.key})"
    domains = sorted(rule.static_domains())
    reachable = reach.domains(group_info, rule.key) | _usable_domains(problem, group_info, rule)
    unreachable = [d for d in domains if d not in reachable]
    text = f"maxSkew {rule.max_skew} over {len(domains)} {rule.key} domain(s)"
    if minimum_pinned(rule, len(domains)):
        text += f" (minDomains {rule.min_domains})"
    if unreachable:
        text += f" of which {_short(unreachable)} has no node or offering these pods can use"
        # A domain only because of existing nodes these pods cannot use: the inclusion policies count it.
        held = sorted(name for name, domain in rule.existing_domains.items() if domain in unreachable)
        if held:
            why = group_info.existing_reasons.get(held[0], [])
            policy = "nodeTaintsPolicy Ignore" if not rule.constraint.honors_taints else "nodeTaintsPolicy Honor"
            text += (f" (it counts as a domain because of existing node(s) {_short(held, 3)}"
                     + (f", which these pods cannot use: {why[0]}" if why else "")
                     + f"; {policy} and nodeAffinityPolicy "
                     + ("Honor" if rule.constraint.honors_affinity else "Ignore") + " decide which nodes count)")
    return text


def _may_cap(problem: SchedulingProblem, group_info: GroupInfo, rules: Sequence[SpreadRule], reach: _Reach) -> bool:
    """False when no cap is possible, so the engine need not run: every domain one new nodes can reach,
    minDomains met, and no pool limit that could bind even with one node per pod. A domain only existing
    nodes bring may cap (a tainted node counts under nodeTaintsPolicy Ignore, a full one holds nothing):
    the engine decides, as `plan` would."""
    for rule in rules:
        if rule.hostname:
            continue
        domains = rule.static_domains()
        if minimum_pinned(rule, len(domains)) or not domains <= reach.domains(group_info, rule.key):
            return True
    for verdict in group_info.verdicts:
        if not verdict.ok:
            continue
        remaining, nodes_left = problem.headroom[verdict.pool.name]
        if nodes_left is not None and nodes_left < group_info.size:
            return True
        if remaining is not None:
            for key, left in remaining.items():
                if left < group_info.size * reach.largest(verdict, key):
                    return True
    return any(r.hostname for r in rules) and bool(group_info.existing_ok)


@lint_rule("spread-caps-replicas", "KPL403", Severity.error, needs_pools=True,
           fix="raise maxSkew, use ScheduleAnyway, or let the NodePools reach every domain",
           bad=_ZONED_POOL + deployment(ZONE_SPREAD, replicas=6),
           good=_ZONED_POOL + deployment(ZONE_SPREAD.replace("DoNotSchedule", "ScheduleAnyway"), replicas=6))
def SPREAD_CAPS_REPLICAS(ctx: LintContext) -> Iterator[Hit]:
    """DoNotSchedule spread lets fewer pods run than the workload's replicas.

    The planner's engine places the workload alone under its DoNotSchedule constraints, the reachable
    domains and the NodePools' limits; when fewer replicas run than without the spread constraints, the
    spread is what caps them (for example hostname spread with a node limit, or a zone a NodePool lists but
    no offering serves).
    """
    problem = ctx.planner.problem
    reach: _Reach | None = None
    scaled = _scaled_templates(ctx)
    for group_info, doc in _groups(ctx, "spread-caps-replicas", counting=True):
        rules = [r for r in problem.topology.rules_for(group_info.template) if r.hard and r.self_match]
        if not rules or _unknown_key_rules(ctx, group_info) or _cannot_launch(group_info, problem):
            continue
        reach = reach or _Reach(problem)
        if not _may_cap(problem, group_info, rules, reach):
            continue
        placed = _placed(problem, group_info, scaled)
        if placed >= group_info.size:
            continue
        if _placed(problem, group_info, scaled, without_hard_spread=True) <= placed:
            continue  # not the spread: pool-limits-too-small / no-pool-can-launch say why
        pools = [v.pool for v in group_info.verdicts if v.ok]
        if any(problem.headroom[p.name].limited for p in pools):
            # The limits are named only where they bind: minDomains past the zones caps as much without them
            unlimited = dataclasses.replace(problem, headroom={k: Headroom(None, None) for k in problem.headroom})
            if _placed(unlimited, group_info, scaled) <= placed:
                pools = []
        why = " and ".join(_rule_text(problem, r, group_info, reach) for r in rules)
        index = group_info.template.spread.index(rules[0].constraint)
        yield Hit(
            doc, _spread_path(ctx, group_info, doc, index),
            f"{why}{_limits_text(pools, problem)} lets {placed} of {group_info.size} replicas run",
            "raise maxSkew, use ScheduleAnyway, or let the NodePools reach every domain (limits, zones, offerings)",
        )


# ------------------------------------------------------------------------------------------ no-pool-can-launch
def _blocking_field(node: object, spec_path: str, kind: str) -> str:
    spec = node if isinstance(node, dict) else {}
    if kind == "taint" and spec.get("tolerations") is not None:
        return f"{spec_path}.tolerations"
    if kind in ("requirements", "offering", "taint", "") and spec.get("nodeSelector"):
        return f"{spec_path}.nodeSelector"
    if kind in ("requirements", "offering", "") and isinstance(spec.get("affinity"), dict) \
            and spec["affinity"].get("nodeAffinity") is not None:
        return f"{spec_path}.affinity.nodeAffinity"
    if kind == "resources":
        containers = spec.get("containers")
        if isinstance(containers, list):
            for i, container in enumerate(containers):
                if isinstance(container, dict) and container.get("resources") is not None:
                    return f"{spec_path}.containers[{i}].resources"
    return spec_path


@lint_rule("no-pool-can-launch", "KPL404", Severity.error, needs_pools=True,
           fix="loosen the pod's constraints or add a NodePool that allows them",
           bad=NODEPOOL + deployment("      nodeSelector: {karpenter.k8s.aws/instance-category: t}\n"),
           good=NODEPOOL + deployment("      nodeSelector: {karpenter.k8s.aws/instance-category: m}\n"))
def NO_POOL_CAN_LAUNCH(ctx: LintContext) -> Iterator[Hit]:
    """A pod no NodePool, Fargate profile or existing node can take; says why for each pool.

    Each NodePool is checked as Karpenter checks it (taints, requirements, instance types and offerings,
    limits) and each existing node as kube-scheduler filters it; the reasons are the planner's, in the words
    `karpplan explain` uses. A pod that keeps off Karpenter's nodes by design (`karpenter.sh/nodepool
    DoesNotExist`, as the Karpenter chart's controller) while the input holds no node group, Fargate profile or
    node for it is an info finding: the manifest is right, what it runs on is not in the input.
    """
    problem = ctx.planner.problem
    state: PlacementState | None = None
    # One finding per field of a resource: a SparkApplication's driver and executors kept off by its shared
    # spec.nodeSelector (or volume) are one mistake. (reported doc, written path, fix) -> (reported doc, field, the
    # resource, line, prefix, suffix, (pod spec path, pods, reasons) of each pod spec)
    alike: dict[tuple[int, str, str], tuple[Document, str, Document, int, str, str, list[tuple[str, int, str]]]] = {}
    for group_info, doc in _groups(ctx, "no-pool-can-launch"):
        if not _cannot_launch(group_info, problem):
            continue
        state = state or PlacementState(problem)
        if keeps_off_karpenter(group_info.template) and not problem.existing and not problem.inventory.fargate_profiles:
            # Right as written (the Karpenter chart's own controller): what it runs on is not in the input.
            yield Hit(doc, f"{ctx.group_spec_path(group_info, doc)}.affinity.nodeAffinity",
                      f"these {group_info.size} pod(s) keep off the nodes Karpenter launches (karpenter.sh/nodepool "
                      "DoesNotExist, as the Karpenter chart's own controller does): no NodePool may take them, by "
                      "design, and the input holds no node group, Fargate profile or node they could run on",
                      "nothing to change in this manifest; add what it runs on to the input (an eksctl ClusterConfig "
                      "with managedNodeGroups, --fargate-profile, or kubectl get nodes -o yaml) to check it",
                      severity=Severity.info)
            continue
        reasons = "; ".join(reasons_for(problem, group_info, group_info.group.pods[0], state)[:-1])  # not the workload
        part = (ctx.group_spec_path(group_info, doc), group_info.size, reasons)
        volume = blamed_volume(group_info.template, group_info.verdicts, problem)
        volume_doc = ctx.document_at(volume.origin) if volume is not None and volume.origin.line else None
        if volume is not None and volume_doc is not None:
            if silences(doc, NO_POOL_CAN_LAUNCH):
                continue  # the workload's own annotation still silences it where it is reported
            fix = (f"the pods' volumes decide their zone: let {volume.source} allow a zone the NodePools "
                   "launch in (or add a NodePool for its zones)")
            field = path_at(volume_doc, volume.origin.line)
            alike.setdefault((id(volume_doc), field, fix), (
                volume_doc, field, doc, volume.origin.line, f"{object_name(doc)}: ",
                f" (the zone is its volumes': {volume.describe()})", []))[6].append(part)
            continue
        field, fix = _field_and_fix(ctx, group_info, doc)
        alike.setdefault((id(doc), ctx.written_path(doc, field)[0], fix), (doc, field, doc, 0, "", "", []))[6].append(part)
    for (_, _, fix), (at, field, of, line, prefix, suffix, parts) in alike.items():
        yield Hit(at, field, prefix + _cannot_launch_text(ctx, of, parts) + suffix, fix, line=line)


def _cannot_launch_text(ctx: LintContext, doc: Document, parts: Sequence[tuple[str, int, str]]) -> str:
    """no-pool-can-launch's message for the pods of one or more pod specs of `doc` ((spec path, pods, reasons))."""
    head = f"no NodePool, Fargate profile or existing node can take these {sum(p[1] for p in parts)} pod(s)"
    if len({at for at, _, _ in parts}) == 1:
        return f"{head}{ctx.zero_replicas_note(doc)}: {parts[0][2]}"
    if len({reasons for _, _, reasons in parts}) == 1:
        return f"{head} ({', '.join(f'{size} of {at}' for at, size, _ in parts)}): {parts[0][2]}"
    return f"{head}: " + "; ".join(f"{size} of {at}: {reasons}" for at, size, reasons in parts)


def _field_and_fix(ctx: LintContext, group_info: GroupInfo, doc: Document) -> tuple[str, str]:
    """The field of the pod that keeps every NodePool off (as written: a derived pod spec's at the resource's
    field), and what to change: the generic advice, unless the field says more (a node group's label, a zone no
    pool reaches, a host port a DaemonSet holds)."""
    problem = ctx.planner.problem
    kind = next((v.kind for v in group_info.verdicts if not v.ok), "")
    spec_path = ctx.group_spec_path(group_info, doc)
    pod_spec = ctx.pod_spec(doc, spec_path)
    field = blamed_field(pod_spec, spec_path, group_info.template, group_info.verdicts, problem)
    written = written_requirements(pod_spec, spec_path)
    fix = (node_group_fix(field, written, problem.pools) or auto_mode_label_fix(field, written, problem.pools)
           or zone_fix(field, written, problem, ctx.planner.catalog.region,
                                                                 ctx.region_named)
           or "loosen the pod's nodeSelector/affinity/tolerations/requests or add a NodePool that allows them")
    refused = [v for v in group_info.verdicts if not v.ok]
    if refused and all(v.kind == "taint" for v in refused):
        fix = _toleration_fix(ctx, doc, f"{spec_path}.tolerations", group_info, refused) or fix
    ports = port_blame(pod_spec, spec_path, group_info.template, group_info.verdicts, problem)
    if ports is not None:  # a DaemonSet holds the pod's host port: the port is what to change
        only_ports = all(v.kind == "daemonset" for v in group_info.verdicts if not v.ok)
        field = ports.path if only_ports or field is None else field
        fix = ports.fix if only_ports else f"{fix}; for the NodePools a DaemonSet's port refuses: {ports.fix}"
    return field or _blocking_field(pod_spec, spec_path, kind), fix


def _toleration_fix(ctx: LintContext, doc: Document, path: str, group_info: GroupInfo,
                    refused: Sequence[PoolVerdict]) -> str:
    """Which taints to tolerate, of which NodePools, and where the resource writes tolerations."""
    taints: dict[str, list[str]] = {}
    for verdict in refused:
        for taint in untolerated(group_info.template.tolerations, verdict.pool.taints, SCHEDULING_EFFECTS):
            taints.setdefault(str(taint), []).append(verdict.pool.name)
    if not taints:
        return ""
    where, _ = ctx.written_path(doc, path)
    shown = "; ".join(f"{taint} (NodePool {', '.join(pools)})" for taint, pools in taints.items())
    return (f"tolerate {shown} in {where}, if these pods are meant for {'that pool' if len(refused) == 1 else 'those pools'}"
            ", or add a NodePool without the taint for them")


RULES = (SPREAD_KEY_UNKNOWN, MIN_DOMAINS_UNREACHABLE, SPREAD_CAPS_REPLICAS, NO_POOL_CAN_LAUNCH)
