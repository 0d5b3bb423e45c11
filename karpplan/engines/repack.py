"""Re-packing a plan's new nodes: the same zones and pools, better-filled and right-sized nodes.

Karpenter's greedy keeps the zones, pools and capacity types it chose, but spreads pods over claims by
pod count and never revisits a claim, so its nodes end up unevenly filled and imbalanced between CPU and
memory. The re-packer keeps every decision a zone-level rule can see and redoes only the per-node part:

* Pods on new nodes are put into *buckets*: nodes of one pool, zone and capacity type with the same
  values for every topology key a rule or preference uses and the same eligibility for every spread
  rule whose inclusion policy depends on the instance type. Moving a pod inside its bucket changes no
  zone-level count, so zonal spread, zonal (anti-)affinity, limits by zone and pool tiers still hold.
* Inside a bucket only per-node rules remain: resources (requests + DaemonSet overhead, through each
  option's room), hard hostname spread (a new node holds at most maxSkew matching pods), hostname pod
  anti-affinity (both directions) and host ports. Pods with hostname pod *affinity*, and the pods such
  a term matches, are left on their nodes.
* Packing, per bucket: pods with hostname rules first, first-fit decreasing (each needs a node its rules
  allow); then the other pods into the slack the right-sized nodes already pay for; then the rest into
  bulk nodes of the bucket's most cost-efficient option, filled so CPU and memory stay balanced; finally
  every node launches the cheapest option that holds it (the decision Karpenter makes at launch).
* A bucket keeps its original nodes when re-packing does not make it cheaper, and a pool keeps its
  original nodes when the re-packed ones would break its limits, so the result is never worse than the
  plan it started from and never less valid.
"""

from __future__ import annotations

import math
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from ortools.linear_solver import pywraplp

from karpplan.engines.effort import WorkClock
from karpplan.engines.result import Solution, SolvedNode, node_name
from karpplan.model.labels import HOSTNAME
from karpplan.model.pods import HostPort, Pod
from karpplan.model.resources import CPU, MEMORY
from karpplan.scheduling.candidates import LaunchOption
from karpplan.scheduling.problem import GroupInfo, Problem
from karpplan.scheduling.state import PlacementState
from karpplan.scheduling.topology import SpreadRule

Member = tuple[GroupInfo, Pod]
# Owner nodes are grown for this share of an even split of the other pods (each share is a packing of
# its own, the cheapest kept): all of it keeps pods on the nodes paid for anyway; half of it leaves the
# rest to bulk nodes of the most cost-efficient option, which on AWS are large ones (kubelet's reserve
# shrinks relative to the instance's size), about 3% cheaper on the benchmark's aws rows.
GROWN_SHARES = (1.0, 0.5)
MIX_LP_MILLISECONDS = 2000  # GLOP's time limit for the zone mix of interchangeable pods
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class _GroupRules:
    """What a group's pods bring to a node and what they need from it (hostname-level rules only)."""

    spread_owned: tuple[int, ...]  # hard hostname spread rules the pods carry (rule ids)
    spread_matches: frozenset[int]  # hostname spread rules whose selector counts these pods
    anti_owned: tuple[int, ...]  # hostname anti-affinity terms the pods carry (term ids)
    anti_matches: frozenset[int]  # hostname anti-affinity terms whose selector matches these pods
    host_ports: tuple[HostPort, ...]
    pinned: bool  # takes part in hostname pod affinity: left where it is

    @property
    def owner(self) -> bool:
        """Carries a per-node rule (or host ports), so it limits the nodes it may join."""
        return bool(self.spread_owned or self.anti_owned or self.host_ports)

    @property
    def matched(self) -> bool:
        """Counted by some per-node rule: free to go anywhere no owner of that rule is."""
        return bool(self.spread_matches or self.anti_matches)


@dataclass
class _Bin:
    used: IntArray
    allowed: BoolArray
    members: list[Member] = field(default_factory=list)
    spread_count: Counter[int] = field(default_factory=Counter)
    spread_owned: set[int] = field(default_factory=set)
    anti_count: Counter[int] = field(default_factory=Counter)
    anti_owned: set[int] = field(default_factory=set)
    ports: list[HostPort] = field(default_factory=list)
    choice: int = -1  # index of the cheapest bucket option holding the bin


