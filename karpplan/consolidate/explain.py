"""`--node NAME`: one node in full, as the snapshot stands: can Karpenter disrupt it, where each of its pods
would go if single-node consolidation took it (a node left, a new NodeClaim), or what stops it; then what
the steady state makes of it."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from karpplan.consolidate.candidates import (
    Block,
    Candidate,
    consolidation_refusal,
    drained,
    new_candidate,
    pod_block,
)
from karpplan.consolidate.decide import Command, decide
from karpplan.consolidate.loop import SteadyState, steady_state
from karpplan.consolidate.pdb import Limits
from karpplan.consolidate.preferences import kept_off
from karpplan.consolidate.report import API_VERSION, METHOD_WORDS
from karpplan.consolidate.run import ConsolidateOptions, read, time_limit_of, verdicts
from karpplan.consolidate.simulate import simulate
from karpplan.consolidate.snapshot import Snapshot, is_daemon, is_mirror
from karpplan.consolidate.state import ClusterState, is_bare
from karpplan.errors import InputError, Origin
from karpplan.model.pods import Pod
from karpplan.plan import EXIT_CUT


@dataclass(frozen=True)
class PodFate:
    pod: str
    workload: str
    outcome: str
    block: Block | None = None  # what about the pod keeps the node (which rule, which PDBs)

    def to_document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"name": self.pod, "workload": self.workload, "outcome": self.outcome}
        if self.block is not None:
            doc["blocking"] = {"rule": self.block.rule, "podDisruptionBudgets": list(self.block.budgets)}
        return doc


@dataclass
class Explanation:
    node: str
    instance_type: str | None
    price: float
    candidate: str  # "yes", or why the node is no candidate
    pods: list[PodFate]
    decision: str  # what single-node consolidation would do now, or why not
    steady_state: str  # what the steady state makes of the node
    warnings: list[str] = field(default_factory=list)
    acts: bool = False  # the steady state has actions: Karpenter would act on the cluster
    complete: bool = True  # the steady state was reached within the time limit

    @property
    def exit_code(self) -> int:
        """As the report's (`Report.exit_code`): 0 nothing to consolidate, 1 Karpenter would act (on this node
        or another), 3 the time limit cut the simulation before its steady state."""
        if not self.complete:
            return EXIT_CUT
        return 1 if self.acts else 0

    def to_document(self) -> dict[str, Any]:
        return {"apiVersion": API_VERSION, "kind": "ConsolidationExplanation", "node": self.node,
                "instanceType": self.instance_type, "hourlyCost": round(self.price, 6),
                "candidate": self.candidate, "decision": self.decision, "steadyState": self.steady_state,
                "pods": [f.to_document() for f in self.pods]}


def _fate_without_move(pod: Pod, blocked: str | None) -> str:
    if is_daemon(pod):
        return "DaemonSet pod: needs no rescheduling, goes with the node"
    if is_mirror(pod):
        return "mirror (static) pod: needs no rescheduling, goes with the node"
    return blocked or "stays: the node is not disrupted"


def _fates(state: ClusterState, c: Candidate, limits: Limits) -> tuple[list[PodFate], Command | str]:
    outcome = simulate(state, [c])
    claims = {p.key: claim for claim in outcome.claims for p in claim.pods}
    errors = {p.key: why for p, why in outcome.errors}
    preferred = kept_off(state, c, outcome)
    fates: list[PodFate] = []
    for pod in c.pods:
        if pod.key in outcome.placed:
            where = f"would move to node {outcome.placed[pod.key]}"
        elif pod.key in claims:
            claim = claims[pod.key]
            types = list(dict.fromkeys(o.instance_type.name for o in claim.options))
            where = (f"would need a new NodeClaim of NodePool {claim.chosen.pool.name} (cheapest "
                     f"{claim.chosen.instance_type.name} ${claim.chosen.price:.4f}/h, {len(types)} type(s) fit)")
            zones = pod.template.volumes.allowed
            if zones is not None:
                where += f": its volumes hold it to {', '.join(sorted(zones))} ({pod.template.volumes.claims[0].subject})"
            if pod.key in preferred:
                node_left, kinds = preferred[pod.key]
                where += (f": its {', '.join(kinds)} keeps it off node {node_left}, which has room (Karpenter "
                          "honours preferences while a new node can, and relaxes them only for a pod that "
                          "cannot schedule at all)")
        elif pod.key in errors:
            where = f"cannot move: {errors[pod.key]}"
        else:
            where = _fate_without_move(pod, None)
        block = pod_block(pod, limits)
        if block is not None:
            where = f"{block.text}; were the node drained, it {where}" if where.startswith("would") else block.text
        if is_bare(pod) and (pod.key in outcome.placed or pod.key in claims):
            where += "; a bare pod: evicted, nothing recreates it"
        fates.append(PodFate(pod.key, pod.owner or pod.workload, where, block))
    return fates, decide("single", [c], outcome, False)


def _removed_by(result: SteadyState, name: str) -> int | None:
    """The number of the steady state's action that removes the node (None: it stays)."""
    return next((i for i, a in enumerate(result.actions, start=1) if any(n.name == name for n in a.nodes)), None)


def _where(result: SteadyState, target: str) -> str:
    """A destination as the report names it: a node of the snapshot, or a replacement (its type, zone)."""
    new = next((a.replacement for a in result.actions if a.replacement is not None and a.replacement.name == target),
               None)
    if new is None:
        return f"node {target}"
    return f"new {new.instance_type} {target} ({new.zone}, {new.capacity_type})"


