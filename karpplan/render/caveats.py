"""What a plan was planned with, in plain words, from the Plan document's own summary values: where the
region and zones came from, how much of the catalog is priced and as of when, where spot and Fargate prices
came from, and how many nodes of each kind the plan counts.

One wording for every view: the table's summary panel (`plan_summary.py`), the HTML report
(`html/plan_report.py`) and `consolidate` say these the same way. Plain strings only (no rich), so the
HTML report and the JSON-only callers import nothing more.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from karpplan.catalog.types import zones_assumed
from karpplan.render.formatting import plural

RUNS_ONLY = "while running"  # a Job's or CronJob's $/month cell: its nodes are not paid all month
ZONES_ASSUMED_NOTE = "assumed: nothing in the input says which zones the cluster has; narrow with --zones"


def zones_note(source: str) -> tuple[str, bool]:
    """(the note after the zones, whether they were assumed): `from ClusterConfig x.yaml:9`, or the warning."""
    if zones_assumed(source):
        return ZONES_ASSUMED_NOTE, True
    return (f"from {source}" if source else ""), False


def spot_prices_line(source: str, spot_priced: bool) -> str:
    """Where spot prices came from (`summary.spotPrices`): `spot estimated as 0.4 x on-demand (real ones:
    --spot-prices FILE)` when the plan prices spot nodes with the estimate, `spot from FILE` when given one."""
    if source.startswith("estimated: "):
        if not spot_priced:
            return ""
        return f"spot estimated as {source.removeprefix('estimated: ')} (real ones: --spot-prices FILE)"
    if source.startswith("file:"):
        path, _, others = source.removeprefix("file:").partition("; ")
        return f"spot from {path}" + (f"; {others.replace(': ', ' as ')}" if others else "")
    return ""


def fargate_prices_line(rates: str, region: str = "") -> str:
    """`Fargate $0.04856 per vCPU-hour, ... (sources: karpplan catalog --info --region R)` from
    `summary.fargatePrices`: the command that shows this region's rate and its source (without `--region`, `catalog
    --info` shows the default region's)."""
    if not rates:
        return ""
    rate, _, source = rates.partition(" (")
    command = "karpplan catalog --info" + (f" --region {region}" if region else "")
    where = "--fargate-prices" if "--fargate-prices" in source else f"sources: {command}"
    return f"Fargate {rate} ({where})"


def catalog_line(catalog: str, region: str, region_source: str) -> str:
    """`aws-ap-southeast-2, region ap-southeast-2 (from ClusterConfig pay-prod-syd, eksctl.yaml:5)`."""
    source = f" ({region_source})" if region_source else ""
    return f"{catalog}, region {region}{source}"


def node_counts(existing: int, new_ec2: int, fargate: int) -> str:
    """What a node count counts: `2 existing, 19 new EC2, 3 Fargate pods` (kinds with none left out)."""
    parts = []
    if existing:
        parts.append(f"{existing} existing")
    if new_ec2:
        parts.append(f"{new_ec2} new EC2")
    if fargate:
        parts.append(plural(fargate, "Fargate pod"))
    return ", ".join(parts)


def nodes_heading(existing: int, new_ec2: int, fargate: int) -> str:
    """`Nodes (21: 2 existing, 19 new EC2)`, `Nodes (2 existing)` when of one kind, `Nodes` when none."""
    what = node_counts(existing, new_ec2, fargate)
    kinds = sum(1 for n in (existing, new_ec2, fargate) if n)
    if kinds <= 1:
        return f"Nodes ({what})" if what else "Nodes"
    return f"Nodes ({existing + new_ec2 + fargate}: {what})"


def new_nodes_note(new_ec2: int, fargate: int, existing: int) -> str:
    """After the new-node count: `(19 EC2, 3 Fargate; pods placed on 2 existing nodes too)` (empty when all EC2);
    `existing`: the existing nodes the plan places pending pods on."""
    parts = [f"{new_ec2} EC2, {fargate} Fargate"] if fargate else []
    if existing:
        parts.append(f"pods placed on {plural(existing, 'existing node')} too")
    return f"({'; '.join(parts)})" if parts else ""


def existing_nodes_used(existing: Collection[object], placements: Iterable[tuple[object, object]]) -> int:
    """How many of the `existing` node names the plan places pending pods on (`placements`: each pod's node and
    whether it was bound already)."""
    return len({node for node, bound in placements if node in existing and not bound})


def nonempty(lines: Sequence[str]) -> list[str]:
    return [line for line in lines if line]
