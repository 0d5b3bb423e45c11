"""The cluster's cost after an optimal re-pack of every pod that may move, by the optimal engine (planner).

Nodes Karpenter may not disrupt at all (not a NodePool's, `do-not-disrupt`, a PDB that allows no eviction,
consolidation disabled, no price) stay as they are, pods and all, and are existing capacity; the
reschedulable pods of every other node are planned afresh from the NodePools, within a time limit. The
plan's bound is the lower bound. Karpenter's steady state is itself such a re-pack, so the optimum reported
is never above it.

The optimal engine honours its time limit in its search, not in building the problem and its warm start,
which at a thousand nodes take many times the limit. The re-pack therefore runs in a forked process given
`wall_limit(time_limit)` seconds in all; when it has not finished by then it is stopped and Karpenter's
steady state is quoted, with a note saying so (never a number the engine did not reach).
"""

from __future__ import annotations

import multiprocessing
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection

from karpplan.catalog.types import Catalog
from karpplan.consolidate.candidates import Candidate, is_reschedulable, new_candidate
from karpplan.consolidate.state import ClusterState
from karpplan.engines.effort import TimeBudget
from karpplan.model.inventory import Inventory
from karpplan.planner import PlanOptions, make_plan

_Outcome = tuple[float, float | None, str, int]  # hourly cost, lower bound, status, pods left unplaced


def wall_limit(time_limit: float) -> float:
    """Seconds the whole re-pack (problem build, warm start, search, plan) may take."""
    return max(10 * time_limit, 120.0)


@dataclass(frozen=True)
class Repack:
    cost: float
    lower_bound: float
    status: str  # the optimal engine's status, or "karpenter" when its steady state is as good
    note: str | None = None

    @property
    def gap(self) -> float:
        return 0.0 if self.cost <= 0 else max(self.cost - self.lower_bound, 0.0) / self.cost


def movable(state: ClusterState) -> list[Candidate]:
    """Nodes whose pods may be re-packed: candidates of a NodePool that consolidates, with a price."""
    limits = state.pdb_limits()
    out = []
    for node in state.nodes:
        c = new_candidate(node, state.pods_on.get(node.name, []), dict(state.pools), dict(state.disruption), limits)
        if (isinstance(c, Candidate) and c.disruption.enabled and node.price is not None and not c.pool.static
                and c.graceful_block is None):
            out.append(c)
    return out


def _plan(inventory: Inventory, catalog: Catalog, time_limit: float) -> _Outcome:
    plan = make_plan(inventory, catalog, PlanOptions(time_limit=time_limit), TimeBudget(time_limit))
    return plan.summary.hourly_cost, plan.summary.lower_bound, plan.summary.status, len(plan.unschedulable)


def _child(conn: Connection, inventory: Inventory, catalog: Catalog, time_limit: float) -> None:
    try:
        conn.send(_plan(inventory, catalog, time_limit))
    except BaseException as e:  # handed to the parent, which raises it
        conn.send(e)
    finally:
        conn.close()


def _bounded(inventory: Inventory, catalog: Catalog, time_limit: float, wall: float) -> _Outcome | None:
    """The plan's outcome, or None when it has not finished within `wall` seconds (the process stopped)."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    # Not daemonic: the plan inside starts processes of its own (its background bound), which a daemonic
    # process may not; the `finally` below kills and reaps it whatever happens.
    proc = ctx.Process(target=_child, args=(child, inventory, catalog, time_limit), daemon=False)
    proc.start()
    child.close()
    try:
        if not parent.poll(wall):
            return None
        got = parent.recv()
    except EOFError:  # the process died without an answer
        raise RuntimeError("the optimal re-pack's process ended without a result") from None
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        parent.close()
    if isinstance(got, BaseException):
        raise got
    return got  # type: ignore[no-any-return]


def optimal_repack(state: ClusterState, karpenter_cost: float, time_limit: float, wall: float | None = None) -> Repack:
    """`wall`: seconds the re-pack may take in all (`wall_limit` of the time limit by default)."""

    moving = movable(state)
    names = {c.name for c in moving}
    fixed = [n for n in state.nodes if n.name not in names]
    fixed_cost = sum(n.cost for n in fixed)
    pods = [p for n in fixed for p in state.pods_on.get(n.name, [])]
    pending = [replace(p, node_name=None) for c in moving for p in c.pods if is_reschedulable(p)]
    if not pending:
        return Repack(min(fixed_cost, karpenter_cost), min(fixed_cost, karpenter_cost), "optimal")
    inventory = replace(state.inventory, nodes=tuple(n.node for n in fixed), pods=tuple(pods + pending))
    wall = wall_limit(time_limit) if wall is None else wall
    outcome = _bounded(inventory, state.catalog, time_limit, wall)
    if outcome is None:
        note = (f"the optimal re-pack of {len(pending)} pod(s) did not finish within {wall:g}s (building its problem "
                f"and warm start at this size outlast its {time_limit:g}s time limit): Karpenter's steady state is "
                "quoted instead, and the cost of the nodes that cannot move as the bound")
        return Repack(karpenter_cost, min(karpenter_cost, fixed_cost), "karpenter", note)
    hourly, lower, status, unplaced = outcome
    if unplaced:
        note = (f"the optimal re-pack leaves {unplaced} pod(s) without a node (they fit nowhere but where they run, "
                "or their NodePools no longer offer it): Karpenter's steady state is quoted instead")
        return Repack(karpenter_cost, min(karpenter_cost, fixed_cost), "karpenter", note)
    cost = fixed_cost + hourly
    bound = fixed_cost + (lower if lower is not None else 0.0)
    if cost > karpenter_cost + 1e-9:
        return Repack(karpenter_cost, min(bound, karpenter_cost), "karpenter",
                      "the optimal engine found nothing cheaper than Karpenter's steady state within the time limit")
    return Repack(cost, min(bound, cost), status)