def _moved_fates(result: SteadyState, number: int, name: str, pods: list[Pod]) -> list[PodFate]:
    """Each pod of a node the steady state removes, where its action (`number`) put it: the pods the node
    holds then (those bound now and those earlier actions moved onto it), in the steady state's own sequence."""
    action = result.actions[number - 1]
    arrived = _arrived(result, name, number - 1)
    evicted = {p.key for p in action.evicted}
    how = METHOD_WORDS.get(action.method, action.method)
    fates: list[PodFate] = []
    for pod in pods:
        if pod.key in evicted:
            where = f"evicted in action {number} ({how}): a bare pod: evicted, nothing recreates it"
        elif pod.key in action.moves:
            where = f"would move to {_where(result, action.moves[pod.key])} in action {number} ({how})"
            zones = pod.template.volumes.allowed
            if zones is not None:
                where += f": its volumes hold it to {', '.join(sorted(zones))} ({pod.template.volumes.claims[0].subject})"
        else:
            where = _fate_without_move(pod, None)
        fates.append(PodFate(pod.key, pod.owner or pod.workload, where))
    for key, (i, pod) in arrived.items():
        if key in action.moves:
            fates.append(PodFate(key, pod.owner or pod.workload, f"moved here in action {i}; would move to "
                                 f"{_where(result, action.moves[key])} in action {number} ({how})"))
    return fates


def _arrived(result: SteadyState, name: str, before: int) -> dict[str, tuple[int, Pod]]:
    """The pods the steady state's first `before` actions moved onto the node: key -> (action, pod)."""
    moved = {key: i for i, a in enumerate(result.actions[:before], start=1)
             for key, target in a.moves.items() if target == name}
    pods = {p.key: p for ps in result.state.pods_on.values() for p in ps}
    return {key: (i, pods[key]) for key, i in moved.items() if key in pods}


def _candidacy(state: ClusterState, name: str) -> str:
    """"yes", or why the node is no candidate for consolidation (in `state`), without simulating it."""
    node = state.node(name)
    c = new_candidate(node, state.pods_on.get(name, []), dict(state.pools), dict(state.disruption),
                      state.pdb_limits())
    return c if isinstance(c, str) else (consolidation_refusal(c, "underutilized") or "yes")


def _single_node(state: ClusterState, name: str) -> tuple[str, list[PodFate], str]:
    """The node's candidacy, its pods' fates and what single-node consolidation would do to it in `state`."""
    node = state.node(name)
    pods = state.pods_on.get(name, [])
    limits = state.pdb_limits()
    c = new_candidate(node, pods, dict(state.pools), dict(state.disruption), limits)
    pool = state.pools.get(node.pool or "")
    if isinstance(c, str) and pool is not None:
        fates, _ = _fates(state, drained(node, pods, pool, dict(state.disruption)), limits)
        return c, fates, f"not considered: {c}"
    if isinstance(c, str):
        return c, [PodFate(p.key, p.owner or p.workload, _fate_without_move(p, None)) for p in pods], \
            f"not considered: {c}"
    refusal = consolidation_refusal(c, "underutilized")
    candidate = refusal if refusal else "yes"
    if c.empty:
        fates = [PodFate(p.key, p.owner or p.workload, _fate_without_move(p, None)) for p in pods]
        return candidate, fates, "empty: Emptiness deletes it (budget permitting)" if refusal == "" else candidate
    fates, cmd = _fates(state, c, limits)
    if isinstance(cmd, str):
        decision = cmd
    elif cmd.replacement is not None:
        decision = (f"replace with {cmd.replacement.instance_type.name} ({cmd.replacement.zone}, "
                    f"{cmd.replacement.capacity_type}, ${cmd.replacement.price:.4f}/h), saving "
                    f"${cmd.savings:.4f}/h")
    else:
        decision = f"delete, saving ${cmd.savings:.4f}/h"
    return candidate, fates, f"{refusal} (if it could: {decision})" if refusal else decision


def explain_node(options: ConsolidateOptions, name: str, *, read_as: tuple[Snapshot, ClusterState] | None = None,
                 steady: SteadyState | None = None) -> Explanation:
    """The node in full, in the steady state's own sequence: a node it removes shows its pods where that action
    puts them; a node it keeps, what single-node consolidation would do to it once the other actions are done
    (the cluster it is judged in). `read_as`: the snapshot and its state as `read(options)` gives them, already
    read (not consolidated); `steady`: its steady state, already computed (`steady_state` of another
    `ClusterState.of` the snapshot). A caller explaining many nodes reads and consolidates once."""
    snapshot, state = read_as if read_as is not None else read(options)
    if not any(n.name == name for n in state.nodes):
        raise InputError.at(Origin("--node"), f"node {name!r} is not in the snapshot "
                            f"({len(state.nodes)} node(s) read)")
    result = steady if steady is not None else steady_state(ClusterState.of(snapshot, state.catalog),
                                                            options.spot_to_spot,
                                                            time_limit=time_limit_of(options, state))
    final = next((v.reason for v in verdicts(result, snapshot) if v.node.name == name), "")
    node = state.node(name)
    number = _removed_by(result, name)
    if number is not None:
        candidate = _candidacy(state, name)
        fates = _moved_fates(result, number, name, state.pods_on.get(name, []))
        decision = final
    else:
        candidate, fates, decision = _single_node(result.state, name)
        arrived = _arrived(result, name, len(result.actions))
        fates = [replace(f, outcome=f"moved here in action {arrived[f.pod][0]}; {f.outcome}")
                 if f.pod in arrived else f for f in fates]
        if result.actions:
            decision = f"after the steady state's {len(result.actions)} action(s): {decision}"
    return Explanation(name, node.instance_type, node.cost, candidate, fates, decision, final,
                       list(snapshot.warnings), acts=bool(result.actions), complete=result.complete)
