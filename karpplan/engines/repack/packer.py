"""The re-packer: a plan's new nodes by bucket, each bucket re-packed (the cheapest of its packings kept,
or its old nodes when they are cheaper), pods traded between zones when that is cheaper, pool limits kept."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from karpplan.engines.effort import WorkClock
from karpplan.engines.repack.bins import Bin, BinFiller, MaskedPod
from karpplan.engines.repack.bucket import BoolArray, BucketKey, BucketShape, PlacedPod, placed_pods
from karpplan.engines.repack.grown import pack_grown
from karpplan.engines.repack.rules import Rulebook
from karpplan.engines.repack.slack import pack_slack_then_bulk
from karpplan.engines.repack.zone_mix import ZoneMix
from karpplan.engines.result import Solution, SolvedNode, node_name
from karpplan.scheduling.candidates import LaunchOption, option_table
from karpplan.scheduling.option_masks import OptionMasks
from karpplan.scheduling.problem import GroupInfo, Problem
from karpplan.scheduling.topology import SpreadRule

# Owner nodes are grown for this share of an even split of the other pods (each share is a packing of
# its own, the cheapest kept): all of it keeps pods on the nodes paid for anyway; half of it leaves the
# rest to bulk nodes of the most cost-efficient option, which on AWS are large ones (kubelet's reserve
# shrinks relative to the instance's size), about 3% cheaper on the benchmark's aws rows.
GROWN_SHARES = (1.0, 0.5)


class Repacker:
    """Re-packs plans of one problem (see the package's docstring); kept across plans, buckets computed once."""

    def __init__(self, problem: Problem, clock: WorkClock | None = None) -> None:
        self.problem = problem
        # The zone-mix LP is solved to optimality; its time limit is a guard that, when it stops the LP,
        # tells the optimiser's work clock (the plan may then differ between runs).
        self.clock = clock
        self.rules = Rulebook(problem)
        self.dims = sorted({name for g in problem.groups for name in g.template.requests})
        self.requests = {g.index: np.array([g.template.requests.get(d) for d in self.dims], dtype=np.int64)
                         for g in problem.groups}
        self._filler = BinFiller(self.rules, self.requests, self.dims)
        self._zone_mix = ZoneMix(problem, self.rules, self.requests, len(self.dims), clock)
        self._keys = problem.topology.domain_keys()
        self._policy_rules = self._instance_sensitive_rules()
        self._interned: dict[bytes, BoolArray] = {}  # see pod_mask
        self._option_masks: dict[frozenset[int], BoolArray] = {}  # see option_mask
        # Which of those rules count each option as a domain, as one row of bits: rules sharing an
        # eligibility mask (a thousand Deployments, a few nodeSelectors) are one column, read off the masks
        # the placement state uses instead of testing every rule on every option.
        # Columns in order of first appearance among the rules, so the keys sort as the per-rule tuples did.
        self._eligibility: dict[int, tuple[bool, ...]] = {}
        self._policy_reps: list[SpreadRule] = []  # one rule per distinct eligibility, in that order
        if self._policy_rules:
            table = option_table(problem.options)
            masks = OptionMasks(table)
            first: dict[int, SpreadRule] = {}
            for r in self._policy_rules:
                first.setdefault(masks.rule_mask_id(r), r)
            self._policy_reps = list(first.values())
            matrix = np.stack([masks.rule_masks[i] for i in first], axis=1)
            packed = np.packbits(matrix, axis=1)
            rows = table.rows_of([o.index for o in problem.options]).tolist()
            interned: dict[bytes, tuple[bool, ...]] = {}
            for o, row in zip(problem.options, rows, strict=True):
                bits = packed[row].tobytes()
                value = interned.get(bits)
                if value is None:
                    value = interned[bits] = tuple(bool(v) for v in matrix[row])
                self._eligibility[o.index] = value
        # Every option's bucket, once: `repack` runs on several plans of the same problem.
        self._options_by_bucket: dict[BucketKey, list[LaunchOption]] = defaultdict(list)
        self._bucket_of: dict[int, BucketKey] = {}
        for o in problem.options:
            key = self.bucket_key(o)
            self._bucket_of[o.index] = key
            self._options_by_bucket[key].append(o)

    @property
    def filler(self) -> BinFiller:
        """What puts pods into nodes under every per-node rule (shared with the LP rounding)."""
        return self._filler

    @property
    def instance_sensitive(self) -> bool:
        """Whether some zone spread's domains depend on the instance type (its node affinity or taint policy)."""
        return bool(self._policy_rules)

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

    def bucket_of(self, option: LaunchOption) -> BucketKey:
        return self._bucket_of[option.index]

    def shape(self, key: BucketKey) -> BucketShape:
        """The bucket's options as arrays (built on each call: callers keep it)."""
        return BucketShape(self._options_by_bucket[key], self.dims)

    def bucket_key(self, option: LaunchOption) -> BucketKey:
        eligibility = self._eligibility.get(option.index)
        if eligibility is None:
            eligibility = tuple(r.option_counts(option) for r in self._policy_reps)
        return (option.pool.name, option.zone, option.capacity_type,
                tuple(option.labels.get(k) for k in self._keys), eligibility)

    # ------------------------------------------------------------------------------------ entry point
    def repack(self, solution: Solution) -> Solution:
        buckets: dict[BucketKey, list[SolvedNode]] = defaultdict(list)
        kept: list[SolvedNode] = []
        for node in solution.nodes:
            if node.option is None:
                kept.append(node)
                continue
            if any(self.rules.by_group[group_info.index].pinned for group_info, _ in node.pods):
                kept.append(node)
            else:
                buckets[self._bucket_of[node.option.index]].append(node)
        shapes = {key: self.shape(key) for key in buckets}
        chosen: dict[BucketKey, list[SolvedNode]] = {}
        began = time.monotonic()
        # The first pass is most of what the optimiser gains over Karpenter, but it keeps the time limit too:
        # once the wall guard has passed (a cut, `WorkClock.past_wall`), the buckets left keep their nodes,
        # unless one breaks a hostname rule by its final counts (Karpenter's can): a plan must stay valid.
        for key, nodes in buckets.items():
            if self._past_wall() and all(self.valid(n) for n in nodes):
                chosen[key] = nodes
                continue
            packed = self.pack_bucket(shapes[key], placed_pods(nodes))
            old = sum(n.price for n in nodes)
            new = sum(n.price for n in packed) if packed is not None else old
            better = packed is not None and (new < old - 1e-9 or (new <= old + 1e-9 and len(packed) < len(nodes))
                                             or not all(self.valid(n) for n in nodes))
            chosen[key] = packed if better and packed is not None else nodes
        # Second try: first move interchangeable pods between the pool's zones so each zone's mix of
        # CPU-heavy and memory-heavy pods matches its nodes' shape; kept when the whole plan is cheaper.
        # It costs about what the first pass did; skipped when the wall guard would fall first (a cut).
        first_pass = time.monotonic() - began
        if self.clock is not None and (self.clock.cut or self.clock.wall_left() < 1.5 * first_pass):
            self.clock.cut = True
            moved = None
        else:
            moved = self._zone_mix.reassigned(buckets, shapes)
        if moved is not None:
            alternative: dict[BucketKey, list[SolvedNode]] = {}
            for key, items in moved.items():
                packed = self.pack_bucket(shapes[key], items) if items and not self._past_wall() else None if items else []
                if packed is None:  # (or the guard passed: the first pass's plan stands)
                    break
                alternative[key] = packed
            else:
                total = sum(n.price for ns in chosen.values() for n in ns)
                if sum(n.price for ns in alternative.values() for n in ns) < total - 1e-9:
                    chosen = alternative
        self._respect_limits(buckets, chosen, kept)
        nodes = list(kept) + [n for key in buckets for n in chosen[key]]
        return self.renamed(solution, nodes)

    def _past_wall(self) -> bool:
        """Has the clock's wall guard passed (remembered as a cut)? Never without a clock."""
        return self.clock is not None and self.clock.past_wall()

    def _respect_limits(self, original: dict[BucketKey, list[SolvedNode]],
                        chosen: dict[BucketKey, list[SolvedNode]], kept: list[SolvedNode]) -> None:
        """Keep a pool's original nodes when the re-packed ones would overrun a limit the original kept."""
        pools = {o.pool.name for nodes in original.values() for n in nodes if (o := n.option) is not None}
        for pool in pools:
            headroom = self.problem.headroom[pool]
            if not headroom.limited:
                continue

            def usage(which: dict[BucketKey, list[SolvedNode]], pool: str = pool) -> tuple[int, dict[str, int]]:
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
            # Past a limit, and further past it than the original plan went.
            before = headroom.excess(old_totals, old_count)
            over = any(v > before[k] for k, v in headroom.excess(totals, count).items())
            if over:
                for key in chosen:
                    if key[0] == pool:
                        chosen[key] = original[key]

    def valid(self, node: SolvedNode) -> bool:
        """Does the node keep every hostname rule with its final counts (Karpenter's greedy may not)?"""
        trial = Bin(np.zeros(len(self.dims), dtype=np.int64), np.ones(0, dtype=np.bool_))
        for group_info, _ in node.pods:
            rules = self.rules.by_group[group_info.index]
            if not self.rules.accepts(trial, rules):
                return False
            self.rules.record(trial, rules)
        return True

    # ------------------------------------------------------------------------------------ packing
    def pod_mask(self, bucket: BucketShape, group_info: GroupInfo, origin: LaunchOption,
                  cache: dict[tuple[int, tuple[int, ...]], BoolArray]) -> BoolArray:
        """Options of the bucket this pod may take: its group's, and every preference its old node met."""
        met_at = tuple(i for i, p in enumerate(group_info.template.affinity.preferred) if p.term.matches(origin.labels, ""))
        cache_key = (group_info.index, met_at)
        if cache_key in cache:
            return cache[cache_key]
        met = [group_info.template.affinity.preferred[i].term for i in met_at]
        mask = self.option_mask(group_info.option_ids)[bucket.indices]
        if met:
            mask = mask & np.array([all(t.matches(o.labels, "") for t in met) for o in bucket.options],
                                   dtype=np.bool_)
        # Pods with equal masks share one array, so bulk packing can pool them.
        mask = self._interned.setdefault(mask.tobytes(), mask)
        cache[cache_key] = mask
        return mask

    def option_mask(self, option_ids: frozenset[int]) -> BoolArray:
        """The options (by `LaunchOption.index`) in the set, as a mask; groups share a few sets."""
        mask = self._option_masks.get(option_ids)
        if mask is None:
            mask = np.zeros(len(self.problem.options), dtype=np.bool_)
            mask[list(option_ids)] = True
            self._option_masks[option_ids] = mask
        return mask

    def pack_bucket(self, bucket: BucketShape, items: Sequence[PlacedPod]) -> list[SolvedNode] | None:
        """The cheapest of the bucket's packings (slack then bulk, grown owners per share; all keep every per-node rule)."""
        cache: dict[tuple[int, tuple[int, ...]], BoolArray] = {}
        self._interned = {}  # masks are interned per bucket shape
        pods: list[MaskedPod] = [(group_info, pod, self.pod_mask(bucket, group_info, origin, cache)) for group_info, pod, origin in items]
        packings = [pack_slack_then_bulk(self._filler, bucket, pods)]
        owners: tuple[list[Bin], list[MaskedPod]] | None = None  # the grown packings' owner nodes, placed once
        for share in GROWN_SHARES:  # the first packing is kept however late; the others only before the guard
            if self._past_wall():
                break
            owners = owners or self._filler.owner_bins(bucket, pods, spread=True)
            packings.append(pack_grown(self._filler, bucket, pods, share, owners))
        plans = [p for p in packings if p is not None]
        if not plans:
            return None
        return min(plans, key=lambda nodes: (round(sum(n.price for n in nodes), 9), len(nodes)))

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


def repack(problem: Problem, solution: Solution) -> Solution:
    return Repacker(problem).repack(solution)