class _Rulebook:
    """Per-group hostname rules of the whole problem, with stable integer ids."""

    def __init__(self, problem: Problem) -> None:
        topo = problem.topology
        ns_labels = problem.namespace_labels
        groups = problem.groups
        spread: list[SpreadRule] = [r for g in groups for r in topo.rules_for(g.template) if r.hostname and r.hard]
        spread_ids = {id(r): i for i, r in enumerate(spread)}
        anti_terms = [(g.index, t) for g in groups
                      if (a := topo.anti_affinity.get(id(g.template))) is not None
                      for t in a.terms if t.key == HOSTNAME]
        affinity_terms = [(g.index, t) for g in groups
                          if (a := topo.affinity.get(id(g.template))) is not None
                          for t in a.terms if t.key == HOSTNAME]
        affine_matched: set[int] = set()
        for _, term in affinity_terms:
            for h in groups:
                if term.matches(h.template.namespace, h.template.labels, ns_labels):
                    affine_matched.add(h.index)
        affine_owners = {g for g, _ in affinity_terms}
        spread_index = _RuleIndex(spread)
        self.by_group: dict[int, _GroupRules] = {}
        for g in groups:
            tpl = g.template
            owned = tuple(spread_ids[id(r)] for r in topo.rules_for(tpl) if r.hostname and r.hard)
            matches = spread_index.matching(tpl.namespace, tpl.labels)
            anti_owned = tuple(i for i, (owner, _) in enumerate(anti_terms) if owner == g.index)
            anti_matches = frozenset(i for i, (_, t) in enumerate(anti_terms)
                                     if t.matches(tpl.namespace, tpl.labels, ns_labels))
            self.by_group[g.index] = _GroupRules(owned, matches, anti_owned, anti_matches, tuple(tpl.host_ports),
                                                 g.index in affine_owners or g.index in affine_matched)
        self.max_skew = [r.max_skew for r in spread]

    def accepts(self, node: _Bin, rules: _GroupRules) -> bool:
        """May one more pod with these rules join the node (final counts, both directions)?"""
        for rid in rules.spread_owned:
            if node.spread_count[rid] + (1 if rid in rules.spread_matches else 0) > self.max_skew[rid]:
                return False
        for rid in rules.spread_matches:
            if rid in node.spread_owned and node.spread_count[rid] + 1 > self.max_skew[rid]:
                return False
        for tid in rules.anti_owned:
            if node.anti_count[tid]:
                return False
        if rules.anti_matches and not rules.anti_matches.isdisjoint(node.anti_owned):
            return False
        return not (rules.host_ports and any(p.conflicts(q) for p in rules.host_ports for q in node.ports))

    @staticmethod
    def record(node: _Bin, rules: _GroupRules) -> None:
        node.spread_owned.update(rules.spread_owned)
        for rid in rules.spread_matches:
            node.spread_count[rid] += 1
        node.anti_owned.update(rules.anti_owned)
        for tid in rules.anti_matches:
            node.anti_count[tid] += 1
        node.ports.extend(rules.host_ports)


class _RuleIndex:
    """Spread rules by what they count (namespace and selector), so each pod template is tested once per
    distinct selector instead of once per rule (many Deployments share a selector)."""

    def __init__(self, rules: Sequence[SpreadRule]) -> None:
        self.ids: dict[tuple[str, str], list[int]] = defaultdict(list)
        self.sample: dict[tuple[str, str], SpreadRule] = {}
        for i, r in enumerate(rules):
            key = (r.owner.namespace, repr(r.selector))
            self.ids[key].append(i)
            self.sample.setdefault(key, r)

    def matching(self, namespace: str, labels: Mapping[str, str]) -> frozenset[int]:
        return frozenset(i for key, r in self.sample.items() if r.counts(namespace, labels) for i in self.ids[key])


class BucketShape:
    """Launch options that are interchangeable for every zone-level rule, as arrays sorted by price."""

    def __init__(self, options: Sequence[LaunchOption], dims: Sequence[str]) -> None:
        self.options = sorted(options, key=lambda o: (o.price, o.instance_type.name, o.index))
        self.position = {o.index: i for i, o in enumerate(self.options)}
        self.free = np.array([[o.free.get(d) for d in dims] for o in self.options], dtype=np.int64)
        self.price = np.array([o.price for o in self.options], dtype=np.float64)

    def cheapest(self, used: IntArray, allowed: BoolArray) -> int:
        """Index of the cheapest allowed option with room for `used`, or -1."""
        fits = allowed & np.all(self.free >= used, axis=1)
        if not fits.any():
            return -1
        return int(np.argmax(fits))


