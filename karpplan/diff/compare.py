"""Two planned sides compared: workloads and pools matched by identity, pods HEAD newly leaves out, lint
findings new and fixed, the cost delta, and whether the diff fails the check (`Gate`).

- A workload is `added` or `removed` when only one side defines it (or has pods of it), `changed` when
  its document differs (`definitions.py`) or, for all but DaemonSets, its pod count does (a what-if, an
  HPA), else `unchanged`, whatever its cost does: a NodePool change moves the cost of unchanged workloads.
- A pool is compared the same way by name; Fargate profiles' pseudo-pools (`fargate:<profile>`) by cost. A pool
  rewritten in another API (a Provisioner migrated to a NodePool) is compared by its settings in effect
  (`effect.py`), and one removed with one of another API added is read as that migration under a new name.
- A pod is newly unschedulable when HEAD leaves it unschedulable and BASE did not: BASE placed it, or
  BASE did not have it (a replica or a workload the change adds).
- Lint findings are matched by rule, object and field (their lines move with every edit above them), then
  by message where one field has several.
- Exit 1 (`Gate`) when a pod is newly unschedulable, when HEAD adds lint errors, or when the cost grows
  by more than `--fail-on-increase` percent; exit 3 when the time limit cut either side's plan before every
  pod was simulated (as `plan` exits then), whatever else: its cost is an unfinished plan's.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from karpplan.costs.apportion import MICRO
from karpplan.costs.showback import PoolCost, WorkloadCost, pool_of, workload_key
from karpplan.diff.definitions import Definition
from karpplan.diff.effect import aligned, migrated, selects_provisioner
from karpplan.diff.fields import EFFECT_SHORT, changed_fields
from karpplan.diff.model import Change, Gate, NewlyUnschedulable, PlanDiff, PoolChange, WorkloadChange
from karpplan.diff.moves import moved_notes
from karpplan.diff.overlays import overlay_notes
from karpplan.diff.pdbs import pdb_notes
from karpplan.diff.side import Side
from karpplan.diff.weights import on_new_nodes, pool_notes, workload_notes
from karpplan.lint.core import Finding
from karpplan.plan import Plan
from karpplan.plan_reasons import UNPRICED_REASON

IDLE_WORTH_NAMING = 1370  # micro-dollars an hour: $1 a month

TIMINGS = ("solveSeconds", "phases")  # vary from run to run: not in a diff


def _change(in_base: bool, in_head: bool, differs: bool) -> Change:
    if not in_base:
        return "added"
    if not in_head:
        return "removed"
    return "changed" if differs else "unchanged"


def _pod_counts(plan: Plan, placed_only: bool = False) -> Counter[str]:
    return Counter(workload_key(p.workload, p.namespace) for p in plan.pods if not placed_only or p.node)


def _where(head: Definition | None, base: Definition | None, relabel: Callable[[str], str]) -> tuple[str, int]:
    if head is not None:
        return head.file, head.line
    if base is not None:
        return relabel(base.file), base.line
    return "", 0


def _fields(base: Definition | None, head: Definition | None) -> tuple[str, ...]:
    """What changed between two definitions of one workload or pool (nothing when a side lacks it)."""
    if base is None or head is None or base.digest == head.digest:
        return ()
    labels = [""] + [f"{b.get('kind', 'NodeClass')}/{(b.get('metadata') or {}).get('name', '')}"
                     for b in (head.written[1:] or base.written[1:])]
    return changed_fields(base.written, head.written, labels)


def _renamed_migration(base: Mapping[str, Definition], head: Mapping[str, Definition]) -> tuple[str, str] | None:
    """(old, new) when the change removes exactly one pool and adds exactly one of another kind or API version:
    a Provisioner migrated to a NodePool under a new name (`default` -> `general-purpose`)."""
    gone, added = sorted(set(base) - set(head)), sorted(set(head) - set(base))
    if len(gone) != 1 or len(added) != 1:
        return None
    was, now = base[gone[0]], head[added[0]]
    if not was.written or not now.written or migrated(was.written[0], now.written[0]) is None:
        return None
    return gone[0], added[0]


def _pool_fields(base: Definition | None, head: Definition | None) -> tuple[str, ...]:
    """What changed of a pool: field by field, or, across APIs (a Provisioner migrated to a v1 NodePool, whose
    every field moves), its settings in effect (`effect.py`), so that only what the migration changes shows."""
    if base is None or head is None or base.digest == head.digest or not base.written or not head.written:
        return _fields(base, head)
    how = migrated(base.written[0], head.written[0])
    if how is None or not base.effect or not head.effect:
        return _fields(base, head)
    was, now = aligned(base.effect, head.effect)
    found = changed_fields([was], [now], short=EFFECT_SHORT)
    return (f"{how}, compared by effect:",
            *(found or ("the same in effect (requirements, labels, taints, limits, kubelet, disruption, node class)",)))


def _workloads(base: Side, head: Side) -> tuple[WorkloadChange, ...]:
    costs: tuple[dict[str, WorkloadCost], dict[str, WorkloadCost]] = (
        {w.workload: w for w in base.costs.workloads}, {w.workload: w for w in head.costs.workloads})
    defs = (base.definitions.workloads, head.definitions.workloads)
    counts = (_pod_counts(base.plan), _pod_counts(head.plan))
    placed = (_pod_counts(base.plan, placed_only=True), _pod_counts(head.plan, placed_only=True))
    out = []
    for key in sorted(set(costs[0]) | set(costs[1]) | set(defs[0]) | set(defs[1])):
        present = [key in costs[i] or key in defs[i] for i in (0, 1)]
        daemonset = key.startswith("DaemonSet/")
        pods = [(costs[i][key].pods if key in costs[i] else 0) if daemonset else counts[i][key] for i in (0, 1)]
        d_base, d_head = defs[0].get(key), defs[1].get(key)
        differs = (d_base is not None and d_head is not None and d_base.digest != d_head.digest) or \
            (not daemonset and pods[0] != pods[1])
        micros = [costs[i][key].hourly_micros if key in costs[i] else 0 for i in (0, 1)]
        namespace = key.split("/")[1] if key.count("/") >= 2 else ""
        file, line = _where(d_head, d_base, base.at_revision)
        # A DaemonSet's pods are the ones its nodes run (one per node it tolerates), never pending: all placed.
        placed_pods = pods if daemonset else [placed[0][key], placed[1][key]]
        out.append(WorkloadChange(key, namespace, _change(present[0], present[1], differs), pods[0], pods[1],
                                  micros[0], micros[1], file, line, _fields(d_base, d_head),
                                  placed_pods[0], placed_pods[1]))
    return tuple(sorted(out, key=lambda w: (-abs(w.delta_micros), w.workload)))


def _idle_neighbours(pools: tuple[PoolChange, ...], workloads: tuple[WorkloadChange, ...],
                     head: Side) -> tuple[PoolChange, ...]:
    """Each pool whose idle cost grows, with the changed or added workloads on its new HEAD nodes: the showback
    rule charges a workload its share only, so a constraint that leaves nodes half empty shows as the pool's idle
    cost; naming the workloads there keeps the cause next to the cost."""
    touched = {w.workload for w in workloads if w.change in ("changed", "added")}
    placed = on_new_nodes(head.plan)
    out = []
    for p in pools:
        grew = p.idle_head_micros - p.idle_base_micros >= IDLE_WORTH_NAMING
        names = tuple(sorted(placed.get(p.name, set()) & touched)) if grew else ()
        out.append(replace(p, idle_with=names) if names else p)
    return tuple(out)


def _launches(plan: Plan) -> dict[str, Counter[str]]:
    """Pool -> its new nodes by instance type (`m5.large`, `m5.large spot`); Fargate's pods are not nodes."""
    out: dict[str, Counter[str]] = {}
    for n in plan.nodes:
        if n.new and n.fargate is None:
            kind = n.instance_type or "?"
            spot = n.capacity_type not in (None, "on-demand")
            out.setdefault(pool_of(n), Counter())[f"{kind} {n.capacity_type}" if spot else kind] += 1
    return out


