"""The steady state: disruption passes until none finds a command.

Each pass builds the candidates of the cluster as it now is, the budgets of each NodePool (per reason:
Emptiness counts against `Empty`, the others against `Underutilized`), and runs Emptiness, multi-node and
single-node consolidation; the first command found is executed (its pods bound where the simulation put
them, its replacement launched) and the next pass starts. Karpenter re-evaluates every candidate on every
pass; to stay fast on large clusters a single-node failure is remembered while commands keep coming, and
the last pass is always a full one with nothing remembered: the steady state is a state where no method
finds a command.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from karpplan.consolidate.balanced import Evaluator, pool_totals
from karpplan.consolidate.budgets import BALANCED, BUDGET_PREFIX, EMPTY, UNDERUTILIZED
from karpplan.consolidate.candidates import Candidate, new_candidate
from karpplan.consolidate.decide import Command
from karpplan.consolidate.methods import emptiness, multi_node, single_node, underutilized
from karpplan.consolidate.simulate import Outcome, simulate
from karpplan.consolidate.snapshot import SimNode
from karpplan.consolidate.state import ClusterState
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


def candidates_of(state: ClusterState, verdicts: dict[str, str]) -> list[Candidate]:
    limits = state.pdb_limits()
    out: list[Candidate] = []
    pools = dict(state.pools)
    disruption = dict(state.disruption)
    for node in state.nodes:
        c = new_candidate(node, state.pods_on.get(node.name, []), pools, disruption, limits)
        if isinstance(c, str):
            verdicts[node.name] = c
        else:
            out.append(c)
    return out


def _budgets(state: ClusterState, reason: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for name in state.pools:
        settings = state.disruption.get(name)
        total = state.pool_size(name)
        out[name] = settings.allowed(total, reason) if settings is not None else -(-total // 10)
    return out


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


def one_pass(state: ClusterState, spot_to_spot: bool, verdicts: dict[str, str],
             remembered: dict[str, str], full: bool, try_multi: bool) -> tuple[Command | None, bool]:
    """The first command of a pass (Emptiness, multi-node, single-node), or None; and whether multi-node
    consolidation was tried and found nothing."""
    candidates = candidates_of(state, verdicts)
    cmd = emptiness(candidates, _budgets(state, EMPTY), verdicts)
    if cmd is not None:
        return cmd, False
    considered = underutilized(candidates, verdicts)
    if not considered:
        return None, False
    evaluator = _evaluator(state, considered)
    budgets = _budgets(state, UNDERUTILIZED)

    def sim(batch: Sequence[Candidate]) -> Outcome:
        return simulate(state, batch)

    if try_multi:
        cmd = multi_node(considered, budgets, evaluator, sim, spot_to_spot)
        if cmd is not None:
            return cmd, False
    single_verdicts: dict[str, str] = {}
    cmd = single_node(considered, budgets, evaluator, sim, spot_to_spot, single_verdicts,
                      None if full else remembered)
    verdicts.update(single_verdicts)
    remembered.update({k: v for k, v in single_verdicts.items() if not v.startswith(BUDGET_PREFIX)})
    return cmd, try_multi


def steady_state(state: ClusterState, spot_to_spot: bool = False, max_passes: int | None = None) -> SteadyState:
    """Consolidate until no method finds a command (or `max_passes`)."""
    result = SteadyState(state)
    limit = max_passes if max_passes is not None else 3 * len(state.nodes) + 10
    remembered: dict[str, str] = {}
    full = True  # the first pass, and the last, remember nothing
    multi_works = True
    while result.passes < limit:
        result.passes += 1
        verdicts: dict[str, str] = {}
        cmd, multi_failed = one_pass(state, spot_to_spot, verdicts, remembered, full, full or multi_works)
        if cmd is None:
            result.verdicts = verdicts
            if full:
                break
            full = True
            remembered.clear()
            continue
        multi_works = not multi_failed
        full = False
        for c in cmd.candidates:
            remembered.pop(c.name, None)
        result.actions.append(_execute(state, cmd))
    return result