class Repacker:
    def __init__(self, problem: Problem, clock: WorkClock | None = None) -> None:
        self.problem = problem
        # The zone-mix LP is solved to optimality; its time limit is a guard that, when it stops the LP,
        # tells the optimiser's work clock (the plan may then differ between runs).
        self.clock = clock
        self.rules = _Rulebook(problem)
        self.dims = sorted({name for g in problem.groups for name in g.template.requests})
        self.requests = {g.index: np.array([g.template.requests.get(d) for d in self.dims], dtype=np.int64)
                         for g in problem.groups}
        self._keys = problem.topology.domain_keys()
        self._policy_rules = self._instance_sensitive_rules()
        self._interned: dict[bytes, BoolArray] = {}
        # Every option's bucket, once: `repack` runs on several plans of the same problem.
        self._options_by_bucket: dict[tuple[object, ...], list[LaunchOption]] = defaultdict(list)
        self._bucket_of: dict[int, tuple[object, ...]] = {}
        for o in problem.options:
            key = self.bucket_key(o)
            self._bucket_of[o.index] = key
            self._options_by_bucket[key].append(o)

    # ------------------------------------------------------------------------------------ buckets
    def _instance_sensitive_rules(self) -> list[SpreadRule]:
        """Non-hostname spread rules whose domain eligibility could differ between instance types."""
        out = []
        for rules in self.problem.topology.spread.values():
            for r in rules:
                if r.hostname:
                    continue
                affinity = r.owner.affinity
                if (r.constraint.honors_affinity and (affinity.required is not None or len(affinity.node_selector))) \
                        or r.constraint.honors_taints:
                    out.append(r)
        return out

    def bucket_of(self, option: LaunchOption) -> tuple[object, ...]:
        return self._bucket_of[option.index]

    def shape(self, key: tuple[object, ...]) -> BucketShape:
        """The bucket's options as arrays (built on each call: callers keep it)."""
        return BucketShape(self._options_by_bucket[key], self.dims)

    def bucket_key(self, option: LaunchOption) -> tuple[object, ...]:
        return (option.pool.name, option.zone, option.capacity_type,
                tuple(option.labels.get(k) for k in self._keys),
                tuple(r.option_counts(option) for r in self._policy_rules))

    # ------------------------------------------------------------------------------------ entry point
    def repack(self, solution: Solution) -> Solution:
        buckets: dict[tuple[object, ...], list[SolvedNode]] = defaultdict(list)
        kept: list[SolvedNode] = []
        for node in solution.nodes:
            if node.option is None:
                kept.append(node)
                continue
            if any(self.rules.by_group[gi.index].pinned for gi, _ in node.pods):
                kept.append(node)
            else:
                buckets[self._bucket_of[node.option.index]].append(node)
        shapes = {key: self.shape(key) for key in buckets}
        chosen: dict[tuple[object, ...], list[SolvedNode]] = {}
        for key, nodes in buckets.items():
            packed = self._pack_bucket(shapes[key], _items(nodes))
            old = sum(n.price for n in nodes)
            new = sum(n.price for n in packed) if packed is not None else old
            better = packed is not None and (new < old - 1e-9 or (new <= old + 1e-9 and len(packed) < len(nodes))
                                             or not all(self.valid(n) for n in nodes))
            chosen[key] = packed if better and packed is not None else nodes
        # Second try: first move interchangeable pods between the pool's zones so each zone's mix of
        # CPU-heavy and memory-heavy pods matches its nodes' shape; kept when the whole plan is cheaper.
        moved = self._rebalanced(buckets, shapes)
        if moved is not None:
            alternative: dict[tuple[object, ...], list[SolvedNode]] = {}
            for key, items in moved.items():
                packed = self._pack_bucket(shapes[key], items) if items else []
                if packed is None:
                    break
                alternative[key] = packed
            else:
                total = sum(n.price for ns in chosen.values() for n in ns)
                if sum(n.price for ns in alternative.values() for n in ns) < total - 1e-9:
                    chosen = alternative
        self._respect_limits(buckets, chosen, kept)
        nodes = list(kept) + [n for key in buckets for n in chosen[key]]
        return self.renamed(solution, nodes)

    def _rebalanced(self, buckets: dict[tuple[object, ...], list[SolvedNode]],
                    shapes: dict[tuple[object, ...], BucketShape]) -> dict[tuple[object, ...], list[tuple[GroupInfo, Pod, LaunchOption]]] | None:
        """Pods reassigned between buckets of one pool with every zone-level count unchanged.

        Pods are interchangeable when the same zonal spread rules count them, they carry the same zonal
        rules and preferences and take part in no zonal (anti-)affinity: swapping two of them between
        zones leaves every domain count as it was. Per class, the number of pods per bucket stays; which
        pods go where is chosen by a small LP (GLOP) that minimises the buckets' fluid cost, each
        bucket's CPU and memory priced by the mix of its options that holds them most cheaply, so every
        zone gets a mix of CPU-heavy and memory-heavy pods its nodes can hold without waste.
        """
        if len(buckets) < 2:
            return None
        items = {key: _items(nodes) for key, nodes in buckets.items()}
        movable = self._movable_groups()
        members: dict[tuple[object, ...], list[tuple[tuple[object, ...], tuple[GroupInfo, Pod, LaunchOption]]]] = defaultdict(list)
        fixed: dict[tuple[object, ...], list[tuple[GroupInfo, Pod, LaunchOption]]] = defaultdict(list)
        for key, its in items.items():
            for it in its:
                signature = movable.get(it[0].index)
                if signature is None:
                    fixed[key].append(it)
                else:
                    members[(key[0], signature)].append((key, it))
        classes = []
        for cls in sorted(members, key=repr):
            quota: Counter[tuple[object, ...]] = Counter(key for key, _ in members[cls])
            if len(quota) < 2 or any(not self._group_fits_bucket(members[cls], shapes[key]) for key in quota):
                for key, it in members[cls]:
                    fixed[key].append(it)
                continue
            classes.append((cls, quota))
        if not classes:
            return None
        plan = _MixLP(self, shapes, fixed, [(quota, members[cls]) for cls, quota in classes]).solve()
        if plan is None:
            return None
        out: dict[tuple[object, ...], list[tuple[GroupInfo, Pod, LaunchOption]]] = {k: list(fixed.get(k, [])) for k in items}
        changed = False
        for (cls, _), counts in zip(classes, plan, strict=True):
            # Pods stay in their bucket where the new counts allow; the rest move.
            by_group: dict[int, list[tuple[tuple[object, ...], tuple[GroupInfo, Pod, LaunchOption]]]] = defaultdict(list)
            for key, it in members[cls]:
                by_group[it[0].index].append((key, it))
            for gidx, pods in sorted(by_group.items()):
                want = dict(counts.get(gidx, {}))
                leftovers = []
                for key, it in pods:
                    if want.get(key, 0) > 0:
                        want[key] -= 1
                        out[key].append(it)
                    else:
                        leftovers.append(it)
                for it in leftovers:
                    key = next(k for k in sorted(want, key=repr) if want[k] > 0)
                    want[key] -= 1
                    out[key].append(it)
                    changed = True
        return out if changed else None

    def _group_fits_bucket(self, members: Sequence[tuple[tuple[object, ...], tuple[GroupInfo, Pod, LaunchOption]]],
                           shape: BucketShape) -> bool:
        """Every member's group may use some option of the bucket that holds one of its pods."""
        for gi in {it[0].index: it[0] for _, it in members}.values():
            if not any(o.index in gi.option_ids and gi.template.requests.fits_in(o.free) for o in shape.options):
                return False
        return True

    def _movable_groups(self) -> dict[int, tuple[object, ...]]:
        """Group index -> interchangeability signature, for groups whose pods may change zone."""
        topo = self.problem.topology
        ns_labels = self.problem.namespace_labels
        zonal_rules = [r for rules in topo.spread.values() for r in rules if not r.hostname]
        zonal_terms = [t for rule in list(topo.affinity.values()) + list(topo.anti_affinity.values())
                       for t in rule.terms if t.key != HOSTNAME] + [t for t, _ in topo.existing_anti if t.key != HOSTNAME]
        zonal_index = _RuleIndex(zonal_rules)
        out: dict[int, tuple[object, ...]] = {}
        for g in self.problem.groups:
            tpl = g.template
            if self.rules.by_group[g.index].pinned:
                continue
            owns_zonal_affinity = any(
                t.key != HOSTNAME for rule in (topo.affinity.get(id(tpl)), topo.anti_affinity.get(id(tpl)))
                if rule is not None for t in rule.terms)
            if owns_zonal_affinity or any(t.matches(tpl.namespace, tpl.labels, ns_labels) for t in zonal_terms):
                continue
            counted = tuple(sorted(zonal_index.matching(tpl.namespace, tpl.labels)))
            own = tuple(sorted(repr(r.signature()) for r in topo.rules_for(tpl) if not r.hostname))
            out[g.index] = (counted, own, repr(tpl.affinity), frozenset(g.option_ids))
        return out

    def _respect_limits(self, original: dict[tuple[object, ...], list[SolvedNode]],
                        chosen: dict[tuple[object, ...], list[SolvedNode]], kept: list[SolvedNode]) -> None:
        """Keep a pool's original nodes when the re-packed ones would overrun a limit the original kept."""
        pools = {o.pool.name for nodes in original.values() for n in nodes if (o := n.option) is not None}
        for pool in pools:
            remaining, nodes_left = self.problem.limits[pool]
            if remaining is None and nodes_left is None:
                continue

            def usage(which: dict[tuple[object, ...], list[SolvedNode]], pool: str = pool) -> tuple[int, dict[str, int]]:
                nodes = [n for n in kept if n.option is not None and n.option.pool.name == pool]
                nodes += [n for key, ns in which.items() for n in ns if key[0] == pool]
                totals: dict[str, int] = defaultdict(int)
                for n in nodes:
                    assert n.option is not None
                    for k, v in n.option.capacity.items():
                        totals[k] += v
                return len(nodes), totals

            count, totals = usage(chosen)
            old_count, old_totals = usage(original)
            over = nodes_left is not None and count > nodes_left and count > old_count
            if remaining is not None:
                over = over or any(totals.get(k, 0) > left and totals.get(k, 0) > old_totals.get(k, 0)
                                   for k, left in remaining.items())
            if over:
                for key in chosen:
                    if key[0] == pool:
                        chosen[key] = original[key]

    def valid(self, node: SolvedNode) -> bool:
        """Does the node keep every hostname rule with its final counts (Karpenter's greedy may not)?"""
        trial = _Bin(np.zeros(len(self.dims), dtype=np.int64), np.ones(0, dtype=np.bool_))
        for gi, _ in node.pods:
            rules = self.rules.by_group[gi.index]
            if not self.rules.accepts(trial, rules):
                return False
            self.rules.record(trial, rules)
        return True

    # ------------------------------------------------------------------------------------ packing
    def pod_mask(self, bucket: BucketShape, gi: GroupInfo, origin: LaunchOption,
                  cache: dict[tuple[int, tuple[int, ...]], BoolArray]) -> BoolArray:
        """Options of the bucket this pod may take: its group's, and every preference its old node met."""
        met_at = tuple(i for i, p in enumerate(gi.template.affinity.preferred) if p.term.matches(origin.labels, ""))
        cache_key = (gi.index, met_at)
        if cache_key in cache:
            return cache[cache_key]
        met = [gi.template.affinity.preferred[i].term for i in met_at]
        mask = np.array([o.index in gi.option_ids and all(t.matches(o.labels, "") for t in met)
                         for o in bucket.options], dtype=np.bool_)
        # Pods with equal masks share one array, so bulk packing can pool them.
        mask = self._interned.setdefault(mask.tobytes(), mask)
        cache[cache_key] = mask
        return mask

    def _pack_bucket(self, bucket: BucketShape, items: Sequence[tuple[GroupInfo, Pod, LaunchOption]]) -> list[SolvedNode] | None:
        """The cheaper of two packings of the bucket's pods (both keep every per-node rule)."""
        cache: dict[tuple[int, tuple[int, ...]], BoolArray] = {}
        self._interned = {}  # masks are interned per bucket shape
        pods = [(gi, pod, self.pod_mask(bucket, gi, origin, cache)) for gi, pod, origin in items]
        packings = [self._pack_slack_then_bulk(bucket, pods)] + [self._pack_grown(bucket, pods, share) for share in GROWN_SHARES]
        plans = [p for p in packings if p is not None]
        if not plans:
            return None
        return min(plans, key=lambda nodes: (round(sum(n.price for n in nodes), 9), len(nodes)))

    def _owner_bins(self, bucket: BucketShape, pods: Sequence[tuple[GroupInfo, Pod, BoolArray]], spread: bool = False
                    ) -> tuple[list[_Bin], list[tuple[GroupInfo, Pod, BoolArray]]]:
        """Pods carrying hostname rules placed first fit decreasing; the other pods returned, largest first.

        With `spread`, only owners of hostname anti-affinity go first fit; the other owners are dealt
        round the nodes those opened. Packed densely, owners of several hostname spread rules would
        fill a node that no pod their selectors match may then join, so it could hold nothing else.
        """
        constrained = [p for p in pods if self.rules.by_group[p[0].index].owner]
        free = [p for p in pods if not self.rules.by_group[p[0].index].owner]
        size = self._size_key(bucket)
        constrained.sort(key=lambda p: (-len(self.rules.by_group[p[0].index].anti_owned)
                                        - len(self.rules.by_group[p[0].index].spread_owned), size(p[0])))
        free.sort(key=lambda p: size(p[0]))
        bins: list[_Bin] = []
        if spread:
            cliques = [p for p in constrained if self.rules.by_group[p[0].index].anti_owned]
            self._first_fit(bucket, bins, cliques)
            self._round_robin(bucket, bins, [p for p in constrained if not self.rules.by_group[p[0].index].anti_owned])
        else:
            self._first_fit(bucket, bins, constrained)
        return bins, free

    def _round_robin(self, bucket: BucketShape, bins: list[_Bin], pods: Iterable[tuple[GroupInfo, Pod, BoolArray]]) -> None:
        """Each pod into the next node (after the last one used, wrapping round) that takes it, or a new one."""
        start = 0
        for gi, pod, mask in pods:
            rules = self.rules.by_group[gi.index]
            req = self.requests[gi.index]
            chosen = -1
            for step in range(len(bins)):
                i = (start + step) % len(bins)
                b = bins[i]
                if self.rules.accepts(b, rules):
                    allowed = b.allowed & mask
                    if allowed.any() and bucket.cheapest(b.used + req, allowed) >= 0:
                        chosen = i
                        break
            if chosen < 0:
                bins.append(_Bin(np.zeros(len(self.dims), dtype=np.int64), np.ones(len(bucket.options), dtype=np.bool_)))
                chosen = len(bins) - 1
            self._add(bins[chosen], gi, pod, mask)
            start = chosen + 1

    def _launch(self, bucket: BucketShape, bins: Iterable[_Bin]) -> list[SolvedNode] | None:
        """Every bin as the cheapest option that holds it (the decision Karpenter makes at launch)."""
        out: list[SolvedNode] = []
        for b in bins:
            choice = bucket.cheapest(b.used, b.allowed)
            if choice < 0:
                return None
            out.append(SolvedNode("", None, bucket.options[choice], list(b.members)))
        return out

    def _pack_slack_then_bulk(self, bucket: BucketShape, pods: Sequence[tuple[GroupInfo, Pod, BoolArray]]) -> list[SolvedNode] | None:
        # 1. Pods carrying hostname rules: first fit (in a node the largest option could still hold).
        bins, free = self._owner_bins(bucket, pods)
        for b in bins:
            b.choice = bucket.cheapest(b.used, b.allowed)
        # 2. Other pods into the slack the chosen options already pay for.
        rest = self._fill_slack(bucket, bins, free)
        # 3. The rest into balanced bulk nodes (no owner of a hostname rule is there, so none applies).
        bulk = self._bulk(bucket, rest)
        if bulk is None:
            return None
        bins.extend(bulk)
        return self._launch(bucket, bins)

    def _pack_grown(self, bucket: BucketShape, pods: Sequence[tuple[GroupInfo, Pod, BoolArray]],
                    share: float = 1.0) -> list[SolvedNode] | None:
        """Owner nodes grown to share the other pods, then bulk nodes; each node filled by dot product.

        The nodes hostname rules force are paid for anyway, so the other pods ride on them first: each
        owner node in turn is sized for its owners plus `share` times an even share of the pods still
        unplaced (the cheapest option that holds that much) and filled to that option's room, always taking the pod
        whose request vector best matches the room left (the dot-product rule of vector bin packing, so
        CPU and memory run out together). What is left goes to nodes of the most cost-efficient option.
        """
        bins, free = self._owner_bins(bucket, pods, spread=True)
        kinds = _Kinds(free, self.requests, bucket, self.rules)
        for i, b in enumerate(bins):
            even = kinds.remaining_demand() / float(len(bins) - i)
            target = self._target_option(bucket, b, b.used.astype(np.float64) + share * even)
            if target >= 0:
                self._fill_dot(bucket, b, target, kinds)
        while kinds.left():
            k = kinds.first()
            mask = kinds.mask[k]
            target = self._efficient_option(bucket, mask, kinds.remaining_demand(mask))
            b = _Bin(np.zeros(len(self.dims), dtype=np.int64), mask.copy())
            if target >= 0:
                self._fill_dot(bucket, b, target, kinds)
            if not b.members:
                # Nothing fits the target option: the largest pod left gets a node of its own.
                gi, pod, pmask = kinds.take(k)
                self._add(b, gi, pod, pmask)
            bins.append(b)
        return self._launch(bucket, bins)

    def _target_option(self, bucket: BucketShape, b: _Bin, want: npt.NDArray[np.float64]) -> int:
        """The cheapest option of the node's that holds `want`; else the one holding most of it per dollar."""
        allowed = b.allowed & np.all(bucket.free >= b.used, axis=1)
        fits = allowed & np.all(bucket.free >= want, axis=1)
        if fits.any():
            return int(np.argmax(fits))
        if not allowed.any():
            return -1
        positive = want > 0
        share = np.min(bucket.free[:, positive] / want[positive], axis=1) if positive.any() else np.ones(len(bucket.options))
        score = np.where(allowed, share / np.maximum(bucket.price, 1e-12), -1.0)
        return int(np.argmax(score))

    def _fill_dot(self, bucket: BucketShape, b: _Bin, target: int, kinds: _Kinds) -> None:
        """Fill the node up to `target`'s room, each time with the pod that best matches the room left."""
        cap = np.maximum(bucket.free[target].astype(np.float64), 1.0)
        blocked = np.zeros(len(kinds.keys), dtype=np.bool_)  # rules refuse them here; counts only grow
        usable = kinds.mask[:, target] if len(kinds.keys) else blocked
        while True:
            room = bucket.free[target] - b.used
            ok = usable & ~blocked & (kinds.count > 0) & np.all(kinds.req <= room, axis=1)
            if not ok.any():
                return
            score = np.where(ok, (kinds.req / cap) @ (room / cap), -np.inf)
            placed = False
            for k in np.argsort(-score, kind="stable"):
                if not ok[k]:
                    break
                rules = kinds.rules[k]
                if rules.matched and not self.rules.accepts(b, rules):
                    blocked[k] = True
                    continue
                gi, pod, pmask = kinds.take(int(k))
                self._add(b, gi, pod, pmask)
                placed = True
                break
            if not placed:
                return

    def _size_key(self, bucket: BucketShape) -> Callable[[GroupInfo], tuple[float, int]]:
        """Sort key: larger pods first, size measured in the bucket's price per unit of each dimension."""
        scale = np.zeros(len(self.dims), dtype=np.float64)
        for j in range(len(self.dims)):
            col = bucket.free[:, j]
            usable = col > 0
            if usable.any():
                scale[j] = float(np.min(bucket.price[usable] / col[usable]))

        def key(gi: GroupInfo) -> tuple[float, int]:
            return (-float(np.max(self.requests[gi.index] * scale)), gi.index)

        return key

    def _add(self, b: _Bin, gi: GroupInfo, pod: Pod, mask: BoolArray) -> None:
        b.used = b.used + self.requests[gi.index]
        b.allowed = b.allowed & mask
        b.members.append((gi, pod))
        self.rules.record(b, self.rules.by_group[gi.index])

    def _first_fit(self, bucket: BucketShape, bins: list[_Bin], pods: Iterable[tuple[GroupInfo, Pod, BoolArray]]) -> None:
        # Rejections are monotone (nodes only fill up), so each (group, mask) keeps a cursor.
        cursor: dict[tuple[int, int], int] = {}
        for gi, pod, mask in pods:
            rules = self.rules.by_group[gi.index]
            ck = (gi.index, id(mask))
            i = cursor.get(ck, 0)
            req = self.requests[gi.index]
            while i < len(bins):
                b = bins[i]
                if self.rules.accepts(b, rules):
                    allowed = b.allowed & mask
                    if allowed.any() and bucket.cheapest(b.used + req, allowed) >= 0:
                        break
                i += 1
            cursor[ck] = i
            if i == len(bins):
                bins.append(_Bin(np.zeros(len(self.dims), dtype=np.int64), np.ones(len(bucket.options), dtype=np.bool_)))
            self._add(bins[i], gi, pod, mask)

    def _fill_slack(self, bucket: BucketShape, bins: list[_Bin],
                    pods: list[tuple[GroupInfo, Pod, BoolArray]]) -> list[tuple[GroupInfo, Pod, BoolArray]]:
        """First fit of each pod into the room the bins' chosen options leave (all bins tested at once)."""
        if not bins:
            return pods
        rest = []
        choice = np.array([b.choice for b in bins], dtype=np.int64)
        launched = choice >= 0
        safe = np.where(launched, choice, 0)
        room = bucket.free[safe] - np.array([b.used for b in bins], dtype=np.int64)
        for gi, pod, mask in pods:
            req = self.requests[gi.index]
            rules = self.rules.by_group[gi.index]
            fits = launched & mask[safe] & np.all(room >= req, axis=1)
            for i in np.flatnonzero(fits):
                if not rules.matched or self.rules.accepts(bins[i], rules):
                    self._add(bins[i], gi, pod, mask)
                    room[i] -= req
                    break
            else:
                rest.append((gi, pod, mask))
        return rest

    def _bulk(self, bucket: BucketShape, pods: list[tuple[GroupInfo, Pod, BoolArray]]) -> list[_Bin] | None:
        """Pods without hostname rules: nodes of the most cost-efficient option, CPU and memory balanced."""
        out: list[_Bin] = []
        by_mask: dict[int, list[tuple[GroupInfo, Pod, BoolArray]]] = defaultdict(list)
        masks: dict[int, BoolArray] = {}
        for p in pods:
            by_mask[id(p[2])].append(p)
            masks[id(p[2])] = p[2]
        # Pods whose masks differ only by preferences share nodes when their masks intersect.
        for mid, items in by_mask.items():
            mask = masks[mid]
            demand = np.sum([self.requests[gi.index] for gi, _, _ in items], axis=0)
            target = self._efficient_option(bucket, mask, demand)
            if target < 0:
                return None
            out.extend(self._balanced_bins(bucket, target, mask, items))
        return out

    def _efficient_option(self, bucket: BucketShape, mask: BoolArray, demand: IntArray | npt.NDArray[np.float64]) -> int:
        """The allowed option that holds the most of this demand mix per dollar."""
        best, best_score = -1, 0.0
        positive = demand > 0
        for i in np.flatnonzero(mask):
            free = bucket.free[i]
            if np.any(free[positive] <= 0):
                continue
            share = float(np.min(free[positive] / demand[positive]))
            score = share / max(float(bucket.price[i]), 1e-12)
            if score > best_score:
                best, best_score = int(i), score
        return best

    def _balanced_bins(self, bucket: BucketShape, target: int, mask: BoolArray,
                       items: list[tuple[GroupInfo, Pod, BoolArray]]) -> list[_Bin]:
        """Fill nodes of `target` one at a time, taking the pod that best evens out CPU and memory."""
        cap = bucket.free[target].astype(np.float64)
        cpu = self.dims.index(CPU) if CPU in self.dims else None
        mem = self.dims.index(MEMORY) if MEMORY in self.dims else None
        # Two queues, largest first: pods heavier in CPU than the node's shape, and the others.
        def heavy(gi: GroupInfo) -> bool:
            if cpu is None or mem is None or cap[cpu] <= 0 or cap[mem] <= 0:
                return True
            r = self.requests[gi.index]
            return bool(r[cpu] / cap[cpu] >= r[mem] / cap[mem])

        queues = [[p for p in items if heavy(p[0])], [p for p in items if not heavy(p[0])]]
        bins: list[_Bin] = []
        while queues[0] or queues[1]:
            b = _Bin(np.zeros(len(self.dims), dtype=np.int64), mask.copy())
            start = [0, 0]
            while True:
                if cpu is not None and mem is not None:
                    first = 0 if b.used[cpu] / max(cap[cpu], 1) <= b.used[mem] / max(cap[mem], 1) else 1
                else:
                    first = 0
                placed = False
                for q in (first, 1 - first):
                    queue = queues[q]
                    j = start[q]
                    while j < len(queue):
                        gi, pod, pmask = queue[j]
                        if np.all(b.used + self.requests[gi.index] <= bucket.free[target]):
                            self._add(b, gi, pod, pmask)
                            queue.pop(j)
                            placed = True
                            break
                        j += 1
                    start[q] = j if not placed else start[q]
                    if placed:
                        break
                if not placed:
                    break
            if not b.members:
                # Nothing fits the target option alone: give the largest pod a node of its own.
                queue = queues[0] or queues[1]
                gi, pod, pmask = queue.pop(0)
                self._add(b, gi, pod, pmask)
            bins.append(b)
        return bins

    # ------------------------------------------------------------------------------------ output
    @staticmethod
    def renamed(solution: Solution, nodes: list[SolvedNode]) -> Solution:
        ordinal = 0
        out: list[SolvedNode] = []
        for n in nodes:
            if n.option is None:
                out.append(n)
                continue
            ordinal += 1
            out.append(SolvedNode(node_name(n.option, ordinal), None, n.option, list(n.pods)))
        return Solution(solution.engine, out, list(solution.unplaced), solution.status, solution.lower_bound,
                        solution.solve_seconds, list(solution.notes), solution.exceeds_node_limits)


