"""The steady state: disruption passes until none finds a command.

Each pass builds the candidates of the cluster as it now is, the budgets of each NodePool (per reason:
Emptiness counts against `Empty`, Drift against `Drifted`, the others against `Underutilized`), and runs
Emptiness, Drift (nodes whose NodeClaim the snapshot shows `Drifted`), multi-node and single-node consolidation; the first command found is executed (its pods bound where the simulation put
them, its replacement launched) and the next pass starts, until a pass finds nothing: the steady state.
What cannot have changed since an earlier pass is not simulated again (`Memory`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from karpplan.consolidate.balanced import Evaluator, pool_totals
from karpplan.consolidate.budgets import (
    BALANCED,
    DRIFTED,
    EMPTY,
    UNDERUTILIZED,
    blocked_reason,
    budget_taken_message,
)
from karpplan.consolidate.candidates import Candidate, new_candidate
from karpplan.consolidate.deadline import Deadline, OutOfTime
from karpplan.consolidate.decide import Command
from karpplan.consolidate.memory import Memory
from karpplan.consolidate.methods import drift, emptiness, multi_node, single_node, underutilized
from karpplan.consolidate.simulate import Outcome, simulate
from karpplan.consolidate.snapshot import SimNode
from karpplan.consolidate.state import ClusterState
from karpplan.engines.effort import available_cores
from karpplan.model.pods import Pod


@dataclass
class Action:
    """An executed command."""

    method: str
    decision: str
    nodes: list[SimNode]
    replacement: SimNode | None
    savings: float
    options: list[str]  # instance types the replacement could launch as (cheapest first)
    moves: dict[str, str]  # pod key -> where it went
    evicted: list[Pod]  # bare pods evicted for good


@dataclass
class SteadyState:
    state: ClusterState
    actions: list[Action] = field(default_factory=list)
    verdicts: dict[str, str] = field(default_factory=dict)  # node name -> why it stays
    passes: int = 0
    complete: bool = True  # False: stopped by the pass or time limit before a pass found nothing


def candidates_of(state: ClusterState, verdicts: dict[str, str]) -> list[Candidate]:
    """Every node's candidacy, kept per node until its pods or the PDBs' allowed disruptions change."""
    limits = state.pdb_limits()
    allowed = tuple(sorted(limits.allowed.items()))
    out: list[Candidate] = []
    pools = dict(state.pools)
    disruption = dict(state.disruption)
    known = state.candidacy
    for node in state.nodes:
        key = (state.version(node.name), allowed)
        found = known.get(node.name)
        if found is not None and found[0] == key:
            c = found[1]
        else:
            c = new_candidate(node, state.pods_on.get(node.name, []), pools, disruption, limits)
            known[node.name] = (key, c)
        if isinstance(c, str):
            verdicts[node.name] = c
        else:
            out.append(c)
    return out


def _allowed(state: ClusterState, pool: str, reason: str) -> int:
    """The pool's budget for `reason` at the state's time, before the nodes already disrupting are counted."""
    settings = state.disruption.get(pool)
    total = state.pool_size(pool)
    return settings.allowed(total, reason, state.now) if settings is not None else -(-total // 10)


def _budgets(state: ClusterState, reason: str) -> dict[str, int]:
    """`BuildDisruptionBudgetMapping`: per NodePool, what its budget allows for `reason` less the nodes already
    being disrupted or NotReady, never below 0."""
    return {name: max(0, _allowed(state, name, reason) - len(state.disrupting(name))) for name in state.pools}


def _say_who_uses_the_budget(state: ClusterState, verdicts: dict[str, str]) -> None:
    """A node kept by a budget that allows disruptions, all of them taken by nodes already disrupting or NotReady:
    Karpenter publishes no event then; the reason says which nodes use the budget up."""
    pools = {n.name: n.pool for n in state.nodes}
    for name, text in list(verdicts.items()):
        reason = blocked_reason(text)
        pool = pools.get(name)
        if reason is None or pool is None:
            continue
        allowed = _allowed(state, pool, reason)
        taken = state.disrupting(pool)
        if allowed > 0 and taken:
            verdicts[name] = budget_taken_message(reason, pool, allowed, taken)


def _evaluator(state: ClusterState, candidates: Sequence[Candidate]) -> Evaluator:
    balanced = [c for c in candidates if c.disruption.policy == BALANCED]
    if not balanced:
        return Evaluator({})
    names = {c.name for c in candidates}
    costs: dict[str, float] = {}
    others: dict[str, float] = {}
    for n in state.nodes:
        if n.pool is None:
            continue
        costs[n.pool] = costs.get(n.pool, 0.0) + n.cost
        if n.name not in names:
            others[n.pool] = others.get(n.pool, 0.0) + 1.0 + len(state.pods_on.get(n.name, []))
    return Evaluator(pool_totals(balanced, others, costs))


def _execute(state: ClusterState, cmd: Command) -> Action:
    outcome = cmd.outcome or Outcome([])
    placed = dict(outcome.placed)
    replacement: SimNode | None = None
    if cmd.replacement is not None:
        replacement = state.launch(cmd.replacement)
        for claim in outcome.claims:
            for pod in claim.pods:
                placed.setdefault(pod.key, replacement.name)
    names = {c.name for c in cmd.candidates}
    evicted = state.remove(names, placed, outcome.moving)
    types = list(dict.fromkeys(o.instance_type.name for o in cmd.options))
    return Action(cmd.method, cmd.decision, [c.node for c in cmd.candidates], replacement, cmd.savings, types,
                  {k: v for k, v in placed.items() if k in {p.key for p in outcome.moving}}, evicted)


def one_pass(state: ClusterState, spot_to_spot: bool, verdicts: dict[str, str], memory: Memory,
             deadline: Deadline | None = None, workers: int = 1) -> Command | None:
    """The first command of a pass (Emptiness, multi-node, single-node), or None. OutOfTime when `deadline`
    leaves no time for the next simulation. `workers`: processes single-node consolidation may use."""
    candidates = candidates_of(state, verdicts)
    cmd = emptiness(candidates, _budgets(state, EMPTY), verdicts)
    if cmd is not None:
        return cmd

    def sim(batch: Sequence[Candidate], consolidation: bool = True) -> Outcome:
        def run() -> Outcome:
            return simulate(state, batch) if consolidation else simulate(state, batch, consolidation=False)
        return run() if deadline is None else deadline.run(run)

    if any(c.node.drifted is not None for c in candidates):  # drift's simulation may fill nodes in consolidateAfter
        cmd = drift(candidates, _budgets(state, DRIFTED), lambda b: sim(b, False), verdicts)
        if cmd is not None:
            return cmd
    considered = underutilized(candidates, verdicts)
    if not considered:
        return None
    evaluator = _evaluator(state, considered)
    budgets = _budgets(state, UNDERUTILIZED)

    if not memory.multi_known(evaluator.totals):
        memory.batches_asked()
        cmd = multi_node(considered, budgets, evaluator, sim, spot_to_spot, lambda b: memory.batch_known(state, b),
                         lambda b, outcome, why: memory.batch_failed(state, b, outcome, why))
        if cmd is not None:
            return cmd
        memory.multi_found_nothing(evaluator.totals)
    single_verdicts: dict[str, str] = {}
    where: dict[str, dict[str, str | None]] = {}
    cmd = single_node(considered, budgets, evaluator, sim, spot_to_spot, single_verdicts,
                      memory.known(state, evaluator.totals), workers, len(state.nodes), where)
    verdicts.update(single_verdicts)
    memory.learn(state, single_verdicts, where, evaluator.totals)
    return cmd


def steady_state(state: ClusterState, spot_to_spot: bool = False, max_passes: int | None = None,
                 time_limit: float | None = None, remember: bool = True, first_simulation: float = 0.0,
                 workers: int | None = None, exact_reasons: bool = True) -> SteadyState:
    """Consolidate until no method finds a command (or `max_passes`, or `time_limit` seconds, checked before
    every simulation: `deadline.py`).
    `remember=False`: every pass simulates every candidate again (`Memory`), slower, the same answer.
    `exact_reasons`: the last pass simulates again the candidates whose remembered failure a simulation now
    might word otherwise (`Failure.worded_as_now`), so each kept node's reason is Karpenter's now (`plan`
    quotes none).
    `first_simulation`: the seconds the first simulation is expected to take (0: unknown).
    `workers`: processes single-node consolidation may use (`parallel.py`), the same answer; by default every
    core this process may run on (`effort.available_cores()`): on a quiet 2-core machine the 1,043-node bench
    snapshot's steady state takes 55 s instead of 79 (docs/consolidate.md, 2026-11-27)."""
    workers = available_cores() if workers is None else workers
    result = SteadyState(state)
    limit = max_passes if max_passes is not None else 3 * len(state.nodes) + 10
    deadline = None if time_limit is None else Deadline.after(time_limit, first_simulation)
    memory = Memory(enabled=remember)
    while True:
        if result.passes >= limit or (deadline is not None and deadline.passed()):
            result.complete = False
            break
        result.passes += 1
        verdicts: dict[str, str] = {}
        try:
            cmd = one_pass(state, spot_to_spot, verdicts, memory, deadline, workers)
            if cmd is None and exact_reasons and memory.forget_inexact(state, verdicts):
                verdicts = {}
                cmd = one_pass(state, spot_to_spot, verdicts, memory, deadline, workers)
        except OutOfTime:  # checked before each simulation, so a pass does not run past the limit
            result.complete = False
            break
        if cmd is None:
            _say_who_uses_the_budget(state, verdicts)
            result.verdicts = verdicts
            break
        action = _execute(state, cmd)
        result.actions.append(action)
        if action.replacement is not None:
            memory.launched(state, action.replacement)
    return result
