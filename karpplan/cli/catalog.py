"""`karpplan catalog`: an offline, pool-aware ec2-instance-selector, plus `import` and `refresh`.

    karpplan catalog [--region R] [--catalog FILE] [--nodepool NAME] [PATH...] [--cpu 2 --memory 4Gi]
                     [--request nvidia.com/gpu=1] [-o table|json|yaml] [--info]
    karpplan catalog import FILE... [-o catalog.yaml] [--region R]
    karpplan catalog refresh --region R [-o catalog.yaml] [--profile P]

PATHs are manifests (files, directories, `-`): the NodePool named by --nodepool (or the only one),
its EC2NodeClass (kubelet settings, AMI family) and the DaemonSets whose overhead a node would carry.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from typer.core import TyperGroup

from karpplan.catalog import instance_types_for, load_catalog
from karpplan.catalog.auto_mode_fee import SOURCE as AUTO_MODE_FEE_SOURCE
from karpplan.catalog.aws_import import build_catalog, read_import_files
from karpplan.catalog.coverage import Coverage, lacking_text, lacking_types, region_coverage, remedy
from karpplan.catalog.embedded import regions as embedded_regions
from karpplan.catalog.overlays import apply_node_overlays
from karpplan.catalog.refresh import refresh_catalog
from karpplan.catalog.selector import Selection, select
from karpplan.catalog.types import ON_DEMAND, SPOT, Catalog
from karpplan.catalog.user import API_VERSION, catalog_document
from karpplan.catalog.zones import parse_zones, with_cluster_zones
from karpplan.cli.options import output_option, region_option, zones_option
from karpplan.cli.terminal import run_guarded, terminal_of
from karpplan.errors import InputError, Origin
from karpplan.model.build import load_inventory
from karpplan.model.fargate_prices import FARGATE_PRICES, FLAG_FORMAT
from karpplan.model.inventory import Inventory
from karpplan.model.pools import KubeletConfig, NodeClass, NodePool
from karpplan.model.quantity import QuantityError, format_resource, parse_quantity
from karpplan.model.resources import CPU, MEMORY, PODS, Resources, amount_of
from karpplan.render.wrap import wrap_words

_PATHS_KEY = "karpplan.catalog.paths"
ZONES_HELP = ("The cluster's zones, comma-separated (e.g. us-east-1a,us-east-1b): only offerings in these zones are "
              "listed (default: from a ClusterConfig, EC2NodeClass status or existing nodes among PATH, else every "
              "zone of the region).")


class CatalogFormat(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"
    catalog = "catalog"  # an InstanceCatalog of the listed types, offerings and prices: `--catalog FILE` reads it


class _CatalogGroup(TyperGroup):
    """A group whose own invocation takes manifest PATHs: `catalog [opts] PATH...` vs `catalog import ...`.

    Click groups read their first positional argument as a subcommand name. Here a first positional that
    is not a subcommand starts the PATH list, and options may follow the paths (`catalog dir/ --cpu 2`).
    """

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if self._first_positional(args) in self.commands:
            return super().parse_args(ctx, args)
        ctx.allow_interspersed_args = True  # options may follow the paths
        rest = super(TyperGroup, self).parse_args(ctx, args)  # plain Command parsing
        ctx.meta[_PATHS_KEY] = [*ctx._protected_args, *rest]
        ctx._protected_args = []
        ctx.args = []
        return []

    def _first_positional(self, args: Sequence[str]) -> str | None:
        takes_value = {
            opt
            for param in self.params
            if not getattr(param, "is_flag", False) and not getattr(param, "count", False)
            for opt in getattr(param, "opts", [])
        }
        skip = False
        for index, token in enumerate(args):
            if skip:
                skip = False
                continue
            if token == "--":
                return args[index + 1] if index + 1 < len(args) else None
            if token.startswith("-") and token != "-":
                skip = "=" not in token and token in takes_value
                continue
            return token
        return None


catalog_app = typer.Typer(
    cls=_CatalogGroup,
    invoke_without_command=True,
    help=(
        "List the instance types a NodePool allows and a pod fits, cheapest first (offline), or import/refresh "
        "a catalog. PATH... are manifests: the NodePool (--nodepool NAME, or the only one), its EC2NodeClass "
        "and the DaemonSets whose overhead a node carries."
    ),
    subcommand_metavar="[PATH]... | COMMAND [ARGS]...",
    add_completion=False,
)


# ------------------------------------------------------------------------------------------ listing
def _request(cpu: str | None, memory: str | None, extra: Sequence[str]) -> Resources | None:
    """The pod's requests from `--cpu`, `--memory` and `--request NAME=QUANTITY`; a usage error when malformed."""
    amounts: dict[str, int] = {}
    items: list[tuple[str, str | None, str]] = [(CPU, cpu, "--cpu"), (MEMORY, memory, "--memory")]
    for raw in extra:
        resource, sep, quantity = raw.partition("=")
        if not sep or not resource.strip():
            raise typer.BadParameter(f"expects NAME=QUANTITY (e.g. nvidia.com/gpu=1), not {raw!r}",
                                     param_hint="'--request'")
        items.append((resource.strip(), quantity, "--request"))
    for name, value, flag in items:
        if value is None:
            continue
        try:
            amount = amount_of(name, parse_quantity(value))
        except QuantityError as exc:
            raise typer.BadParameter(f"{name} {value!r} is not a quantity (e.g. 2, 500m or 4Gi)",
                                     param_hint=f"'{flag}'") from exc
        if amount < 0:
            raise typer.BadParameter(f"{name} must not be negative, not {value!r}", param_hint=f"'{flag}'")
        amounts[name] = amounts.get(name, 0) + amount
    if not amounts:
        return None
    amounts.setdefault(PODS, 1)
    return Resources(amounts)