class _MixLP:
    """Which bucket each interchangeable pod goes to: an LP over pod counts, rounded to whole pods."""

    def __init__(self, repacker: Repacker,
                 shapes: dict[tuple[object, ...], BucketShape],
                 fixed: dict[tuple[object, ...], list[tuple[GroupInfo, Pod, LaunchOption]]],
                 classes: list[tuple[Counter[tuple[object, ...]],
                                     list[tuple[tuple[object, ...], tuple[GroupInfo, Pod, LaunchOption]]]]]) -> None:
        self.repacker = repacker
        self.shapes = shapes
        self.fixed = fixed
        self.classes = classes

    def solve(self) -> list[dict[int, dict[tuple[object, ...], int]]] | None:
        """Per class: group index -> bucket -> pods, or None when GLOP gives no optimal answer."""
        r = self.repacker
        solver = pywraplp.Solver.CreateSolver("GLOP")
        if solver is None:
            return None
        inf = solver.infinity()
        keys = sorted(self.shapes, key=repr)
        dims = len(r.dims)
        fixed_demand = {k: np.sum([r.requests[gi.index] for gi, _, _ in self.fixed.get(k, [])], axis=0)
                        if self.fixed.get(k) else np.zeros(dims, dtype=np.int64) for k in keys}
        terms: dict[tuple[object, ...], list[list[Any]]] = {k: [[] for _ in range(dims)] for k in keys}
        variables: list[dict[int, dict[tuple[object, ...], pywraplp.Variable]]] = []
        for quota, members in self.classes:
            sizes: Counter[int] = Counter(it[0].index for _, it in members)
            group_vars: dict[int, dict[tuple[object, ...], pywraplp.Variable]] = {}
            for gidx, count in sorted(sizes.items()):
                group_vars[gidx] = {k: solver.NumVar(0.0, float(count), "") for k in sorted(quota, key=repr)}
                solver.Add(solver.Sum(list(group_vars[gidx].values())) == float(count))
                for k, v in group_vars[gidx].items():
                    for d in range(dims):
                        amount = float(r.requests[gidx][d])
                        if amount:
                            terms[k][d].append(amount * v)
            for k, q in quota.items():
                solver.Add(solver.Sum([group_vars[g][k] for g in group_vars]) == float(q))
            variables.append(group_vars)
        cost: list[Any] = []
        for k in keys:
            shape = self.shapes[k]
            # Fluid nodes of each option: the bucket's cheapest mix for what it must hold.
            nodes = [solver.NumVar(0.0, inf, "") for _ in shape.options]
            for d in range(dims):
                need = float(fixed_demand[k][d]) + (solver.Sum(terms[k][d]) if terms[k][d] else 0.0)
                solver.Add(solver.Sum([float(shape.free[i][d]) * nodes[i] for i in range(len(nodes))]) >= need)
            cost.extend(float(shape.price[i]) * nodes[i] for i in range(len(nodes)))
        solver.Minimize(solver.Sum(cost))
        solver.SetTimeLimit(MIX_LP_MILLISECONDS)
        began = time.monotonic()
        status = solver.Solve()
        if self.repacker.clock is not None:  # (its time is in the model of what precedes the search)
            self.repacker.clock.record_stop(status == pywraplp.Solver.OPTIMAL, time.monotonic() - began,
                                            MIX_LP_MILLISECONDS / 1000)
        if status != pywraplp.Solver.OPTIMAL:
            return None
        return [self._rounded(group_vars, quota) for (quota, _), group_vars in zip(self.classes, variables, strict=True)]

    @staticmethod
    def _rounded(group_vars: dict[int, dict[tuple[object, ...], pywraplp.Variable]],
                 quota: Counter[tuple[object, ...]]) -> dict[int, dict[tuple[object, ...], int]]:
        """Whole pods with the same totals per group and per bucket: floors, then the remaining units
        to the largest fractions (row and column sums are whole, so this always completes)."""
        out: dict[int, dict[tuple[object, ...], int]] = {}
        fractions: list[tuple[float, int, tuple[object, ...]]] = []
        left_in_bucket = Counter(quota)
        left_in_group: Counter[int] = Counter()
        for g, per_key in group_vars.items():
            out[g] = {}
            total = round(sum(v.solution_value() for v in per_key.values()))
            for k, v in per_key.items():
                value = max(v.solution_value(), 0.0)
                whole = int(math.floor(value + 1e-6))
                out[g][k] = whole
                left_in_bucket[k] -= whole
                fractions.append((value - whole, g, k))
            left_in_group[g] = total - sum(out[g].values())
        for _, g, k in sorted(fractions, key=lambda f: (-f[0], f[1], repr(f[2]))):
            if left_in_group[g] > 0 and left_in_bucket[k] > 0:
                out[g][k] += 1
                left_in_group[g] -= 1
                left_in_bucket[k] -= 1
        # Whatever the fractions did not settle: any bucket with room left.
        for g in sorted(group_vars):
            for k in sorted(left_in_bucket, key=repr):
                while left_in_group[g] > 0 and left_in_bucket[k] > 0:
                    out[g][k] += 1
                    left_in_group[g] -= 1
                    left_in_bucket[k] -= 1
        return out


