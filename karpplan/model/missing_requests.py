"""Pods whose containers request no CPU or memory: placed as kube-scheduler does, and always said.

kube-scheduler (and Karpenter) count a container without requests as zero: such pods fit on any node and
cost nothing in a plan. The plan places them so, but names them in one warning (workloads, pod counts,
file:line). `--default-requests cpu=100m,memory=128Mi` gives those containers requests to plan with; a
namespace's LimitRange defaults still win, as the LimitRanger admission plugin applies them first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from karpplan.model.pods import Pod
from karpplan.model.quantity import QuantityError, format_resource, parse_quantity
from karpplan.model.resources import CPU, EPHEMERAL, MEMORY, amount_of

FLAG = "--default-requests"
EXAMPLE = f"{FLAG} cpu=100m,memory=128Mi"
_RESOURCES = (CPU, MEMORY, EPHEMERAL)
_LISTED = 8  # workloads named in the warning; the rest are counted


def parse_default_requests(text: str) -> dict[str, int]:
    """`cpu=100m,memory=128Mi` as amounts; raises ValueError with a message fit for the user."""
    out: dict[str, int] = {}
    for item in (part.strip() for part in text.split(",")):
        name, sep, raw = item.partition("=")
        name, raw = name.strip(), raw.strip()
        if not sep or not name or not raw:
            raise ValueError(f"{item!r} is not NAME=QUANTITY; expected e.g. {EXAMPLE}")
        if name not in _RESOURCES:
            raise ValueError(f"{name} is not one of {', '.join(_RESOURCES)}")
        try:
            amount = amount_of(name, parse_quantity(raw))
        except QuantityError as exc:
            raise ValueError(f"{name} {raw!r} is not a quantity ({exc})") from None
        if amount <= 0:
            raise ValueError(f"{name} must be greater than zero, got {raw!r}")
        out[name] = amount
    return out


def describe_defaults(defaults: Mapping[str, int]) -> str:
    return ",".join(f"{name}={format_resource(name, amount)}" for name, amount in defaults.items())


def unrequested_warning(pods: Sequence[Pod], defaults: Mapping[str, int] | None = None) -> str | None:
    """One warning naming every workload whose pending pods have containers without CPU or memory requests
    (None when there are none)."""
    groups: dict[tuple[str, str], list[Pod]] = {}
    for pod in pods:
        if pod.template.unrequested:
            groups.setdefault((pod.namespace, pod.workload), []).append(pod)
    if not groups:
        return None
    count = sum(len(members) for members in groups.values())
    listed = []
    for (namespace, workload), members in list(groups.items())[:_LISTED]:
        kind, _, name = workload.partition("/")
        containers = members[0].template.unrequested
        noun = "container" if len(containers) == 1 else "containers"
        pods_text = "1 pod" if len(members) == 1 else f"{len(members)} pods"
        listed.append(f"{kind}/{namespace}/{name} ({pods_text}; {noun} {', '.join(containers)}) at "
                      f"{members[0].template.origin}")
    if len(groups) > _LISTED:
        listed.append(f"and {len(groups) - _LISTED} more workloads")
    who = f"{count} pod{'s' if count != 1 else ''} of {len(groups)} workload{'s' if len(groups) != 1 else ''}"
    head = f"{who} set no CPU or memory requests on some containers"
    if defaults:
        return (f"{head}; they are planned with {FLAG} {describe_defaults(defaults)} (a namespace's LimitRange "
                f"defaults win): {'; '.join(listed)}")
    return (f"{head}, so they are planned at zero requests, as kube-scheduler places them: they fit on any "
            f"node and add nothing to the cost here, but they use real CPU and memory: {'; '.join(listed)}. "
            f"Set resources.requests, or plan with {EXAMPLE}")