def _pick_pool(pools: Sequence[NodePool], name: str | None, paths: Sequence[str]) -> NodePool | None:
    if name is None:
        if len(pools) <= 1:
            return pools[0] if pools else None
        names = ", ".join(sorted(p.name for p in pools))
        raise InputError.at(Origin(paths[0]), f"several NodePools ({names}); choose one with --nodepool NAME")
    for pool in pools:
        if pool.name == name:
            return pool
    known = ", ".join(sorted(p.name for p in pools)) or "none"
    raise InputError.at(
        Origin("--nodepool"),
        f"no NodePool or Provisioner named {name!r} in {', '.join(paths)} (found: {known})",
    )


def _node_class(pool: NodePool, classes: Sequence[NodeClass]) -> NodeClass | None:
    ref = pool.node_class_ref
    if ref is None:
        return None
    return next((c for c in classes if c.name == ref.name and (not ref.kind or c.kind == ref.kind)), None)


def _kubelet(pool: NodePool, node_class: NodeClass | None) -> KubeletConfig | None:
    base = node_class.kubelet if node_class is not None else None
    if base is None:
        return pool.kubelet
    return base.merged(pool.kubelet)


def _price_text(selection: Selection, capacity_type: str) -> str:
    offers = [o for o in selection.offerings if o.capacity_type == capacity_type]
    if not offers:
        return "-"
    cheapest = min(offers, key=lambda o: (o.price, o.estimated))
    return f"{cheapest.price:.4f}{'*' if cheapest.estimated else ''}"


def _extended_text(resources: Resources) -> str:
    core = (CPU, MEMORY, PODS, "ephemeral-storage")
    return ",".join(f"{k}={format_resource(k, v)}" for k, v in resources.items() if k not in core) or "-"


def _zones_text(selection: Selection) -> str:
    zones = sorted({o.zone for o in selection.offerings})
    return ",".join(zones) if len(zones) <= 3 else f"{len(zones)} zones"


