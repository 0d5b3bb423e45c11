"""Workloads that make no pod now (`replicas: 0`, a suspended Job or CronJob), as one replica.

A workload scaled to 0 (an HPA's scale-from-zero, an upstream example shipped with `replicas: 0`) is still a
pod template that will be scaled up; the capacity rules that ask "can anything launch this pod" judge it as
if it had one replica. The pods are the builder's own (volumes, LimitRange defaults, RuntimeClass overhead):
the documents are built again with a `--replicas NAMESPACE/KIND/NAME=1` for each such workload.
"""

from __future__ import annotations

from collections.abc import Sequence

from karpplan.errors import InputError, InputProblem
from karpplan.inputs.loader import Document
from karpplan.model.build import build_inventory, document_name, role_of
from karpplan.model.pods import Pod
from karpplan.model.scale import ReplicaOverride, ScaleOptions

# The kinds whose documents make pods; the others (pools, storage, namespaces, HPAs ...) are built again as
# they are, so the one replica sees what the real pods see.
_POD_ROLES = frozenset({"workload", "Pod", "DaemonSet"})


def one_replica_pods(documents: Sequence[Document], scaled_to_zero: Sequence[Document]) -> tuple[Pod, ...]:
    """One pending pod per workload of `scaled_to_zero`, built as the builder builds a replica (empty when
    the documents cannot be built again: the lint findings already say why)."""
    if not scaled_to_zero:
        return ()
    wanted = {id(d) for d in scaled_to_zero}
    subset = [d for d in documents if role_of(d) not in _POD_ROLES or id(d) in wanted]
    overrides = tuple(ReplicaOverride(d.namespace, d.kind.lower(), document_name(d), 1, f"{d.namespace}/{d.kind}/{document_name(d)}=1")
                      for d in scaled_to_zero)
    ignored: list[InputProblem] = []
    try:
        inventory = build_inventory(subset, collect=ignored, scale=ScaleOptions(replicas=overrides))
    except InputError:
        return ()
    origins = {d.origin for d in scaled_to_zero}
    return tuple(p for p in inventory.pods if p.origin in origins and not p.bound)
