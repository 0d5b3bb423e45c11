"""Numbers and counts as the plan's readers see them: dollars, percents, plurals, workloads with counts.

Shared by the plan's table (`plan_table.py`), its summary panel (`plan_summary.py`) and the live progress.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from karpplan.plan import PlanPod

ESTIMATED_MARK = "~"
MAX_WORKLOADS_SHOWN = 4  # per node; the rest are summarised as "+N more"


def format_hourly(price: float) -> str:
    """Dollars per hour to 4 decimals: small instance prices ($0.0042/h) differ in the fourth digit."""
    return f"${price:,.4f}"


def format_monthly(price: float) -> str:
    return f"${price:,.2f}"


def format_percent(fraction: float) -> str:
    return f"{fraction * 100:.1f}%"



def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`1 new node`, `2 new nodes` (`nouns` where adding an s is wrong: `provisioning batches`)."""
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"


def workload_label(pod_key: str, pods_by_key: Mapping[str, PlanPod]) -> str:
    """`web` for Deployment/web in namespace default, `kube-system/coredns` elsewhere; the pod key if unknown."""
    pod = pods_by_key.get(pod_key)
    if pod is None:
        return pod_key
    name = pod.workload.split("/", 1)[-1] if pod.workload else pod.name
    return name if pod.namespace == "default" else f"{pod.namespace}/{name}"


def workload_counts(labels: Iterable[str]) -> list[tuple[str, int]]:
    """Each label with how often it occurs, most frequent first, then by name (stable, readable)."""
    counts: dict[str, int] = {}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def abbreviate_counts(counts: Sequence[tuple[str, int]], limit: int = MAX_WORKLOADS_SHOWN) -> str:
    """`web x3, api x2, worker, +2 more` (a count of 1 is left out)."""
    shown = [name if n == 1 else f"{name} x{n}" for name, n in counts[:limit]]
    hidden = len(counts) - limit
    if hidden > 0:
        shown.append(f"+{hidden} more")
    return ", ".join(shown)