def _pools(base: Side, head: Side) -> tuple[PoolChange, ...]:
    costs: tuple[dict[str, PoolCost], dict[str, PoolCost]] = (
        {p.node_pool: p for p in base.costs.pools}, {p.node_pool: p for p in head.costs.pools})
    defs = (base.definitions.pools, head.definitions.pools)
    launches = (_launches(base.plan), _launches(head.plan))
    renamed = _renamed_migration(*defs)
    out = []
    for name in sorted(set(costs[0]) | set(costs[1]) | set(defs[0]) | set(defs[1])):
        present = [name in costs[i] or name in defs[i] for i in (0, 1)]
        c_base, c_head = costs[0].get(name), costs[1].get(name)
        d_base, d_head = defs[0].get(name), defs[1].get(name)
        micros = [0 if c is None else c.hourly_micros for c in (c_base, c_head)]
        if d_base is not None and d_head is not None:
            differs = d_base.digest != d_head.digest
        else:
            differs = d_base is None and d_head is None and micros[0] != micros[1]
        file, line = _where(d_head, d_base, base.at_revision)
        fields = _pool_fields(d_base, d_head)
        if renamed is not None and name in renamed:
            fields = (f"{'migrated to' if name == renamed[0] else 'migrated from'} "
                      f"{renamed[1] if name == renamed[0] else renamed[0]}",
                      *(_pool_fields(defs[0][renamed[0]], defs[1][renamed[1]]) if name == renamed[1] else ()))
        out.append(PoolChange(name, _change(present[0], present[1], differs),
                              0 if c_base is None else c_base.nodes, 0 if c_head is None else c_head.nodes,
                              micros[0], micros[1], 0 if c_base is None else c_base.idle_micros,
                              0 if c_head is None else c_head.idle_micros, file, line, fields,
                              launches=(launches[0].get(name, Counter()), launches[1].get(name, Counter()))))
    return tuple(out)


