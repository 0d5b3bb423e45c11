"""NodePool limits: `limits.cpu`, `limits.memory`, any other resource, and `limits.nodes`, counted over the
pool's existing nodes and the nodes the plan launches (Karpenter's limits check).

* Filter: none on existing nodes (limits bound what a pool launches). Karpenter's per-pod check that a
  pool has room left for one more node lives in `scheduling/candidates.py` (`check_pool`), and how limits count in `pool_headroom.py`.
* Model: per pool, the capacity of the new nodes of its launch options within what the limits leave
  after the existing nodes (`Problem.headroom`), and their count within `limits.nodes` (in the exact slot
  model: of the options its slots launch).
* Verifier: for every pool the plan launches nodes of, the capacity of its existing nodes (capacity, or
  allocatable when the node reports none) plus that of its new nodes stays within each limit, and the
  node count within `limits.nodes`.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from karpplan.constraints.base import ConstraintKind, CountsModel, SlotCountsModel, Violation
from karpplan.constraints.pool_headroom import NODES, full_limits, node_capacity, owned_by
from karpplan.model.resources import Resources

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

    from karpplan.constraints.view import SolvedPlan
    from karpplan.model.pods import PodTemplate
    from karpplan.scheduling.candidates import LaunchOption
    from karpplan.scheduling.existing_nodes import ExistingNodeInfo
    from karpplan.scheduling.problem import Problem


class PoolLimitsKind(ConstraintKind):
    name = "pool-limits"
    summary = "a NodePool's nodes stay within its limits (resources and limits.nodes), existing nodes included"
    messages = {
        "nodes_exhausted": "node limits have been exhausted for nodepool (NodePool={pool}); "
                           "limits.nodes allows {allowed} more and the plan launches {launched}",
        "exceeded": "all available instance types exceed limits for nodepool (NodePool={pool}); "
                    "limits left before this plan: {left}",
    }

    def filter_node(self, template: PodTemplate, info: ExistingNodeInfo) -> list[str]:
        """Not a filter on existing nodes: limits bound what a pool launches."""
        del template, info
        return []

    def add_to_model(self, model: CountsModel) -> None:
        """NodePool limits against capacity; `limits.nodes` exactly."""
        by_pool: dict[str, list[LaunchOption]] = defaultdict(list)
        for o in model.options:
            if o.index in model.n:
                by_pool[o.pool.name].append(o)
        for pool, opts in by_pool.items():
            remaining, nodes_left = model.problem.headroom[pool]
            if nodes_left is not None:
                model.model.add(sum(model.n[o.index] for o in opts) <= max(nodes_left, 0))
            if remaining is not None:
                for key, left in remaining.items():
                    model.model.add(sum(o.capacity.get(key) * model.n[o.index] for o in opts) <= max(left, 0))

    def add_to_slot_model(self, model: SlotCountsModel) -> None:
        """The same limits over the options the slots launch."""
        by_pool: dict[str, list[tuple[LaunchOption, cp_model.IntVar]]] = defaultdict(list)
        for (_, k), z in model.z.items():
            option = model.problem.options[k]
            by_pool[option.pool.name].append((option, z))
        for pool, chosen in by_pool.items():
            remaining, nodes_left = model.problem.headroom[pool]
            if nodes_left is not None:
                model.model.add(sum(z for _, z in chosen) <= max(nodes_left, 0))
            if remaining is not None:
                for key, left in remaining.items():
                    model.model.add(sum(o.capacity.get(key) * z for o, z in chosen) <= max(left, 0))

    def violations(self, problem: Problem, solution: SolvedPlan) -> list[Violation]:
        out: list[Violation] = []
        for pool in problem.pools:
            launched = [n.option for n in solution.new_nodes if n.option is not None and n.option.pool.name == pool.name]
            limits = full_limits(pool)
            if not launched or not limits.limited:
                continue
            owned = owned_by(pool, (info.node for info in problem.existing))
            used = Resources()
            for capacity in [*(node_capacity(node) for node in owned), *(o.capacity for o in launched)]:
                used = used + capacity
            count = len(owned) + len(launched)
            for key, over in limits.excess(used, count).items():
                if over <= 0:
                    continue
                if key == NODES:
                    text = f"NodePool {pool.name}: {count} nodes over limits.nodes {limits.nodes}"
                else:
                    text = f"NodePool {pool.name}: {key} {used.get(key)} over limits.{key} {used.get(key) - over}"
                out.append(Violation(self.name, "", pool.name, text))
        return out


POOL_LIMITS = PoolLimitsKind()
