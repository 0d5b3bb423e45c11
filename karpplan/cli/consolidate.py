"""`karpplan consolidate`: a thin command over `karpplan.consolidate` (options, output, exit code)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from karpplan.cli.options import (
    AUTO,
    allow_estimated_prices_option,
    catalog_option,
    max_file_size_option,
    namespace_option,
    output_option,
    parse_size,
    parse_time_limit,
    region_option,
    spot_prices_option,
    time_limit_option,
    zones_option,
)
from karpplan.cli.terminal import Terminal, run_guarded, terminal_of

if TYPE_CHECKING:
    from karpplan.consolidate.explain import Explanation
    from karpplan.consolidate.run import ConsolidateOptions


TIME_LIMIT_HELP = ("Time limit in seconds of the whole simulation (consolidation, then the optimal re-pack), or auto "
                   "(default): fitted to the pods that may move, as plan fits its own; the report states it.")


class ConsolidateFormat(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"


def register(app: typer.Typer) -> None:
    @app.command("consolidate")
    def consolidate_command(
        ctx: typer.Context,
        paths: Annotated[
            list[str],
            typer.Argument(metavar="PATH", show_default=False,
                           help="A cluster snapshot (kubectl get nodes,pods,pdb,daemonsets -A -o yaml) with its "
                                "NodePools and EC2NodeClasses: files, directories or - for stdin."),
        ],
        catalog: Annotated[Path | None, catalog_option("An InstanceCatalog replacing the embedded AWS catalog.")] = None,
        region: Annotated[str | None, region_option()] = None,
        zones: Annotated[list[str] | None, zones_option()] = None,
        spot_to_spot: Annotated[
            bool, typer.Option("--spot-to-spot",
                               help="Karpenter's SpotToSpotConsolidation feature gate (off by default, as in "
                                    "Karpenter): spot nodes may be replaced by cheaper spot nodes.")
        ] = False,
        node: Annotated[
            str | None, typer.Option("--node", metavar="NAME",
                                     help="Explain one node in full: each pod, where it would go, or what stops it.")
        ] = None,
        now: Annotated[
            str | None, typer.Option("--now", metavar="TIME",
                                     help="The time (RFC 3339, UTC if no offset) disruption budgets' schedules are "
                                          "evaluated at; default: the snapshot's newest Node heartbeat.")
        ] = None,
        time_limit: Annotated[str, time_limit_option(TIME_LIMIT_HELP)] = AUTO,
        output: Annotated[ConsolidateFormat, output_option()] = ConsolidateFormat.table,
        max_file_size: Annotated[str, max_file_size_option()] = "50Mi",
        namespace: Annotated[str | None, namespace_option()] = None,
        allow_estimated_prices: Annotated[bool, allow_estimated_prices_option("Price nodes")] = False,
        spot_prices: Annotated[str | None, spot_prices_option("Price spot nodes")] = None,
    ) -> None:
        """What Karpenter's consolidation would do to a running cluster, node by node, and why not."""
        # lazy: the consolidation package (the scheduler, OR-Tools) loads only when this command runs
        from karpplan.catalog.zones import parse_zones
        from karpplan.consolidate.clock import parse_time
        from karpplan.consolidate.run import ConsolidateOptions

        terminal = terminal_of(ctx)
        when = None if now is None else parse_time(now)
        if now is not None and when is None:
            raise typer.BadParameter(f"{now!r} is not an RFC 3339 time (2026-11-28T03:00:00Z)", param_hint="--now")
        options = ConsolidateOptions(tuple(paths), region, str(catalog) if catalog is not None else None,
                                     parse_zones(zones), spot_to_spot, parse_time_limit(time_limit),
                                     parse_size(max_file_size), when, namespace, allow_estimated_prices, spot_prices)
        run_guarded(lambda: _run(options, node, output, terminal), terminal)


def _run(options: ConsolidateOptions, node: str | None, output: ConsolidateFormat, terminal: Terminal) -> int:
    """Simulate, render; the exit code of the report (or of the one node's explanation)."""
    # lazy: the consolidation package (the scheduler, OR-Tools) loads only when this command runs
    from karpplan.consolidate.report import Report
    from karpplan.consolidate.run import consolidate
    from karpplan.consolidate.table import render_explanation, render_report
    from karpplan.render.documents import render_document

    result: Explanation | Report = _explain(options, node) if node is not None else consolidate(options)
    for line in result.warnings:
        terminal.say(line)
    if output is not ConsolidateFormat.table:
        terminal.stdout.file.write(render_document(result.to_document(), output.value))
    elif isinstance(result, Report):
        render_report(result, terminal.stdout)
    else:
        render_explanation(result, terminal.stdout)
    return result.exit_code


def _explain(options: ConsolidateOptions, name: str) -> Explanation:
    """`--node NAME`, the name as the table shows it too: without the EC2 domain the nodes share
    (`ip-10-40-11-23` for `ip-10-40-11-23.ap-southeast-2.compute.internal`) when no node is named so whole."""
    # lazy: the consolidation package (the scheduler, OR-Tools) loads only when this command runs
    from karpplan.consolidate.explain import explain_node
    from karpplan.consolidate.run import read
    from karpplan.render.names import ec2_domain

    snapshot, state = read(options)
    names = [n.name for n in state.nodes]
    if name not in names:
        whole = [n for n in names if n.startswith(f"{name}.") and ec2_domain(n) == n[len(name):]]
        name = whole[0] if len(whole) == 1 else name
    return explain_node(options, name, read_as=(snapshot, state))