def _newly_unschedulable(base: Side, head: Side) -> tuple[NewlyUnschedulable, ...]:
    was_unschedulable = {u.pod for u in base.plan.unschedulable}
    placed = {p.key for p in base.plan.pods if p.node is not None}
    out = []
    for item in head.plan.unschedulable:
        if item.pod in was_unschedulable:
            continue
        workload = workload_key(item.workload, item.pod.split("/", 1)[0])
        where = head.definitions.workloads.get(workload)
        out.append(NewlyUnschedulable(item.pod, workload, tuple(head.relabel(r) for r in item.reasons),
                                      item.pod in placed, where.file if where else "", where.line if where else 0))
    return tuple(sorted(out, key=lambda u: u.pod))


def _finding(f: Finding, relabel: Callable[[str], str]) -> dict[str, Any]:
    doc = f.as_dict()
    doc["file"] = relabel(f.file)
    doc["message"] = relabel(f.message)
    return doc


def _unmatched(ours: Sequence[Finding], theirs: Sequence[Finding]) -> list[Finding]:
    """Our findings that theirs do not have: matched whole first, then by rule, object and field."""
    exact = Counter((f.rule, f.object, f.field, f.message) for f in theirs)
    left = []
    for f in ours:
        key = (f.rule, f.object, f.field, f.message)
        if exact[key] > 0:
            exact[key] -= 1
        else:
            left.append(f)
    loose = Counter((rule, obj, field) for (rule, obj, field, _), n in exact.items() for _ in range(n))
    out = []
    for f in left:
        key3 = (f.rule, f.object, f.field)
        if loose[key3] > 0:
            loose[key3] -= 1
        else:
            out.append(f)
    return out


def _percent(base: int, head: int) -> float | None:
    return None if base <= 0 else (head - base) * 100.0 / base


def _gate(diff_micros: tuple[int, int], newly: Sequence[NewlyUnschedulable], new_errors: int,
          fail_on_increase: float | None, jobs_micros: tuple[int, int] = (0, 0)) -> Gate:
    """`jobs_micros`: the Job and CronJob workloads' share of each side's cost. Their nodes run only while they do,
    so `--fail-on-increase` judges the cost that runs all month (a nightly job's parallelism from 4 to 6 failed a
    10% gate as +$750/month)."""
    base, head = diff_micros
    increase = _percent(base, head)
    steady_base, steady_head = base - jobs_micros[0], head - jobs_micros[1]
    judged = _percent(steady_base, steady_head) if any(jobs_micros) else increase
    reasons = []
    exceeded = False
    if newly:
        unpriced = sum(1 for u in newly if _for_want_of_a_price(u.reasons))
        reasons.append(f"{len(newly)} pod{'s' if len(newly) != 1 else ''} HEAD leaves unschedulable "
                       "(placed by BASE, or added by the change)"
                       + (f", {unpriced} of them only for want of a price in the catalog" if unpriced else ""))
    if new_errors:
        reasons.append(f"{new_errors} new lint error{'s' if new_errors != 1 else ''}")
    if fail_on_increase is not None and steady_head > steady_base:
        exceeded = judged is None or judged > fail_on_increase + 1e-9
        what = "the cost Jobs and CronJobs aside" if any(jobs_micros) else "the cost"
        if judged is None:
            reasons.append(f"{what} grows from $0/h to ${steady_head / MICRO:.4f}/h "
                           f"(--fail-on-increase {fail_on_increase:g})")
        elif exceeded:
            reasons.append(f"{what} grows by {judged:.1f}%, more than --fail-on-increase {fail_on_increase:g}%")
    return Gate(fail_on_increase, increase, tuple(reasons), exceeded,
                jobs_delta_micros=jobs_micros[1] - jobs_micros[0],
                judged_increase_percent=judged if any(jobs_micros) else None)


