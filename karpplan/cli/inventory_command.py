"""The work behind `karpplan inventory`: what karpplan read from the manifests, before any planning.

Pending pods grouped by workload with their effective requests and constraints, node pools with their
complete requirements, existing nodes, DaemonSets, Fargate profiles; skipped documents with `-v`.
"""

from __future__ import annotations

from karpplan.cli.terminal import Terminal
from karpplan.planner import PlanOptions, read_inventory
from karpplan.render.inventory_view import (
    dump_json,
    dump_yaml,
    inventory_document,
    render_inventory,
    skipped_note,
)


def run_inventory(options: PlanOptions, output: str, terminal: Terminal) -> int:
    """Read what `options` name (a plan's inputs) and render it; raises InputError for bad input."""
    inventory = read_inventory(options)
    if output == "json":
        terminal.stdout.file.write(dump_json(inventory_document(inventory)))
    elif output == "yaml":
        terminal.stdout.file.write(dump_yaml(inventory_document(inventory)))
    else:
        render_inventory(inventory, terminal.stdout, verbose=terminal.verbose > 0)
        note = skipped_note(inventory)
        if note and not terminal.verbose:
            terminal.say(note, style="dim", soft_wrap=False)
    return 0
