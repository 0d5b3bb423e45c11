"""`explain --manifests` on disruption messages: what the consolidation simulation says of the nodes they name.

An Unconsolidatable or DisruptionBlocked event, or a `disrupting ...` log line, names a node; given a cluster
snapshot (nodes, bound pods, PDBs, NodePools: what `karpplan consolidate` reads), the simulation says whether
Karpenter would consolidate that node now (its steady state removes it) and, if not, why in Karpenter's words,
which pods block it (do-not-disrupt, a PDB that allows no eviction) and where its pods would go. Each item gets
one `NodeSimulation` per node it names; a node the snapshot lacks is said so in one line.

explain comes before consolidate in the data flow (tests/test_house.py's stages), so the simulation itself is
passed in (`Simulator`: node names and the SpotToSpotConsolidation gate in, one NodeSimulation per name out);
cli/explain_consolidation.py binds it to `karpplan.consolidate`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from karpplan.explain.dialects import disruption
from karpplan.explain.report import Explanation

MAX_DETAILED = 5  # nodes given the per-pod account (each is a simulation of its own)
BLOCKS = "blocks the node"  # consolidate/candidates.pod_blocker's wording of a pod that keeps its node
_SPOT_GATE_ON = "SpotToSpotConsolidation requires"  # only said when the gate is on


@dataclass(frozen=True)
class PodOutcome:
    pod: str
    workload: str
    outcome: str
    # When the pod keeps its node: the rule ("do-not-disrupt", "pdb", "multiple-pdbs") and the
    # PodDisruptionBudgets (namespace/name) involved.
    rule: str = ""
    budgets: tuple[str, ...] = ()

    def to_document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"name": self.pod, "workload": self.workload, "outcome": self.outcome}
        if self.rule:
            doc["blocking"] = {"rule": self.rule, "podDisruptionBudgets": list(self.budgets)}
        return doc


@dataclass(frozen=True)
class NodeSimulation:
    """The simulation's verdict on one node a disruption message names."""

    node: str
    in_snapshot: bool
    consolidatable: bool | None = None
    reason: str = ""  # Karpenter's wording: why it stays, or how it goes
    decision: str = ""  # what single-node consolidation would do now, or why not
    blocking: tuple[PodOutcome, ...] = ()
    pods: tuple[PodOutcome, ...] = ()
    detailed: bool = True  # False: only the verdict (past MAX_DETAILED nodes), no per-pod account

    def to_document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"node": self.node, "inSnapshot": self.in_snapshot}
        if self.in_snapshot:
            doc.update({"consolidatable": self.consolidatable, "reason": self.reason})
            if self.decision:
                doc["decision"] = self.decision
            doc["blockingPods"] = [p.to_document() for p in self.blocking]
            doc["pods"] = [p.to_document() for p in self.pods]
        else:
            doc["reason"] = self.reason
        return doc

    def lines(self, again: bool = False) -> list[str]:
        """The table's few lines under the item (`again`: the node's account is above, under another item)."""
        if not self.in_snapshot:
            return [f"simulation: node {self.node}: {self.reason}"]
        verdict = "Karpenter would consolidate it" if self.consolidatable else "Karpenter keeps it"
        out = [f"simulation: node {self.node}: {verdict}: {self.reason}" + (" (its pods: above)" if again else "")]
        if again:
            return out
        if self.decision and self.reason not in self.decision:
            out.append(f"  single-node consolidation now: {self.decision}")
        for p in self.blocking:
            out.append(f"  blocking pod {p.pod}: {p.outcome}")
        if not self.blocking:
            out.extend(f"  pod {p.pod}: {p.outcome}" for p in self.pods)
        return out


Simulator = Callable[[Sequence[str], bool], Mapping[str, "NodeSimulation"]]


def missing(name: str, nodes: int) -> NodeSimulation:
    """A node the snapshot does not hold (`nodes`: how many it holds)."""
    where = (f"not in the snapshot ({nodes} node(s) read)" if nodes else
             "not in the snapshot: it has no Node objects (pass `kubectl get nodes,pods,pdb -A -o yaml` and the "
             "NodePools)")
    return NodeSimulation(name, False, reason=where)


def not_simulated(name: str, why: str) -> NodeSimulation:
    return NodeSimulation(name, False, reason=f"not simulated: {why}")


def simulate_items(explanation: Explanation, simulate: Simulator) -> None:
    """Attach the simulation's verdict to every disruption item that names a node."""
    items = [i for i in explanation.item_list()
             if i.parsed.event in disruption.EVENTS and i.parsed.event != disruption.INTERRUPTED and i.nodes]
    if not items:
        return
    gate = any(_SPOT_GATE_ON in i.parsed.message for i in items)  # the event itself says the gate is on
    names = list(dict.fromkeys(n for i in items for n in i.nodes))
    results = simulate(names, gate)
    for item in items:
        item.simulations = [results.get(n) or not_simulated(n, "no verdict") for n in item.nodes]
    found = [r for r in results.values() if r.in_snapshot]
    if any(not r.detailed for r in found):
        explanation.notes.append(f"the consolidation simulation gave the per-pod account of the first "
                                 f"{MAX_DETAILED} of {len(found)} nodes named; `karpplan consolidate --node NAME` "
                                 "gives any other")
