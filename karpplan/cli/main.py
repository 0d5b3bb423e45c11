"""The `karpplan` command line: option parsing and the single error boundary.

Results go to stdout, logs and problems to stderr. Bad input (`InputError`) is printed as one
`file:line: message` line per problem with exit code 2 and nothing on stdout; usage errors also exit 2.
Commands only parse options and call into the stages (`cli/plan.py:run_plan` for `plan`).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console

from karpplan import __version__
from karpplan.cli.inventory import InventoryOptions, run_inventory
from karpplan.cli.plan import DEFAULT_REGION, PlanOptions, run_plan
from karpplan.errors import InputError
from karpplan.model.cluster import FargateProfile
from karpplan.model.fargate import parse_profile_flag
from karpplan.model.quantity import QuantityError, parse_quantity

app = typer.Typer(
    name="karpplan",
    help="Offline capacity planner for Kubernetes on AWS: Karpenter NodePools, Fargate, topology spread.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class Color(StrEnum):
    auto = "auto"
    always = "always"
    never = "never"


class Engine(StrEnum):
    optimal = "optimal"
    karpenter = "karpenter"


class OutputFormat(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"


@dataclass
class GlobalState:
    """Options given before the command, shared by every command."""

    color: Color = Color.auto
    verbose: int = 0
    stdout: Console = field(default_factory=Console)
    stderr: Console = field(default_factory=lambda: Console(stderr=True))


def make_consoles(color: Color) -> tuple[Console, Console]:
    """stdout and stderr consoles. `auto` follows the terminal and NO_COLOR; the flag wins over NO_COLOR."""
    if color is Color.always:
        return Console(force_terminal=True, no_color=False), Console(stderr=True, force_terminal=True, no_color=False)
    if color is Color.never:
        return Console(no_color=True, color_system=None), Console(stderr=True, no_color=True, color_system=None)
    no_color = bool(os.environ.get("NO_COLOR"))
    return Console(no_color=no_color), Console(stderr=True, no_color=no_color)


def report_problems(error: InputError, stderr: Console) -> None:
    for problem in error.problems:
        stderr.print(str(problem), markup=False, highlight=False, soft_wrap=True)


def run_guarded(body: Callable[[], int], stderr: Console) -> NoReturn:
    """The error boundary every command runs in: bad input never shows a traceback."""
    try:
        code = body()
    except InputError as error:
        report_problems(error, stderr)
        code = 2
    except RecursionError:
        stderr.print("error: the input is nested too deeply to read", markup=False, highlight=False)
        code = 2
    except MemoryError:
        stderr.print("error: out of memory while reading the input", markup=False, highlight=False)
        code = 2
    raise typer.Exit(code)


def _state(ctx: typer.Context) -> GlobalState:
    state = ctx.find_object(GlobalState)
    return state if state is not None else GlobalState()


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
    ctx.obj = GlobalState(color=color, verbose=verbose, stdout=stdout, stderr=stderr)


def parse_size(text: str) -> int:
    """`--max-file-size`: a byte count or Kubernetes quantity (`50Mi`, `100M`)."""
    try:
        size = parse_quantity(text).value()
    except QuantityError as exc:
        raise typer.BadParameter(f"{text!r} is not a size ({exc}); use bytes or a quantity like 50Mi") from exc
    if size <= 0:
        raise typer.BadParameter("must be greater than zero")
    return size


def parse_profiles(flags: list[str] | None) -> tuple[FargateProfile, ...]:
    """`--fargate-profile` flags as profiles `cli-1`, `cli-2`..., a usage error when malformed."""
    profiles = []
    for index, text in enumerate(flags or [], start=1):
        try:
            profiles.append(parse_profile_flag(text, index))
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--fargate-profile") from exc
    return tuple(profiles)


PathsArgument = Annotated[
    list[str],
    typer.Argument(
        metavar="PATH",
        help="Manifest files, directories (read recursively: *.yaml, *.yml, *.json) or - for stdin.",
        show_default=False,
    ),
]
OutputOption = Annotated[OutputFormat, typer.Option("-o", "--output", help="Output format.")]
MaxFileSizeOption = Annotated[
    str, typer.Option("--max-file-size", help="Largest input file accepted (bytes or a quantity like 50Mi).")
]
VerboseOption = Annotated[int, typer.Option("-v", "--verbose", count=True, help="More detail (repeatable).")]
FargateProfileOption = Annotated[
    list[str] | None,
    typer.Option(
        "--fargate-profile",
        help="A Fargate profile selector 'namespace=<pattern>[,<label>=<value>...]' (repeatable).",
    ),
]


@app.command()
def plan(
    ctx: typer.Context,
    paths: PathsArgument,
    catalog: Annotated[
        Path | None,
        typer.Option("--catalog", help="An InstanceCatalog file replacing the embedded AWS catalog.", dir_okay=False),
    ] = None,
    region: Annotated[
        str | None,
        typer.Option(
            "--region",
            help=f"Region of the embedded catalog (default: a ClusterConfig's region, else {DEFAULT_REGION}).",
        ),
    ] = None,
    engine: Annotated[
        Engine, typer.Option("--engine", help="optimal (CP-SAT) or karpenter (greedy simulation).")
    ] = Engine.optimal,
    time_limit: Annotated[
        float, typer.Option("--time-limit", min=0.0, help="Solver time limit in seconds.")
    ] = 10.0,
    seed: Annotated[int, typer.Option("--seed", help="Solver random seed.")] = 0,
    output: OutputOption = OutputFormat.table,
    max_file_size: MaxFileSizeOption = "50Mi",
    allow_estimated_prices: Annotated[
        bool,
        typer.Option("--allow-estimated-prices", help="Plan with estimated prices where the catalog has none."),
    ] = False,
    fargate_profile: FargateProfileOption = None,
    verbose: VerboseOption = 0,
) -> None:
    """Plan the nodes (and Fargate pods) that the pending pods in PATH... need."""
    state = _state(ctx)
    profiles = parse_profiles(fargate_profile)
    options = PlanOptions(
        paths=tuple(paths),
        catalog=str(catalog) if catalog is not None else None,
        region=region,
        engine=engine.value,
        time_limit=time_limit,
        seed=seed,
        output=output.value,
        max_file_size=parse_size(max_file_size),
        allow_estimated_prices=allow_estimated_prices,
        fargate_profiles=tuple(profiles),
        verbose=state.verbose + verbose,
        stdout=state.stdout,
        stderr=state.stderr,
    )
    run_guarded(lambda: run_plan(options), state.stderr)


@app.command()
def inventory(
    ctx: typer.Context,
    paths: PathsArgument,
    output: OutputOption = OutputFormat.table,
    max_file_size: MaxFileSizeOption = "50Mi",
    fargate_profile: FargateProfileOption = None,
    verbose: VerboseOption = 0,
) -> None:
    """Show what karpplan reads from PATH...: pending pods, effective requests, constraints, pools, nodes."""
    state = _state(ctx)
    options = InventoryOptions(
        paths=tuple(paths),
        output=output.value,
        max_file_size=parse_size(max_file_size),
        fargate_profiles=parse_profiles(fargate_profile),
        verbose=state.verbose + verbose,
        stdout=state.stdout,
        stderr=state.stderr,
    )
    run_guarded(lambda: run_inventory(options), state.stderr)


def _register_optional_commands() -> None:
    """Commands other modules provide, added when present."""
    if importlib.util.find_spec("karpplan.cli.catalog") is not None:
        catalog = importlib.import_module("karpplan.cli.catalog")
        app.add_typer(catalog.catalog_app, name="catalog")
    if importlib.util.find_spec("karpplan.cli.explain") is not None:
        app.command(name="explain")(importlib.import_module("karpplan.cli.explain").explain)


_register_optional_commands()


def main() -> None:
    """Console-script entry (`karpplan`, and `kubectl-karpplan` as a kubectl plugin)."""
    prog_name = "kubectl karpplan" if Path(sys.argv[0]).name.startswith("kubectl-") else "karpplan"
    try:
        app(prog_name=prog_name)
    except BrokenPipeError:
        # `karpplan plan ... | head`: the reader left; say nothing more and exit quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(0)


if __name__ == "__main__":
    main()
