"""The disruption methods, in the order the disruption controller runs them: Emptiness, Drift, then
multi-node and single-node consolidation (emptiness.go, drift.go, multinodeconsolidation.go,
singlenodeconsolidation.go). Each takes the pass's candidates and budgets and returns its first command, or
None; why a node was passed over is written to `verdicts` in Karpenter's wording.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from karpplan.consolidate.balanced import Evaluator, refusal_text
from karpplan.consolidate.budgets import DRIFTED, EMPTY, UNDERUTILIZED, blocking_budget_message
from karpplan.consolidate.candidates import Candidate, consolidation_refusal
from karpplan.consolidate.decide import Command, decide
from karpplan.consolidate.parallel import judged
from karpplan.consolidate.simulate import Outcome

MAX_PARALLEL = 100  # multi-node consolidation batches at most 100 candidates
Simulator = Callable[[Sequence[Candidate]], Outcome]


def by_ratio(candidates: Sequence[Candidate]) -> list[Candidate]:
    """`sortCandidates`: price over disruption cost, highest first (stable on the input order)."""
    return sorted(candidates, key=lambda c: -c.ratio)


def emptiness(candidates: Sequence[Candidate], budgets: dict[str, int], verdicts: dict[str, str]) -> Command | None:
    """Every empty candidate the budgets allow, in one command (deleted, nothing to move)."""
    chosen: list[Candidate] = []
    for c in by_ratio(candidates):
        if consolidation_refusal(c, "empty") is not None:
            continue
        if budgets.get(c.pool.name, 0) <= 0:
            verdicts[c.name] = blocking_budget_message(EMPTY)
            continue
        chosen.append(c)
        budgets[c.pool.name] -= 1
    return Command("emptiness", chosen) if chosen else None


def drift(candidates: Sequence[Candidate], budgets: dict[str, int], simulate: Simulator,
          verdicts: dict[str, str]) -> Command | None:
    """`Drift.ComputeCommands`: the drifted candidates (their NodeClaim's `Drifted` condition), longest drifted
    first, empty ones before the others; the first the budget allows whose pods all schedule is replaced by
    the NodeClaim its simulation launches (no price rule: drift replaces whatever it costs), or deleted when
    the nodes left take its pods. karpplan launches one replacement per command: a node whose pods need
    two or more new NodeClaims is said so and passed over."""
    drifted = sorted((c for c in candidates if c.node.drifted is not None and not c.pool.static),
                     key=lambda c: c.node.drifted or "")
    for c in [*(c for c in drifted if not c.moving), *(c for c in drifted if c.moving)]:
        if budgets.get(c.pool.name, 0) <= 0:
            verdicts[c.name] = blocking_budget_message(DRIFTED)
            continue
        outcome = simulate([c])
        if outcome.errors:
            verdicts[c.name] = f"Drifted, but not replaced: {outcome.error_text()}"
            continue
        if len(outcome.claims) > 1:
            verdicts[c.name] = (f"Drifted, but its pods need {len(outcome.claims)} new NodeClaims: karpplan simulates "
                                "one replacement per command")
            continue
        claim = outcome.claims[0] if outcome.claims else None
        return Command("drift", [c], outcome, None if claim is None else claim.chosen,
                       [] if claim is None else claim.options)
    return None


def underutilized(candidates: Sequence[Candidate], verdicts: dict[str, str]) -> list[Candidate]:
    """The candidates consolidation may consider (`consolidation.ShouldDisrupt`), by ratio."""
    kept = []
    for c in by_ratio(candidates):
        refusal = consolidation_refusal(c, UNDERUTILIZED)
        if refusal is None:
            kept.append(c)
        elif refusal:
            verdicts[c.name] = refusal
    return kept


def multi_node(candidates: Sequence[Candidate], budgets: dict[str, int], evaluator: Evaluator,
               simulate: Simulator, spot_to_spot: bool,
               remembered: Callable[[Sequence[Candidate]], str | None] | None = None,
               failed: Callable[[Sequence[Candidate], Outcome, str], None] | None = None) -> Command | None:
    """`firstNConsolidationOption`: binary search for the longest prefix one command can remove.
    `remembered(batch)`: the batch's failure when known not to have changed (not simulated again);
    `failed(batch, outcome, why)`: told of each batch whose simulation gave no command."""
    batchable: list[Candidate] = []
    left = dict(budgets)
    for c in candidates:
        if left.get(c.pool.name, 0) <= 0:
            continue
        batchable.append(c)
        left[c.pool.name] -= 1
    if len(batchable) < 2:
        return None
    low, high = 1, min(len(batchable), MAX_PARALLEL)
    if len(batchable) <= high:
        high = len(batchable) - 1
    best: Command | None = None
    while low <= high:
        mid = (low + high) // 2
        batch = batchable[: mid + 1]
        cmd: Command | str | None = remembered(batch) if remembered is not None else None
        if cmd is None:
            outcome = simulate(batch)
            cmd = decide("multi", list(batch), outcome, spot_to_spot)
            if isinstance(cmd, str) and failed is not None:
                failed(batch, outcome, cmd)
        if isinstance(cmd, Command) and evaluator.refusal(cmd) is None:
            best = cmd
            low = mid + 1
        else:
            high = mid - 1
    return best


def round_robin(candidates: Sequence[Candidate]) -> list[Candidate]:
    """`shuffleCandidates`: one candidate of each NodePool in turn (pools in name order)."""
    pools: dict[str, list[Candidate]] = {}
    for c in candidates:
        pools.setdefault(c.pool.name, []).append(c)
    names = sorted(pools)
    longest = max((len(v) for v in pools.values()), default=0)
    return [pools[n][i] for i in range(longest) for n in names if i < len(pools[n])]


def single_node(candidates: Sequence[Candidate], budgets: dict[str, int], evaluator: Evaluator,
                simulate: Simulator, spot_to_spot: bool, verdicts: dict[str, str],
                skip: dict[str, str] | None = None, workers: int = 1, nodes: int = 0,
                where: dict[str, dict[str, str | None]] | None = None) -> Command | None:
    """The first candidate one command can remove alone. `skip`: candidates known to fail (their reason),
    not simulated again in this pass. `workers` > 1: the candidates to simulate are judged two at a time
    (`parallel.py`; `nodes`, the cluster's size, says whether that pays), the same answer. `where`: filled
    with each simulated candidate that failed, where its simulation put each pod (`Outcome.where`)."""
    order: list[tuple[Candidate, str | None]] = []
    for c in round_robin(candidates):
        if budgets.get(c.pool.name, 0) <= 0:
            order.append((c, blocking_budget_message(UNDERUTILIZED)))
        elif skip is not None and c.name in skip:
            order.append((c, skip[c.name]))
        else:
            low = evaluator.can_pass(c)
            order.append((c, None if low is None else refusal_text(c.pool.name, low)))

    def judge(c: Candidate) -> Command | str:
        outcome = simulate([c])
        cmd = decide("single", [c], outcome, spot_to_spot)
        if isinstance(cmd, str):
            if where is not None:
                where[c.name] = outcome.where
            return cmd
        refusal = evaluator.refusal(cmd)
        return cmd if refusal is None else refusal

    notes = None if where is None else (lambda c: where.get(c.name), lambda c, w: where.__setitem__(c.name, w))
    results = judged([c for c, known in order if known is None], judge, workers, nodes, notes)
    try:
        for c, known in order:
            verdict = known if known is not None else next(results)
            if isinstance(verdict, str):
                verdicts[c.name] = verdict
                continue
            return verdict
        return None
    finally:
        results.close()