def _table(rows: Sequence[Selection], footer: Sequence[str]) -> str:
    header = ["NAME", "ARCH", "CPU", "MEMORY", "ALLOC CPU", "ALLOC MEMORY", "PODS", "EXTENDED", "ZONES",
              "ON-DEMAND $/H", "SPOT $/H"]  # fmt: skip
    lines = [header]
    for s in rows:
        it = s.instance_type
        lines.append(
            [
                it.name,
                it.labels.get("kubernetes.io/arch", "?"),
                format_resource(CPU, it.capacity.get(CPU)),
                format_resource(MEMORY, it.capacity.get(MEMORY)),
                format_resource(CPU, it.allocatable.get(CPU)),
                format_resource(MEMORY, it.allocatable.get(MEMORY)),
                str(it.allocatable.get(PODS)),
                _extended_text(it.capacity),
                _zones_text(s),
                _price_text(s, ON_DEMAND),
                _price_text(s, SPOT),
            ]
        )
    widths = [max(len(row[i]) for row in lines) for i in range(len(header))]
    # the table's rows stay one line each (as `kubectl get` prints them: scripts cut its columns); its notes wrap
    text = "\n".join("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in lines)
    return text + ("\n" + "\n".join(_wrapped(note, 0) for note in footer) if footer else "")


def _wrapped(text: str, indent: int) -> str:
    """`text` wrapped to the terminal's width (COLUMNS; 80 when not a terminal, as rich renders the other
    commands), its continuation lines indented by `indent`."""
    width = max(40, shutil.get_terminal_size((80, 24)).columns)
    return ("\n" + " " * indent).join(wrap_words(text, width - indent))


def _selection_dict(s: Selection) -> dict[str, Any]:
    it = s.instance_type
    return {
        "name": it.name,
        "price": s.price,
        "estimated": s.estimated,
        "capacity": it.capacity.formatted(),
        "allocatable": it.allocatable.formatted(),
        "maxPods": it.allocatable.get(PODS),
        "daemonOverhead": s.daemon_overhead.formatted(),
        "daemonSets": list(s.daemonsets),
        "labels": dict(it.labels),
        "offerings": [
            {"zone": o.zone, "capacityType": o.capacity_type, "price": o.price, "estimated": o.estimated}
            for o in s.offerings
        ],
    }


def _fargate_source(region: str | None) -> str:
    """The Fargate rate of the region and where it comes from, or how to supply one."""
    rate = FARGATE_PRICES.get(region or "")
    if rate is None:
        return f"no known rate for {region or 'this catalog'}: plans with Fargate pods need {FLAG_FORMAT}"
    return rate.describe()


def _coverage(coverage: Coverage) -> dict[str, Any]:
    return {"region": coverage.region, "known": coverage.known, "priced": coverage.priced, "listed": coverage.listed,
            "derived": coverage.derived, "pricesAsOf": coverage.as_of,
            "missingFamilies": list(coverage.missing_families)}


def _info(catalog: Catalog, *, regions: bool = False) -> dict[str, Any]:
    offered = sum(1 for it in catalog.instance_types if it.offerings)
    sources = dict(catalog.sources)
    sources["Fargate prices"] = _fargate_source(catalog.region)
    sources["EKS Auto Mode fee"] = AUTO_MODE_FEE_SOURCE  # not in any price: said beside a plan's cost
    coverage: dict[str, Any] = {}
    if catalog.embedded:
        own = region_coverage(catalog.region)
        coverage["coverage"] = {**_coverage(own), "text": own.describe()
                                + ("" if own.complete else f"; plans and listings here never use the others: "
                                   f"{remedy(catalog)}")}
        if regions:
            coverage["regions"] = [_coverage(region_coverage(r)) for r in sorted(embedded_regions())]
    return {
        "name": catalog.name,
        "kind": "embedded" if catalog.embedded else "user",
        "region": catalog.region,
        "zones": list(catalog.zones),
        **({"zonesSource": catalog.zones_source} if catalog.zones_source else {}),
        "instanceTypes": len(catalog.instance_types),
        "offered": offered,
        "estimatedPrices": any(o.estimated for it in catalog.instance_types for o in it.offerings),
        "sources": sources,
        **coverage,
    }


def _emit(data: Any, output: str) -> None:
    if output == "json":
        print(json.dumps(data, indent=2))
    else:
        print(yaml.safe_dump(data, sort_keys=False, default_flow_style=False), end="")


@catalog_app.callback()
def catalog(
    ctx: typer.Context,
    region: Annotated[
        str | None, region_option("Region of the embedded catalog (default: a ClusterConfig's region among PATH, "
                                  "else us-east-1).")
    ] = None,
    catalog_file: Annotated[
        str | None, typer.Option("--catalog", metavar="FILE", help="An InstanceCatalog file replacing the embedded catalog.")
    ] = None,
    allow_estimated_prices: Annotated[
        bool,
        typer.Option(
            "--allow-estimated-prices",
            help="Offer types unpriced in the region at us-east-1 × the region's median price ratio.",
        ),
    ] = False,
    spot_prices: Annotated[
        str | None,
        typer.Option(
            "--spot-prices", metavar="FILE",
            help="Real spot prices: `aws ec2 describe-spot-price-history` JSON, or a CSV "
                 "region,instance_type,usd_per_hour[,capacity_type][,zone]."
        ),
    ] = None,
    nodepool: Annotated[
        str | None,
        typer.Option("--nodepool", metavar="NAME", help="NodePool (in the PATH manifests) whose requirements apply."),
    ] = None,
    cpu: Annotated[str | None, typer.Option("--cpu", metavar="QUANTITY", help="Pod CPU request, e.g. 2 or 500m.")] = None,
    memory: Annotated[str | None, typer.Option("--memory", metavar="QUANTITY", help="Pod memory request, e.g. 4Gi.")] = None,
    request: Annotated[
        list[str] | None,
        typer.Option("--request", metavar="NAME=QUANTITY", help="Extra pod request, e.g. nvidia.com/gpu=1 (repeatable)."),
    ] = None,
    output: Annotated[CatalogFormat, output_option()] = CatalogFormat.table,
    info: Annotated[
        bool, typer.Option("--info", help="Show where the catalog's figures come from, and what each region covers.")
    ] = False,
    limit: Annotated[int | None, typer.Option("--limit", metavar="N", help="Show at most N types.", min=1)] = None,
    zones: Annotated[list[str] | None, zones_option(ZONES_HELP)] = None,
) -> None:
    if ctx.invoked_subcommand is not None:
        return
    cluster_zones = parse_zones(zones)
    paths: list[str] = list(ctx.meta.get(_PATHS_KEY, []))

    def body() -> int:
        _list(paths, region, catalog_file, allow_estimated_prices, spot_prices, nodepool, cpu, memory, request or [],
              output.value, info, limit, cluster_zones)
        return 0

    run_guarded(body, terminal_of(ctx))


def _list(paths: Sequence[str], region: str | None, catalog_file: str | None, allow_estimated_prices: bool,
          spot_prices: str | None, nodepool: str | None, cpu: str | None, memory: str | None, request: Sequence[str],
          output: str, info: bool, limit: int | None, zones: Sequence[str] = ()) -> None:
    if nodepool is not None and not paths:
        raise typer.BadParameter("needs the manifests that define the NodePool (PATH...)", param_hint="'--nodepool'")
    pod = _request(cpu, memory, request)
    pool: NodePool | None = None
    daemonsets: tuple[Any, ...] = ()
    node_class: NodeClass | None = None
    inventory = None
    source = "--region" if region else ""
    if paths:
        inventory = load_inventory(paths)
        pool = _pick_pool(inventory.nodepools, nodepool, paths)
        daemonsets = inventory.daemonsets
        node_class = _node_class(pool, inventory.nodeclasses) if pool else None
        if not region and inventory.region:
            region, source = inventory.region, inventory.region_source
    loaded = load_catalog(
        region, catalog_file, allow_estimated_prices=allow_estimated_prices, spot_prices_file=spot_prices
    )
    if zones or inventory is not None:  # the cluster's zones (`--zones`, or what the manifests say)
        loaded = with_cluster_zones(loaded, inventory or Inventory(), zones)
    if info:
        _print_info(loaded, output)
        return
    if inventory is not None and inventory.overlays:  # the NodeOverlays the manifests hold, as plan applies them
        loaded, _ = apply_node_overlays(loaded, inventory.overlays, inventory.nodepools)
        loaded = loaded.for_pool(pool.name) if pool is not None else loaded
    kubelet = _kubelet(pool, node_class) if pool else None
    types = instance_types_for(loaded, kubelet, node_class.ami_family if node_class else None)
    rows = select(loaded, types, pool=pool, daemonsets=daemonsets, request=pod)
    shown = rows[:limit] if limit else rows
    lacking = lacking_types(loaded, pool.requirements if pool else None, pod)
    if output == "catalog":
        _print_instance_catalog(loaded, shown)
        return
    if output == "table":
        region = "" if catalog_file else f"region {loaded.region} ({source or _DEFAULT_REGION})"
        footer = _footer(rows, shown, region) + ([_lacking_note(loaded, lacking, pool, pod)] if lacking else [])
        print(_table(shown, footer))
    else:
        _emit(
            {
                "apiVersion": API_VERSION,
                "kind": "InstanceTypeListing",  # what `catalog` shows; --catalog reads an InstanceCatalog
                "catalog": _info(loaded),
                "nodepool": pool.name if pool else None,
                "request": pod.formatted() if pod else None,
                "count": len(rows),
                "instanceTypes": [_selection_dict(s) for s in shown],
                "lacking": lacking,
            },
            output,
        )
    if not rows:
        print("no instance type of the catalog matches" + (f"; {_lacking_note(loaded, lacking, pool, pod)}"
                                                           if lacking and output != "table" else ""), file=sys.stderr)


_DEFAULT_REGION = "default: nothing names a region; --region R to choose"


def _footer(rows: Sequence[Selection], shown: Sequence[Selection], region: str) -> list[str]:
    """The table's notes: how many types, what `*` marks, the daemonset overhead, and the region (a user planning in
    us-east-2 must see when the listing is another region's; "" for a catalog file)."""
    footer = [f"{len(rows)} instance types" + (f" (showing {len(shown)})" if len(shown) < len(rows) else "")]
    if any(o.estimated for s in shown for o in s.offerings):
        footer.append("* estimated price (see `karpplan catalog --info`)")
    if rows and rows[0].daemon_overhead:
        footer.append(f"daemonset overhead counted per type, e.g. {rows[0].daemon_overhead}")
    return footer + ([region] if region else [])


def _print_instance_catalog(loaded: Catalog, shown: Sequence[Selection]) -> None:
    """The listed types as an InstanceCatalog, to edit and plan with (`--catalog FILE` reads it)."""
    names = {s.instance_type.name for s in shown}
    listed = replace(loaded, instance_types=tuple(it for it in loaded.instance_types if it.name in names))
    print(yaml.safe_dump(catalog_document(listed), sort_keys=False, default_flow_style=False), end="")


def _lacking_note(loaded: Catalog, lacking: list[str], pool: NodePool | None, pod: Resources | None) -> str:
    """Known types this listing would show but the region's catalog lacks, and how to get them."""
    why = [f"NodePool {pool.name} allows {'it' if len(lacking) == 1 else 'them'}"] if pool else []
    why += ["the pod fits"] if pod is not None else []
    because = f" ({', '.join(why)})" if why else ""
    return f"not listed{because}: {lacking_text(loaded, lacking)}; {remedy(loaded)}"


def _print_info(loaded: Catalog, output: str) -> None:
    data = _info(loaded, regions=True)
    if output != "table":
        _emit(data, output)
        return
    rows = [
        ("catalog", f"{data['name']} ({data['kind']})"),
        ("region", data["region"] or "-"),
        ("zones", ", ".join(data["zones"]) or "-"),
        ("types offered", f"{data['instanceTypes']} ({data['offered']} with an offering)"),
        *((("coverage", data["coverage"]["text"]),) if "coverage" in data else ()),
        *data["sources"].items(),
    ]
    width = max(len(key) for key, _ in rows) + 2
    for key, value in rows:
        print(f"{key + ':':<{width}}{_wrapped(value, width)}")
    if "regions" in data:
        print("\n" + _wrapped("Embedded regions (types priced of those known, and the date of their prices; the "
                             "others are missing there):", 0))
        for r in data["regions"]:
            derived = f" ({r['derived']} derived)" if r["derived"] else ""
            head = f"  {r['region']:<16}{r['priced']:>5} of {r['known']}{derived:<16}"
            print(head + _wrapped(f"as of {r['pricesAsOf']}", len(head)))


# ------------------------------------------------------------------------------------------ import/refresh
class _CatalogDumper(yaml.SafeDumper):
    """Block style, except small mappings of scalars (offerings, `aws` facts) on one line each."""


def _represent_dict(dumper: yaml.SafeDumper, data: dict[str, Any]) -> yaml.Node:
    small = len(data) <= 5 and all(not isinstance(v, dict | list) for v in data.values())
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=small)


