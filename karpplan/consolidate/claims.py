"""NodeClaims with no Node yet, as Karpenter's cluster state holds them (kubernetes-sigs/karpenter
pkg/controllers/state/statenode.go, cluster.go; pkg/controllers/disruption/helpers.go `SimulateScheduling`).

* A launched NodeClaim (`status.providerID` set) whose Node has not registered is a `StateNode` of its own: its
  name, labels and taints are the NodeClaim's (`Name`, `Labels`, `Taints`: startup and known ephemeral taints
  left out until it initializes), its capacity and allocatable the NodeClaim's `status` (`Capacity`,
  `Allocatable`). The disruption simulation schedules onto it like any node that is not deleting, but a
  candidate's pod placed there makes the command invalid ("would schedule against uninitialized nodeclaim/NAME").
  It is here a Node document made of the NodeClaim, tainted `karpenter.sh/unregistered` as Karpenter registers
  it, so the snapshot takes it as starting (`snapshot.starting`).
* A NodeClaim not launched yet (no `status.providerID`) leaves the cluster state unsynced (`Cluster.Synced`):
  the disruption controller does nothing until it launches. It cannot be simulated (no instance type yet).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from karpplan.inputs.loader import Document
from karpplan.inputs.origins import LineDict

UNREGISTERED_TAINT = "karpenter.sh/unregistered"


@dataclass(frozen=True, eq=False)
class ClaimNode(Document):
    """A Node document made of a launched NodeClaim whose Node has not registered."""


def _registered(documents: Sequence[Document]) -> tuple[set[str], set[str]]:
    """The Nodes' names and providerIDs."""
    names, providers = set(), set()
    for d in documents:
        if d.kind == "Node":
            names.add(d.name)
            spec = d.body.get("spec")
            if isinstance(spec, dict) and spec.get("providerID"):
                providers.add(str(spec["providerID"]))
    return names, providers


def _is_claim(doc: Document) -> bool:
    return doc.kind == "NodeClaim" and doc.group == "karpenter.sh" and bool(doc.name)


def _status(doc: Document) -> dict[str, object]:
    status = doc.body.get("status")
    return status if isinstance(status, dict) else {}


def _node_of(claim: Document) -> Document:
    """The Node document a launched NodeClaim stands for until its Node registers."""
    spec = claim.body.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    status = _status(claim)
    labels = claim.metadata.get("labels")
    taints = [t for t in spec.get("taints") or [] if isinstance(t, dict)] if isinstance(spec.get("taints"), list) \
        else []
    line = claim.origin.line
    node_status = LineDict({k: status[k] for k in ("capacity", "allocatable") if isinstance(status.get(k), dict)},
                           line=line)
    body = LineDict({
        "apiVersion": "v1", "kind": "Node",
        "metadata": LineDict({"name": claim.name, "labels": dict(labels) if isinstance(labels, dict) else {}},
                             line=line),
        "spec": LineDict({"providerID": status.get("providerID"),
                          "taints": [*taints, {"key": UNREGISTERED_TAINT, "effect": "NoExecute"}]}, line=line),
        "status": node_status,
    }, line=line)
    return ClaimNode(body, claim.origin, claim.source)


def claim_only_nodes(documents: Sequence[Document]) -> tuple[list[Document], list[str]]:
    """Node documents for the launched NodeClaims that have no Node, and a warning for each NodeClaim not
    launched yet."""
    names, providers = _registered(documents)
    made: list[Document] = []
    warnings: list[str] = []
    for d in documents:
        if not _is_claim(d):
            continue
        status = _status(d)
        provider = status.get("providerID")
        if status.get("nodeName") in names or (provider and str(provider) in providers):
            continue
        if not provider:
            warnings.append(f"{d.origin}: NodeClaim {d.name} is not launched yet (no status.providerID): Karpenter "
                            "disrupts nothing until it launches (its cluster state waits on sync); karpplan leaves "
                            "it out and simulates the rest")
            continue
        if d.name in names:
            continue  # a Node of that name is there already
        made.append(_node_of(d))
    return made, warnings


def claim_only_names(documents: Sequence[Document]) -> frozenset[str]:
    """The names of the Node documents `claim_only_nodes` made (they are NodeClaims)."""
    return frozenset(d.name for d in documents if isinstance(d, ClaimNode))