def _summary(side: Side) -> dict[str, Any]:
    doc = {k: v for k, v in side.plan.summary.to_document().items() if k not in TIMINGS}
    doc["paths"] = [side.relabel(p) for p in side.paths]
    doc["lintFindings"] = len(side.findings)
    return doc


def _order(f: Mapping[str, Any]) -> tuple[str, int, int, str]:
    return (str(f["file"]), int(f["line"]), int(f["column"]), str(f["rule"]))


def _cut_notes(base: Side, head: Side) -> tuple[str, ...]:
    """A side the time limit cut before every pod was simulated, said: its cost is an unfinished plan's."""
    return tuple(f"{label}'s plan was cut by the time limit: {side.plan.summary.not_simulated} pod(s) not simulated, "
                 "so the costs compare an unfinished plan; raise --time-limit"
                 for label, side in (("BASE", base), ("HEAD", head)) if side.plan.not_simulated)


def _capacity_notes(base: Side, head: Side) -> tuple[str, ...]:
    """A side with pods to place and nowhere to place them, said: its $0 is no cost, it is no plan."""
    empty = [label for label, side in (("BASE", base), ("HEAD", head))
             if not side.capacity and side.plan.summary.pods > side.plan.summary.gated]
    if not empty:
        return ()
    who = " and ".join(empty)
    verb = "have" if len(empty) > 1 else "has"
    return (f"{who} {verb} no NodePool, Provisioner, Node, eksctl node group or Fargate profile: every pod is "
            f"unschedulable there and costs $0, so the cost delta compares nothing; give the cluster's NodePools "
            "as a PATH too (karpplan diff --git REF apps/ pools/) or put them in both trees",)


_ORIGIN = re.compile(r"^.*?:\d+: ")  # a preference's `file:line: ` (BASE and HEAD live in different places)


def _relaxed_notes(base: Side, head: Side) -> tuple[str, ...]:
    """Preferences one side's plan honours and the other's does not: a change in cost that comes from Karpenter
    keeping or relaxing a preference (a new NodePool limit, more replicas than nodes), said beside the numbers."""
    def unmet(side: Side) -> dict[str, str]:
        return {_ORIGIN.sub("", side.relabel(p)): side.relabel(p) for p in side.plan.unmet_preferences}

    before, after = unmet(base), unmet(head)
    notes = [f"HEAD no longer honours {after[k]}, which BASE's plan honours: part of the change in cost is "
             "Karpenter relaxing it (HEAD's plan warnings say what it does instead)" for k in sorted(after.keys() - before.keys())]
    notes += [f"HEAD honours {before[k]}, which BASE's plan does not: part of the change in cost is keeping it"
              for k in sorted(before.keys() - after.keys())]
    return tuple(notes)


def _provisioner_selector_notes(head: Side, newly: Sequence[NewlyUnschedulable]) -> tuple[str, ...]:
    """A note for each workload HEAD leaves unschedulable whose pods still select `karpenter.sh/provisioner-name`
    (a migration to NodePools that kept the v1alpha5 selector)."""
    notes = []
    for workload in sorted({u.workload for u in newly}):
        found = head.definitions.workloads.get(workload)
        if found is not None and found.written and selects_provisioner(found.written[0]):
            notes.append(f"{workload}: its pods select karpenter.sh/provisioner-name, the label of v1alpha5 "
                         "Provisioners' nodes, which Karpenter refuses since v0.33 (\"label "
                         "karpenter.sh/provisioner-name is restricted\"): select karpenter.sh/nodepool: <NodePool> "
                         "instead")
    return tuple(notes)


def _for_want_of_a_price(reasons: Sequence[str]) -> bool:
    """A pod's reasons say only the catalog's missing prices keep it out (`plan_reasons` says that first)."""
    return bool(reasons) and reasons[0].startswith(UNPRICED_REASON)


def _unpriced_notes(newly: Sequence[NewlyUnschedulable]) -> tuple[str, ...]:
    """A note for each workload HEAD leaves out only for want of a price in the catalog: its pods would run (the
    region offers the types), so HEAD's lower cost is no saving."""
    counts = Counter(u.workload for u in newly if _for_want_of_a_price(u.reasons))
    return tuple(f"{workload}: {n} pod{'s' if n != 1 else ''} left unschedulable only because the catalog has no price "
                 "here for the instance types they need (they would run): HEAD's cost leaves them out, so its change in "
                 "cost is no saving; diff with --allow-estimated-prices or --catalog FILE to price them"
                 for workload, n in sorted(counts.items()))


