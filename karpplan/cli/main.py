"""The `karpplan` command line: option parsing only.

Results go to stdout, logs and problems to stderr. Every command runs in the one error boundary
(`cli/terminal.py:run_guarded`): bad input is printed as one `file:line: message` line per problem with
exit code 2 and nothing on stdout; usage errors also exit 2. Commands only parse options into a
`PlanOptions` and call the work behind them (`cli/plan.py:run_plan` for `plan`).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from karpplan import __version__
from karpplan.catalog import DEFAULT_REGION
from karpplan.catalog.zones import parse_zones
from karpplan.cli import catalog, consolidate, diff, explain, lint
from karpplan.cli.help_types import plain_help_types
from karpplan.cli.inventory_command import run_inventory
from karpplan.cli.lean_imports import install as install_lean_imports
from karpplan.cli.options import (
    AUTO,
    allow_estimated_prices_option,
    fargate_profile_option,
    hpa_option,
    max_file_size_option,
    namespace_option,
    parse_option,
    parse_profiles,
    parse_size,
    parse_time_limit,
    replicas_option,
    scale_option,
    spot_prices_option,
    time_limit_option,
    zones_option,
)
from karpplan.cli.plan import run_plan
from karpplan.cli.terminal import Color, Terminal, make_consoles, quiet_stdout, run_guarded, terminal_of
from karpplan.cli.usage import plain
from karpplan.model.build import MAX_REPLICAS
from karpplan.model.fargate_prices import FargatePrice, parse_fargate_prices
from karpplan.model.missing_requests import parse_default_requests
from karpplan.model.scale import parse_scale_flags
from karpplan.plan import PREFERENCE_POLICIES, PreferencePolicy
from karpplan.planner import Engine, PlanOptions

install_lean_imports()  # CP-SAT without pandas (cli/lean_imports.py)
plain_help_types()  # --region REGION, never --region <str> (cli/help_types.py)

app = typer.Typer(
    name="karpplan",
    help="Offline capacity planner for Kubernetes on AWS: Karpenter NodePools, Fargate, topology spread.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    rich_markup_mode=None,  # plain click help: whole option names at 80 columns, no truncated cells
    context_settings={"help_option_names": ["-h", "--help"]},
)


class HpaChoice(StrEnum):
    current = "current"
    min = "min"
    max = "max"


class OutputFormat(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"


class PlanFormat(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"
    html = "html"  # one self-contained page (render/html/)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"karpplan {__version__}")
        raise typer.Exit(0)


@app.callback()
def _global_options(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option("--version", help="Print the version and exit.", callback=_version, is_eager=True),
    ] = False,
    color: Annotated[
        Color, typer.Option("--color", help="Colour output: auto (terminal, honours NO_COLOR), always, never.")
    ] = Color.auto,
    verbose: Annotated[int, typer.Option("-v", "--verbose", count=True, help="More detail (repeatable).")] = 0,
) -> None:
    """Offline capacity planner for Kubernetes on AWS."""
    stdout, stderr = make_consoles(color)
    ctx.obj = Terminal(color=color, verbose=verbose, stdout=stdout, stderr=stderr)


def parse_rates(text: str | None) -> FargatePrice | None:
    """`--fargate-prices cpu=USD,memory=USD`, a usage error when malformed."""
    return None if text is None else parse_option("--fargate-prices", parse_fargate_prices, text)


def parse_defaults(text: str | None) -> dict[str, int] | None:
    """`--default-requests cpu=100m,memory=128Mi`, a usage error when malformed."""
    return None if text is None else parse_option("--default-requests", parse_default_requests, text)


PathsArgument = Annotated[
    list[str],
    typer.Argument(
        metavar="PATH",
        help="Manifest files, directories (read recursively: *.yaml, *.yml, *.json) or - for stdin.",
        show_default=False,
    ),
]
OutputOption = Annotated[OutputFormat, typer.Option("-o", "--output", help="Output format.")]
PlanOutputOption = Annotated[
    PlanFormat, typer.Option("-o", "--output", help="Output format (html: one self-contained page, to stdout).")
]
MaxFileSizeOption = Annotated[str, max_file_size_option()]
VerboseOption = Annotated[int, typer.Option("-v", "--verbose", count=True, help="More detail (repeatable).")]
FargateProfileOption = Annotated[list[str] | None, fargate_profile_option()]


CatalogOption = Annotated[
    Path | None,
    typer.Option("--catalog", metavar="FILE", help="An InstanceCatalog file replacing the embedded AWS catalog.",
                 dir_okay=False),
]

RegionOption = Annotated[
    str | None,
    typer.Option(
        "--region", metavar="REGION",
        help=f"Region of the embedded catalog (default: a ClusterConfig's region, else {DEFAULT_REGION}).",
    ),
]

EngineOption = Annotated[
    Engine, typer.Option("--engine", help="optimal (CP-SAT) or karpenter (greedy simulation).")
]

WorkersOption = Annotated[
    int,
    typer.Option("--workers", min=0, metavar="N",
                 help="Solver worker threads (0 = all available cores); a seed and a worker count give "
                      "the same plan on every run, unless the time limit cuts the search first (a warning "
                      "says so)."),
]

AllowEstimatedPricesOption = Annotated[bool, allow_estimated_prices_option()]

PreferencesOption = Annotated[
    PreferencePolicy,
    typer.Option("--preferences",
                 help="honour: keep every preference (ScheduleAnyway spread, preferred affinity) Karpenter "
                      "would keep, relaxing only those it must; drop: plan without them and say what "
                      "that saves (each plan then gets half of --time-limit)."),
]

FargatePricesOption = Annotated[
    str | None,
    typer.Option("--fargate-prices", metavar="cpu=USD,memory=USD",
                 help="Fargate rates per vCPU-hour and per GB-hour, for a region without a known rate "
                      "(or to replace it)."),
]

SpotPricesOption = Annotated[str | None, spot_prices_option()]

DefaultRequestsOption = Annotated[
    str | None,
    typer.Option("--default-requests", metavar="cpu=Q,memory=Q",
                 help="Requests for containers that set none, e.g. cpu=100m,memory=128Mi (a namespace's "
                      "LimitRange defaults win). Default: such containers count as zero, as the Kubernetes "
                      "scheduler counts them."),
]


@app.command()
def plan(
    ctx: typer.Context,
    paths: PathsArgument,
    catalog: CatalogOption = None,
    region: RegionOption = None,
    engine: EngineOption = "optimal",
    time_limit: Annotated[str, time_limit_option()] = AUTO,
    seed: Annotated[int, typer.Option("--seed", metavar="N", help="Solver random seed.")] = 0,
    workers: WorkersOption = 0,
    output: PlanOutputOption = PlanFormat.table,
    max_file_size: MaxFileSizeOption = "50Mi",
    allow_estimated_prices: AllowEstimatedPricesOption = False,
    fargate_profile: FargateProfileOption = None,
    preferences: PreferencesOption = PREFERENCE_POLICIES[0],
    zones: Annotated[list[str] | None, zones_option()] = None,
    replicas: Annotated[list[str] | None, replicas_option()] = None,
    scale: Annotated[float | None, scale_option()] = None,
    hpa: Annotated[HpaChoice, hpa_option()] = HpaChoice.current,
    fargate_prices: FargatePricesOption = None,
    spot_prices: SpotPricesOption = None,
    default_requests: DefaultRequestsOption = None,
    namespace: Annotated[str | None, namespace_option()] = None,
    verbose: VerboseOption = 0,
) -> None:
    """Plan the nodes (and Fargate pods) that the pending pods in PATH... need."""
    terminal = terminal_of(ctx)
    terminal = replace(terminal, verbose=terminal.verbose + verbose)
    profiles = parse_profiles(fargate_profile)
    limit = parse_time_limit(time_limit)
    options = PlanOptions(
        paths=tuple(paths),
        catalog=str(catalog) if catalog is not None else None,
        region=region,
        engine=engine,
        # auto: PlanOptions' default until the input is read (`cli/plan.py` then fits it to the input)
        time_limit=PlanOptions.time_limit if limit is None else limit,
        time_limit_auto=limit is None,
        seed=seed,
        workers=workers,
        max_file_size=parse_size(max_file_size),
        allow_estimated_prices=allow_estimated_prices,
        fargate_profiles=profiles,
        preferences=preferences,
        zones=parse_zones(zones),
        fargate_prices=parse_rates(fargate_prices),
        spot_prices=spot_prices,
        default_requests=parse_defaults(default_requests),
        namespace=namespace,
    )

    def body() -> int:  # flags that are bad input (exit 2, one line) rather than usage errors
        return run_plan(replace(options, scale=parse_scale_flags(replicas, scale, hpa.value, MAX_REPLICAS, namespace)),
                        output.value, terminal)

    run_guarded(body, terminal)


@app.command()
def inventory(
    ctx: typer.Context,
    paths: PathsArgument,
    output: OutputOption = OutputFormat.table,
    max_file_size: MaxFileSizeOption = "50Mi",
    fargate_profile: FargateProfileOption = None,
    namespace: Annotated[str | None, namespace_option()] = None,
    verbose: VerboseOption = 0,
) -> None:
    """Show what karpplan reads from PATH...: pending pods, effective requests, constraints, pools, nodes."""
    terminal = terminal_of(ctx)
    terminal = replace(terminal, verbose=terminal.verbose + verbose)
    options = PlanOptions(
        paths=tuple(paths), max_file_size=parse_size(max_file_size), fargate_profiles=parse_profiles(fargate_profile),
        namespace=namespace,
    )
    run_guarded(lambda: run_inventory(options, output.value, terminal), terminal)


def _register_commands() -> None:
    """The commands that live in modules of their own."""
    app.add_typer(catalog.catalog_app, name="catalog")
    lint.register(app)
    diff.register(app)
    consolidate.register(app)
    app.command(name="explain")(explain.explain)


_register_commands()


# click's ClickException (typer vendors click in some versions): the base of every usage error.
_USAGE_ERROR: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


def main() -> None:
    """Console-script entry (`karpplan`, and `kubectl-karpplan` as a kubectl plugin)."""
    prog_name = "kubectl karpplan" if Path(sys.argv[0]).name.startswith("kubectl-") else "karpplan"
    try:
        code = app(prog_name=prog_name, standalone_mode=False)
    except _USAGE_ERROR as error:  # a usage error: typer's own display, in plain words, exit 2
        error.message = plain(str(getattr(error, "message", "")))  # type: ignore[attr-defined]
        error.show()  # type: ignore[attr-defined]
        sys.exit(getattr(error, "exit_code", 2))
    except typer.Abort:
        print("Aborted.", file=sys.stderr)
        sys.exit(1)
    except BrokenPipeError:
        # `karpplan plan ... | head`: the reader left; say nothing more and exit quietly.
        quiet_stdout()
        sys.exit(0)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