class _Kinds:
    """Unplaced pods of one bucket by (group, option mask), as arrays for vectorised choice."""

    def __init__(self, pods: Sequence[tuple[GroupInfo, Pod, BoolArray]], requests: dict[int, IntArray],
                 bucket: BucketShape, rulebook: _Rulebook) -> None:
        index: dict[tuple[int, int], int] = {}
        self.keys: list[tuple[GroupInfo, BoolArray]] = []
        self.pods: list[list[tuple[GroupInfo, Pod, BoolArray]]] = []
        for p in pods:  # largest first: kind order and pod order within a kind follow it
            key = (p[0].index, id(p[2]))
            if key not in index:
                index[key] = len(self.keys)
                self.keys.append((p[0], p[2]))
                self.pods.append([])
            self.pods[index[key]].append(p)
        for members in self.pods:
            members.reverse()  # taken from the end
        dims = len(bucket.free[0]) if len(bucket.free) else 0
        self.req = np.array([requests[gi.index] for gi, _ in self.keys], dtype=np.int64).reshape(len(self.keys), dims)
        self.count = np.array([len(m) for m in self.pods], dtype=np.int64)
        self.mask = np.array([m for _, m in self.keys], dtype=np.bool_).reshape(len(self.keys), len(bucket.options))
        self.rules = [rulebook.by_group[gi.index] for gi, _ in self.keys]

    def left(self) -> bool:
        return bool(self.count.sum() > 0)

    def first(self) -> int:
        """The kind of the largest pod left."""
        return int(np.argmax(self.count > 0))

    def remaining_demand(self, mask: BoolArray | None = None) -> npt.NDArray[np.float64]:
        weights = self.count if mask is None else self.count * np.all(self.mask == mask, axis=1)
        return weights.astype(np.float64) @ self.req.astype(np.float64)

    def take(self, k: int) -> tuple[GroupInfo, Pod, BoolArray]:
        self.count[k] -= 1
        return self.pods[k].pop()


def _items(nodes: Iterable[SolvedNode]) -> list[tuple[GroupInfo, Pod, LaunchOption]]:
    return [(gi, pod, n.option) for n in nodes if n.option is not None for gi, pod in n.pods]


def state_for(problem: Problem, solution: Solution) -> PlacementState:
    """Replay a plan into a placement state (final counts for the unschedulable pods' reasons)."""
    state = PlacementState(problem)
    existing = {s.name: s for s in state.slots}
    for node in solution.nodes:
        if node.option is None:
            slot = existing[node.name]
            options = slot.options
        else:
            slot = state.new_slot(node.option.pool, [node.option])
            state.add_slot(slot)
            options = [node.option]
        for gi, pod in node.pods:
            state._commit(gi, pod, slot, options)
    return state


def repack(problem: Problem, solution: Solution) -> Solution:
    return Repacker(problem).repack(solution)


__all__ = ["BucketShape", "Repacker", "repack", "state_for"]
