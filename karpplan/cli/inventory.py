"""The work behind `karpplan inventory`: what karpplan read from the manifests, before any planning.

Pending pods grouped by workload with their effective requests and constraints, node pools with their
complete requirements, existing nodes, DaemonSets, Fargate profiles; skipped documents with `-v`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Console

from karpplan.cli.plan import with_cli_profiles
from karpplan.inputs.loader import DEFAULT_MAX_BYTES
from karpplan.model.build import load_inventory
from karpplan.model.cluster import FargateProfile
from karpplan.render.inventory import dump_json, dump_yaml, inventory_document, render_inventory, skipped_note


@dataclass(frozen=True)
class InventoryOptions:
    paths: tuple[str, ...]
    output: str = "table"
    max_file_size: int = DEFAULT_MAX_BYTES
    fargate_profiles: tuple[FargateProfile, ...] = ()
    verbose: int = 0
    stdout: Console = field(default_factory=Console)
    stderr: Console = field(default_factory=lambda: Console(stderr=True))


def run_inventory(options: InventoryOptions) -> int:
    """Load and render; raises InputError for bad input."""
    inventory = with_cli_profiles(
        load_inventory(options.paths, max_bytes=options.max_file_size), options.fargate_profiles
    )
    if options.output == "json":
        options.stdout.file.write(dump_json(inventory_document(inventory)))
    elif options.output == "yaml":
        options.stdout.file.write(dump_yaml(inventory_document(inventory)))
    else:
        render_inventory(inventory, options.stdout, verbose=options.verbose > 0)
        note = skipped_note(inventory)
        if note and not options.verbose:
            options.stderr.print(note, markup=False, highlight=False, style="dim")
    return 0