def _represent_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    scalars = all(not isinstance(v, dict | list) for v in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=scalars)


_CatalogDumper.add_representer(dict, _represent_dict)
_CatalogDumper.add_representer(list, _represent_list)


def _write_catalog(loaded: Catalog, notes: Sequence[str], output: Path | None) -> None:
    text = "# Generated by karpplan; see docs/catalog.md for how prices and allocatable are derived.\n"
    text += yaml.dump(catalog_document(loaded), Dumper=_CatalogDumper, sort_keys=False, width=120)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    if output is None or str(output) == "-":
        print(text, end="")
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError.at(Origin(str(output)), f"cannot write: {exc.strerror or exc}") from None
    print(
        f"wrote {output} ({len(loaded.instance_types)} instance types, region {loaded.region})",
        file=sys.stderr,
    )


def _build_and_write(ctx: typer.Context, build: Callable[[], tuple[Catalog, Sequence[str]]], output: Path | None) -> None:
    def body() -> int:
        _write_catalog(*build(), output)
        return 0

    run_guarded(body, terminal_of(ctx))


CatalogOutputOption = Annotated[
    Path | None, typer.Option("-o", "--output", metavar="FILE", help="Write the catalog here (default stdout).")
]


@catalog_app.command("import")
def import_command(
    ctx: typer.Context,
    files: Annotated[list[str], typer.Argument(help="AWS CLI outputs (JSON/YAML) and price CSVs.")],
    output: CatalogOutputOption = None,
    region: Annotated[
        str | None, region_option("Region to build (default: from the offerings).")
    ] = None,
    name: Annotated[str | None, typer.Option("--name", metavar="NAME", help="metadata.name of the catalog.")] = None,
) -> None:
    """Build an InstanceCatalog from describe-instance-types, describe-instance-type-offerings and prices."""
    _build_and_write(ctx, lambda: build_catalog(read_import_files(files), region=region, name=name), output)


@catalog_app.command("refresh")
def refresh_command(
    ctx: typer.Context,
    region: Annotated[str, region_option("Region to query.")],
    output: CatalogOutputOption = None,
    profile: Annotated[
        str | None, typer.Option("--profile", metavar="NAME", help="AWS profile (default: boto3's usual chain).")
    ] = None,
) -> None:
    """Query EC2 and the Pricing API with your AWS credentials and write a catalog (needs the aws extra)."""
    _build_and_write(ctx, lambda: refresh_catalog(region, profile=profile), output)
