"""`explain --manifests`'s consolidation simulation: the nodes disruption messages name, run through
`karpplan.consolidate` (one steady state for them all, the per-pod account of the first few).

It binds explain/simulation.py's `Simulator` to consolidate's public entry points here, the first stage that
may import both (explain comes before consolidate in the data flow)."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

from karpplan.consolidate.explain import PodFate, explain_node
from karpplan.consolidate.loop import steady_state
from karpplan.consolidate.run import ConsolidateOptions, read, time_limit_of, verdicts
from karpplan.consolidate.snapshot import read_documents_or_fail
from karpplan.consolidate.state import ClusterState
from karpplan.errors import InputError
from karpplan.explain.simulation import (
    MAX_DETAILED,
    NodeSimulation,
    PodOutcome,
    Simulator,
    missing,
    not_simulated,
)


def _outcome(fate: PodFate) -> PodOutcome:
    if fate.block is None:
        return PodOutcome(fate.pod, fate.workload, fate.outcome)
    return PodOutcome(fate.pod, fate.workload, fate.outcome, fate.block.rule, fate.block.budgets)


def consolidation_simulator(paths: Sequence[str], *, catalog: str | None, region: str | None,
                            zones: Sequence[str], stdin: str | None = None,
                            allow_estimated_prices: bool = False) -> Simulator:
    """The simulation of the snapshot in `paths`: read once, consolidated once, each named node explained
    against that one reading and that one steady state. `stdin`: the text of `-` among `paths`, when the
    caller has read it already (stdin can be read only once)."""
    def simulate(names: Sequence[str], spot_to_spot: bool) -> Mapping[str, NodeSimulation]:
        options = ConsolidateOptions(paths=tuple(paths), region=region, catalog=catalog, zones=tuple(zones),
                                     spot_to_spot=spot_to_spot, allow_estimated_prices=allow_estimated_prices)
        try:
            documents = read_documents_or_fail(options.paths, options.max_file_size,
                                               stdin=None if stdin is None else io.StringIO(stdin))
            snapshot, state = read(options, documents)
        except InputError as error:  # what the simulation needs beyond what explain already read
            said = str(error).splitlines()[0]
            return {n: not_simulated(n, said) for n in names}
        known = {n.name for n in snapshot.nodes}
        named = [n for n in names if n in known]
        # `consolidate`'s limit: `auto`, fitted to the pods that may move (time_limit.py); `state` stays as read
        limit = time_limit_of(options, state)
        steady = steady_state(ClusterState.of(snapshot, state.catalog), spot_to_spot, time_limit=limit)
        cut = "" if steady.complete else (
            f" (the auto time limit of {limit:g}s ran out after {len(steady.actions)} consolidation command(s), "
            "before the steady state: Karpenter would go on)")
        final = {v.node.name: v for v in verdicts(steady, snapshot)}
        results: dict[str, NodeSimulation] = {}
        for name in names:
            if name not in known:
                results[name] = missing(name, len(snapshot.nodes))
                continue
            verdict = final[name]
            if name not in named[:MAX_DETAILED]:
                results[name] = NodeSimulation(name, True, verdict.consolidatable, verdict.reason + cut, detailed=False)
                continue
            account = explain_node(options, name, read_as=(snapshot, state), steady=steady)
            pods = tuple(_outcome(f) for f in account.pods)
            reason = verdict.reason
            if not verdict.consolidatable and account.candidate != "yes":
                reason = account.candidate  # why it is no candidate at all, as Karpenter's event says it
            reason += cut
            results[name] = NodeSimulation(name, True, verdict.consolidatable, reason, account.decision,
                                           tuple(p for p in pods if p.rule), pods)
        return results
    return simulate
