"""The work behind `karpplan plan`: options in, exit code out.

Until the planner lands this loads the inventory and renders what was read; `run_plan` is the one call
the command makes, so the planner replaces its body without touching option parsing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Console

from karpplan.inputs.loader import DEFAULT_MAX_BYTES
from karpplan.model.build import load_inventory
from karpplan.model.cluster import ClusterConfig, FargateProfile
from karpplan.model.inventory import Inventory
from karpplan.render.inventory import skipped_note

ENGINES = ("optimal", "karpenter")
OUTPUT_FORMATS = ("table", "json", "yaml")
DEFAULT_REGION = "us-east-1"


def _stdout_console() -> Console:
    return Console()


def _stderr_console() -> Console:
    return Console(stderr=True)


@dataclass(frozen=True)
class PlanOptions:
    """Everything `karpplan plan` was asked, already validated by the command line."""

    paths: tuple[str, ...]
    catalog: str | None = None
    region: str | None = None  # None: a ClusterConfig's region, else DEFAULT_REGION
    engine: str = "optimal"
    time_limit: float = 10.0
    seed: int = 0
    output: str = "table"
    max_file_size: int = DEFAULT_MAX_BYTES
    allow_estimated_prices: bool = False
    fargate_profiles: tuple[FargateProfile, ...] = ()
    verbose: int = 0
    stdout: Console = field(default_factory=_stdout_console)
    stderr: Console = field(default_factory=_stderr_console)


def with_cli_profiles(inventory: Inventory, profiles: tuple[FargateProfile, ...]) -> Inventory:
    """`--fargate-profile` flags as one more ClusterConfig (named `cli`) after those in the manifests."""
    if not profiles:
        return inventory
    cli = ClusterConfig(name="cli", region=None, fargate_profiles=profiles)
    return Inventory(
        pods=inventory.pods,
        daemonsets=inventory.daemonsets,
        nodes=inventory.nodes,
        nodepools=inventory.nodepools,
        nodeclasses=inventory.nodeclasses,
        clusters=(*inventory.clusters, cli),
        runtime_classes=inventory.runtime_classes,
        namespaces=inventory.namespaces,
        skipped=inventory.skipped,
    )


def run_plan(options: PlanOptions) -> int:
    """Load, plan, render. Raises InputError for bad input; returns the exit code of cli-contract.md."""
    from karpplan.catalog import load_catalog
    from karpplan.engines.optimiser import status_line
    from karpplan.planner import PlanOptions as PlannerOptions
    from karpplan.planner import make_plan
    from karpplan.render.documents import render_document
    from karpplan.render.plan_table import render_table

    inventory = with_cli_profiles(
        load_inventory(options.paths, max_bytes=options.max_file_size), options.fargate_profiles
    )
    if options.verbose:
        options.stderr.print(
            f"read {len(inventory.pods)} pods, {len(inventory.nodepools)} node pools, "
            f"{len(inventory.nodes)} nodes from {len(options.paths)} path(s)",
            markup=False,
            highlight=False,
        )
        note = skipped_note(inventory)
        if note:
            options.stderr.print(note, markup=False, highlight=False, style="dim")
    region = options.region or inventory.region or DEFAULT_REGION
    catalog = load_catalog(region, options.catalog, allow_estimated_prices=options.allow_estimated_prices,
                           region_origin=None if options.region else inventory.region_origin)
    progress = status_line(options.stderr.file) if options.engine == "optimal" else None
    plan = make_plan(inventory, catalog, PlannerOptions(
        engine=options.engine, time_limit=options.time_limit, seed=options.seed, progress=progress))
    if progress is not None:
        options.stderr.file.write("\r\x1b[2K")
        options.stderr.file.flush()
    if options.output in ("json", "yaml"):
        options.stdout.file.write(render_document(plan.to_document(), options.output))
    else:
        render_table(plan, options.stdout)
    return plan.exit_code
