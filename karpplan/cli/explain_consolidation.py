"""`explain --manifests`'s consolidation simulation: the nodes disruption messages name, run through
`karpplan.consolidate` (one steady state for them all, the per-pod account of the first few).

It binds explain/simulation.py's `Simulator` to consolidate's public entry points here, the first stage that
may import both (explain comes before consolidate in the data flow)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from karpplan.consolidate.explain import explain_node
from karpplan.consolidate.loop import steady_state
from karpplan.consolidate.run import ConsolidateOptions, read, verdicts
from karpplan.errors import InputError
from karpplan.explain.simulation import (
    BLOCKS,
    MAX_DETAILED,
    NodeSimulation,
    PodOutcome,
    Simulator,
    missing,
    not_simulated,
)


def consolidation_simulator(paths: Sequence[str], *, catalog: str | None, region: str | None,
                            zones: Sequence[str]) -> Simulator:
    def simulate(names: Sequence[str], spot_to_spot: bool) -> Mapping[str, NodeSimulation]:
        options = ConsolidateOptions(paths=tuple(paths), region=region, catalog=catalog, zones=tuple(zones),
                                     spot_to_spot=spot_to_spot)
        try:
            snapshot, state = read(options)
        except InputError as error:  # what the simulation needs beyond what explain already read
            said = str(error).splitlines()[0]
            return {n: not_simulated(n, said) for n in names}
        known = {n.name for n in snapshot.nodes}
        named = [n for n in names if n in known]
        final = {v.node.name: v for v in verdicts(steady_state(state, spot_to_spot), snapshot)}
        results: dict[str, NodeSimulation] = {}
        for name in names:
            if name not in known:
                results[name] = missing(name, len(snapshot.nodes))
                continue
            verdict = final[name]
            if name not in named[:MAX_DETAILED]:
                results[name] = NodeSimulation(name, True, verdict.consolidatable, verdict.reason, detailed=False)
                continue
            account = explain_node(options, name)
            pods = tuple(PodOutcome(f.pod, f.workload, f.outcome) for f in account.pods)
            reason = verdict.reason
            if not verdict.consolidatable and account.candidate != "yes":
                reason = account.candidate  # why it is no candidate at all, as Karpenter's event says it
            results[name] = NodeSimulation(name, True, verdict.consolidatable, reason, account.decision,
                                           tuple(p for p in pods if p.outcome.startswith(BLOCKS)), pods)
        return results
    return simulate
