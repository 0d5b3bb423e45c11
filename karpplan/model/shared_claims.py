"""Replicas that mount one ReadWriteOnce (or ReadWriteOncePod) claim: they can only run on one node.

A ReadWriteOnce volume attaches to one node at a time (an EBS volume to one instance): the kube-scheduler
does not keep a workload's replicas together for it, so replicas placed on another node stay in
ContainerCreating with a Multi-Attach error. A ReadWriteOncePod claim is enforced by the scheduler: one pod
uses it, the others stay pending. Either way spreading such replicas is the wrong advice, and a plan that puts
them on several nodes describes a cluster that does not work: the plan and lint say so, once per workload.
Found by `build_volumes.shared_claim` from the claims all replicas mount.
"""

from __future__ import annotations

from dataclasses import dataclass

from karpplan.errors import Origin
from karpplan.model.storage import EBS

RWO = "ReadWriteOnce"
RWOP = "ReadWriteOncePod"
SHARED_MODES = ("ReadWriteMany", "ReadOnlyMany")
FIX = "run 1 replica, use a StatefulSet with volumeClaimTemplates, or a ReadWriteMany volume (EFS)"


@dataclass(frozen=True)
class SharedClaim:
    """A workload whose replicas all mount one single-node claim."""

    workload: str  # Kind/name
    origin: Origin  # the workload document
    replicas: int
    claim: str
    mode: str  # RWO or RWOP
    backend: str  # EBS, EFS, ... of the claim's class ("" unknown)

    @property
    def message(self) -> str:
        return f"{self.workload}: {self.detail}; {FIX}"

    @property
    def detail(self) -> str:
        """The message without the workload and the fix (for a report that names both apart)."""
        head = f"{self.replicas} replicas mount {self.mode} claim {self.claim}"
        if self.mode == RWOP:
            return f"{head}: only one pod may use it, so the scheduler leaves {self.replicas - 1} of them pending"
        volume = "an EBS volume" if self.backend == EBS else "the volume"
        return (f"{head}: {volume} attaches to one node, so replicas placed on other nodes fail to start "
                "(Multi-Attach error)")