def _base_unpriced_notes(base: Side, head: Side) -> tuple[str, ...]:
    """The same for BASE: pods it leaves out only for want of a price that HEAD places (a change that moves them
    onto priced types): BASE's cost leaves them out, so the increase is partly theirs, not the change's."""
    placed = {p.key for p in head.plan.pods if p.node is not None}
    counts = Counter(workload_key(u.workload, u.pod.split("/", 1)[0]) for u in base.plan.unschedulable
                     if u.pod in placed and _for_want_of_a_price(u.reasons))
    return tuple(f"{workload}: BASE left {n} pod{'s' if n != 1 else ''} out only because the catalog has no price "
                 "there for the instance types needed (the region offers them), and HEAD places "
                 f"{'them' if n != 1 else 'it'}: BASE's cost leaves {'them' if n != 1 else 'it'} out, so the increase "
                 "overstates the change; diff with --allow-estimated-prices or --catalog FILE to price both sides"
                 for workload, n in sorted(counts.items()))


def _weight_notes(base: Side, head: Side, workloads: tuple[WorkloadChange, ...],
                  pools: tuple[PoolChange, ...]) -> tuple[tuple[WorkloadChange, ...], tuple[PoolChange, ...]]:
    """The rows whose change a heavier NodePool makes moot, with why (`weights.py`)."""
    said = workload_notes(base.inventory, head.inventory, head.plan, [w.workload for w in workloads if w.change == "changed"])
    idle = pool_notes(head.inventory, head.plan,
                      [p.name for p in pools if p.change == "changed" and p.nodes_base == p.nodes_head == 0])
    return (tuple(replace(w, note=said[w.workload]) if w.workload in said else w for w in workloads),
            tuple(replace(p, note=idle[p.name]) if p.name in idle else p for p in pools))


def compare(base: Side, head: Side, *, engine: str, fail_on_increase: float | None = None,
            time_limit: tuple[float, bool] | None = None) -> PlanDiff:
    """`time_limit`: the seconds each side was planned in, and whether `auto` chose them."""
    # Neither side has anything to run pods on: every pod is unschedulable on both, for want of the cluster's
    # NodePools (`_capacity_notes` says so), not because of the change; none is "newly" unschedulable.
    newly = _newly_unschedulable(base, head) if base.capacity or head.capacity else ()
    lint_new = _unmatched(head.findings, base.findings)
    lint_gone = _unmatched(base.findings, head.findings)
    # a finding whose object HEAD no longer has went with it: not fixed (a renamed workload's comes back as new)
    lint_fixed = [f for f in lint_gone if f.object in head.definitions.objects]
    lint_gone = [f for f in lint_gone if f.object not in head.definitions.objects]
    micros = (base.costs.hourly_micros, head.costs.hourly_micros)
    new_errors = sum(1 for f in lint_new if f.severity.value == "error")
    workloads, pools = _weight_notes(base, head, _workloads(base, head), _pools(base, head))
    return PlanDiff(
        engine=engine, base=_summary(base), head=_summary(head), base_micros=micros[0], head_micros=micros[1],
        new_nodes_delta=head.plan.summary.new_nodes - base.plan.summary.new_nodes,
        unschedulable_delta=head.plan.summary.unschedulable - base.plan.summary.unschedulable,
        workloads=workloads, pools=_idle_neighbours(pools, workloads, head), newly_unschedulable=newly,
        lint_new=tuple(sorted((_finding(f, head.relabel) for f in lint_new), key=_order)),
        lint_fixed=tuple(sorted((_finding(f, base.at_revision) for f in lint_fixed), key=_order)),
        lint_removed=tuple(sorted((_finding(f, base.at_revision) for f in lint_gone), key=_order)),
        gate=_gate(micros, newly, new_errors, fail_on_increase, (base.costs.jobs_micros, head.costs.jobs_micros)),
        notes=(*base.notes, *head.notes, *_capacity_notes(base, head), *_cut_notes(base, head),
               *_relaxed_notes(base, head), *moved_notes(base, head, workloads),
               *_provisioner_selector_notes(head, newly), *_unpriced_notes(newly),
               *_base_unpriced_notes(base, head),
               *pdb_notes(base.definitions.budgets, head.definitions.budgets, head.relabel),
               *overlay_notes(base.definitions.overlays, head.definitions.overlays)),
        time_limit=None if time_limit is None else time_limit[0],
        time_limit_auto=time_limit is not None and time_limit[1],
        cut=bool(base.plan.not_simulated or head.plan.not_simulated),
    )
