"""Option declarations several commands share (same flags, same help) and the parsing of their values: one
definition each."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import typer

from karpplan.model.cluster import FargateProfile
from karpplan.model.default_namespace import check_namespace
from karpplan.model.fargate import parse_profile_flag
from karpplan.model.quantity import QuantityError, parse_quantity

T = TypeVar("T")


def catalog_option(help_text: str) -> Any:
    """`--catalog FILE`: an InstanceCatalog replacing the embedded one (each command words its help)."""
    return typer.Option("--catalog", metavar="FILE", help=help_text, dir_okay=False)


def region_option(help_text: str = "Region of the embedded catalog.") -> Any:
    """`--region REGION`: the region of the embedded catalog."""
    return typer.Option("--region", metavar="REGION", help=help_text)


def spot_prices_option(verb: str = "Plan") -> Any:
    """`--spot-prices FILE`: real spot prices instead of the 0.4 x on-demand estimate."""
    return typer.Option("--spot-prices", metavar="FILE",
                        help=f"{verb} with real spot prices: the JSON that aws ec2 describe-spot-price-history "
                             "prints, or a price CSV (docs/catalog.md). Default: 0.4 x on-demand, marked "
                             "estimated.")


def allow_estimated_prices_option(verb: str = "Plan") -> Any:
    """`--allow-estimated-prices`: types the region's price list lacks, priced at us-east-1's price scaled to
    the region (marked as estimates), instead of left out."""
    return typer.Option("--allow-estimated-prices",
                        help=f"{verb} with estimated prices where the catalog has none.")


MAX_FILE_SIZE = "--max-file-size"
DEFAULT_MAX_FILE_SIZE = "50Mi"


def max_file_size_option() -> Any:
    """`--max-file-size SIZE`: the largest input file a command reads (checked as the command line is parsed)."""
    return typer.Option(MAX_FILE_SIZE, metavar="SIZE", callback=_checked_size,
                        help="Largest input file accepted (bytes or a quantity like 50Mi).")


def _checked_size(text: str) -> str:
    parse_size(text)  # a usage error, named after the option, while the command line is parsed
    return text


def output_option() -> Any:
    """`-o/--output FORMAT`: the output format (the choices are the command's enum)."""
    return typer.Option("-o", "--output", help="Output format.")


def fargate_profile_option() -> Any:
    """`--fargate-profile SELECTOR` (repeatable): a Fargate profile added to those of the manifests."""
    return typer.Option(
        "--fargate-profile", metavar="SELECTOR",
        help="A Fargate profile selector 'namespace=<pattern>[,<label>=<value>...]' (repeatable).",
    )


ZONES_HELP = ("The cluster's zones, comma-separated (e.g. us-east-1a,us-east-1b): new nodes launch only there "
              "and zone spreads count exactly these (default: from a ClusterConfig, EC2NodeClass status or "
              "existing nodes, else every zone of the region).")


def zones_option(help_text: str = ZONES_HELP) -> Any:
    """`--zones a,b,c` (repeatable): the cluster's zones, which new nodes may launch in."""
    return typer.Option("--zones", metavar="ZONE,...", help=help_text)


def replicas_option() -> Any:
    """`--replicas NAMESPACE/NAME=N` (repeatable): a workload's replica count, what-if."""
    return typer.Option(
        "--replicas",
        metavar="NAMESPACE/NAME=N",
        help="Plan a workload with N replicas: NAMESPACE/NAME=N, or NAMESPACE/KIND/NAME=N when a name is shared "
             "(repeatable).",
    )


def scale_option() -> Any:
    """`--scale FACTOR`: every workload's replicas multiplied, rounded up."""
    return typer.Option("--scale", metavar="FACTOR", help="Multiply every workload's replicas by FACTOR (rounded up), e.g. 2 or 0.5.")


def hpa_option() -> Any:
    """`--hpa min|max|current`: which replica count a HorizontalPodAutoscaler's workload is planned with."""
    return typer.Option(
        "--hpa",
        help="Workloads with a HorizontalPodAutoscaler: plan its minReplicas (min), maxReplicas (max) or "
             "their own replicas kept within those (current).",
    )


NAMESPACE_HELP = ("The namespace of the objects that name none (as kubectl apply -n and helm install -n place "
                  "them); default: default.")


def namespace_option(help_text: str = NAMESPACE_HELP) -> Any:
    """`-n/--namespace NS`: the namespace of the namespaced objects that name none (`model/default_namespace.py`)."""
    return typer.Option("-n", "--namespace", metavar="NAME", callback=_checked_namespace, help=help_text)


def _checked_namespace(text: str | None) -> str | None:
    return None if text is None else parse_option("--namespace", check_namespace, text)


def parse_size(text: str) -> int:
    """`--max-file-size`: a byte count or Kubernetes quantity (`50Mi`, `100M`)."""
    try:
        size = parse_quantity(text).value()
    except QuantityError as exc:
        raise typer.BadParameter(f"{text!r} is not a size; use bytes or a quantity like 50Mi",
                                 param_hint=f"'{MAX_FILE_SIZE}'") from exc
    if size <= 0:
        raise typer.BadParameter(f"must be more than 0, not {text!r}", param_hint=f"'{MAX_FILE_SIZE}'")
    return size


def parse_option(option: str, parse: Callable[[str], T], text: str) -> T:
    """`parse(text)`; the ValueError it raises on a malformed value is a usage error named after `option`."""
    try:
        return parse(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint=f"'{option}'") from exc


def parse_profiles(flags: list[str] | None) -> tuple[FargateProfile, ...]:
    """`--fargate-profile` flags as profiles `cli-1`, `cli-2`..., a usage error when malformed."""
    return tuple(parse_option("--fargate-profile", partial(parse_profile_flag, index=index), text)
                 for index, text in enumerate(flags or [], start=1))


AUTO = "auto"
TIME_LIMIT = "--time-limit"


TIME_LIMIT_HELP = ("Time limit in seconds, or auto (default): 10 s up to about a thousand pending pods, more for "
                   "larger inputs (with the pods and pod groups, at most 300 s); the summary states the limit used.")


def time_limit_option(help_text: str = TIME_LIMIT_HELP) -> Any:
    """`--time-limit auto|SECONDS`: a command's time limit; `auto` (the default) fits it to the input
    (`karpplan/time_limit.py`). `plan`, `diff` and `consolidate` declare it here, each wording its help."""
    return typer.Option("--time-limit", metavar="auto|SECONDS", callback=_checked_time_limit, help=help_text)


def _checked_time_limit(text: str) -> str:
    parse_time_limit(text)  # a usage error, named after the option, while the command line is parsed
    return text


def parse_time_limit(text: str) -> float | None:
    """`--time-limit`: seconds (more than 0: a limit of none would plan nothing), or None for `auto`; a usage
    error otherwise."""
    if text.strip().lower() == AUTO:
        return None
    try:
        seconds = float(text)
    except ValueError as exc:
        raise typer.BadParameter(f"expects a number of seconds or auto, not {text!r}", param_hint=f"'{TIME_LIMIT}'") from exc
    if not seconds > 0 or seconds == float("inf"):
        raise typer.BadParameter(f"must be more than 0 seconds, or auto, not {text!r}", param_hint=f"'{TIME_LIMIT}'")
    return seconds
