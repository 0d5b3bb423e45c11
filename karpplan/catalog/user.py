"""User catalogs: the `InstanceCatalog` document (`--catalog FILE`), read and written.

    apiVersion: karpplan.io/v1alpha1
    kind: InstanceCatalog
    metadata: {name: my-catalog}
    region: us-east-1                # optional, informational
    zones: [test-zone-1, test-zone-2]
    instanceTypes:
      - name: default-instance-type
        arch: amd64                  # default amd64
        os: linux                    # a string or a list; default linux
        capacity:    {cpu: "4", memory: 4Gi, pods: "5"}
        allocatable: {cpu: 3900m, memory: 4086Mi, pods: "5"}   # optional
        labels: {size: small}
        offerings:
          - {zone: test-zone-1, capacityType: on-demand, price: 0.83}
        aws: {vcpu: 4, memoryMiB: 4096, eniPods: 5}             # optional EC2 facts (karpplan extension)

How allocatable is found, first rule that applies:
1. `allocatable` given: used as written (missing `pods` and extended resources are copied from capacity).
2. `aws` given: capacity and allocatable computed from the EC2 facts exactly as for the embedded catalog,
   so EC2NodeClass kubelet settings apply with Karpenter's rules; `capacity` may add extended resources.
3. otherwise derived from `capacity` with the EKS/Karpenter formula, `capacity.pods` standing in for the
   ENI-limited max pods (kubelet-reserved.md).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from karpplan.catalog import allocatable
from karpplan.catalog.nodelabels import AWS_LABEL_SUFFIXES, to_karpenter_key
from karpplan.catalog.prices import CAPACITY_TYPES, parse_price
from karpplan.catalog.types import ON_DEMAND, Catalog, InstanceShape, InstanceType, Offering
from karpplan.errors import InputError, InputProblem, Origin
from karpplan.inputs.loader import Document, load_documents
from karpplan.inputs.origins import LineDict, LineList, origin_of
from karpplan.model.labels import ARCH, AWS_PREFIX, INSTANCE_TYPE, OS
from karpplan.model.quantity import QuantityError, scalar_text
from karpplan.model.resources import CPU, EPHEMERAL, MEMORY, PODS, Resources
from karpplan.model.security_group_policies import PRIVATE_IPV4

API_VERSION = "karpplan.io/v1alpha1"
KIND = "InstanceCatalog"
_TOP_FIELDS = ("apiVersion", "kind", "metadata", "region", "zones", "instanceTypes")
_TYPE_FIELDS = ("name", "arch", "os", "capacity", "allocatable", "labels", "offerings", "aws")
_OFFERING_FIELDS = ("zone", "capacityType", "price", "estimated", "available")
_AWS_FIELDS = ("vcpu", "memoryMiB", "eniPods", "ephemeralGiB", "localStorageGB", "ipv4PerEni")
ARCHES = ("amd64", "arm64")


class _Reader:
    """Collects problems with `file:line` while walking one InstanceCatalog document."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.problems: list[InputProblem] = []

    def origin(self, node: object, key: object = None) -> Origin:
        return origin_of(self.doc, node, key)

    def fail(self, node: object, key: object, message: str) -> None:
        self.problems.append(InputProblem(self.origin(node, key), message))

    def unknown_fields(self, node: Mapping[str, Any], known: Sequence[str], where: str) -> None:
        for key in node:
            if key not in known:
                self.fail(node, key, f"{where}: unknown field {key!r} (known: {', '.join(known)})")

    def mapping(self, node: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any] | None:
        value = node.get(key)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self.fail(node, key, f"{where}.{key}: must be a mapping")
            return None
        return value

    def string(self, node: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> str | None:
        value = node.get(key)
        if value is None:
            if required:
                self.fail(node, None, f"{where}: {key} is required")
            return None
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            self.fail(node, key, f"{where}.{key}: must be a string")
            return None
        text = str(value).strip()
        if not text and required:
            self.fail(node, key, f"{where}.{key}: must not be empty")
            return None
        return text

    def resources(self, node: Mapping[str, Any], key: str, where: str) -> Resources | None:
        raw = self.mapping(node, key, where)
        if raw is None:
            return None
        amounts: dict[str, int] = {}
        ok = True
        for name, value in raw.items():
            try:
                text = scalar_text(value)
                amount = Resources.parse({name: text}).get(name)
            except QuantityError as exc:
                self.fail(raw, name, f"{where}.{key}.{name}: {exc}")
                ok = False
                continue
            if amount < 0:
                self.fail(raw, name, f"{where}.{key}.{name}: must not be negative")
                ok = False
                continue
            amounts[name] = amount
        return Resources(amounts) if ok else None

    def integer(self, node: Mapping[str, Any], key: str, where: str, *, required: bool) -> int | None:
        value = node.get(key)
        if value is None:
            if required:
                self.fail(node, None, f"{where}: {key} is required")
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self.fail(node, key, f"{where}.{key}: must be a non-negative integer")
            return None
        return value


def _label_value(value: object) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    return None


def parse_catalog(doc: Document, *, region: str | None = None) -> Catalog:
    """An InstanceCatalog document as a `Catalog`; raises InputError listing every problem with its line."""
    r = _Reader(doc)
    body = doc.body
    if doc.api_version != API_VERSION or doc.kind != KIND:
        r.fail(body, "kind" if doc.api_version == API_VERSION else "apiVersion",
               f"expected apiVersion {API_VERSION} and kind {KIND}, got {doc.api_version or '(none)'} "
               f"{doc.kind or '(none)'}")  # fmt: skip
        raise InputError(r.problems)
    r.unknown_fields(body, _TOP_FIELDS, KIND)
    name = doc.name or Path(doc.origin.file).stem
    file_region = r.string(body, "region", KIND)

    zones: tuple[str, ...] | None = None
    raw_zones = body.get("zones")
    if raw_zones is not None:
        if not isinstance(raw_zones, list) or not all(isinstance(z, str) and z for z in raw_zones):
            r.fail(body, "zones", "zones: must be a list of zone names")
        else:
            zones = tuple(dict.fromkeys(raw_zones))

    raw_types = body.get("instanceTypes")
    if raw_types is None:
        raw_types = LineList()
    if not isinstance(raw_types, list):
        r.fail(body, "instanceTypes", "instanceTypes: must be a list")
        raw_types = LineList()

    parsed: list[tuple[InstanceType, Origin]] = []
    seen: dict[str, Origin] = {}
    for index, entry in enumerate(raw_types):
        where = f"instanceTypes[{index}]"
        if not isinstance(entry, Mapping):
            r.fail(raw_types, index, f"{where}: must be a mapping")
            continue
        it = _instance_type(r, entry, where, zones)
        if it is None:
            continue
        if it.name in seen:
            r.fail(entry, "name", f"{where}: instance type {it.name!r} is already defined at {seen[it.name]}")
            continue
        seen[it.name] = r.origin(entry, "name")
        parsed.append((it, seen[it.name]))
    if r.problems:
        raise InputError(r.problems)

    types = _with_absent_keys([it for it, _ in parsed])
    all_zones = zones if zones is not None else tuple(sorted({o.zone for it in types for o in it.offerings}))
    return Catalog(
        name=name,
        region=file_region or region or "",
        zones=all_zones,
        instance_types=tuple(types),
        sources={"catalog": f"{doc.origin.file} (InstanceCatalog {name})"},
        estimated_prices=any(o.estimated for it in types for o in it.offerings),
        embedded=False,
    )


def _instance_type(
    r: _Reader, entry: Mapping[str, Any], where: str, zones: tuple[str, ...] | None
) -> InstanceType | None:
    before = len(r.problems)
    r.unknown_fields(entry, _TYPE_FIELDS, where)
    name = r.string(entry, "name", where, required=True)
    if name:
        where = f"instanceType {name}"
    arch = r.string(entry, "arch", where) or "amd64"
    os_values = _os_values(r, entry, where)
    labels = _labels(r, entry, where, name, arch, os_values)
    capacity = r.resources(entry, "capacity", where)
    given_allocatable = r.resources(entry, "allocatable", where)
    shape = _shape(r, entry, where, capacity, arch)
    offerings = _offerings(r, entry, where, zones)
    if len(r.problems) > before or name is None:
        return None
    sizes = _sizes(r, entry, where, capacity, given_allocatable, shape)
    if sizes is None or len(r.problems) > before:
        return None
    capacity, alloc, shape, derived = sizes
    if "windows" in os_values and PRIVATE_IPV4 not in alloc:  # no address limit said: one per pod slot
        capacity, alloc = capacity + {PRIVATE_IPV4: capacity.get(PODS)}, alloc + {PRIVATE_IPV4: alloc.get(PODS)}
    return InstanceType(
        name=name,
        labels=dict(sorted(labels.items())),
        capacity=capacity,
        allocatable=alloc,
        offerings=offerings,
        shape=shape,
        os_values=os_values,
        allocatable_derived=derived,
    )


def _labels(r: _Reader, entry: Mapping[str, Any], where: str, name: str | None, arch: str,
            os_values: tuple[str, ...]) -> dict[str, str]:
    """The type's labels as written (keys in Karpenter's spelling), with its name, arch and OS set; a label
    that contradicts them is a problem."""
    labels: dict[str, str] = {}
    raw_labels = r.mapping(entry, "labels", where)
    for key, value in (raw_labels or {}).items():
        text = _label_value(value)
        if not key or text is None:
            r.fail(raw_labels, key, f"{where}.labels: {key!r} must map a key to a string value")
            continue
        labels[to_karpenter_key(key)] = text
    for key, expected in ((INSTANCE_TYPE, name), (ARCH, arch)):
        if key in labels and labels[key] != expected:
            r.fail(
                raw_labels, key, f"{where}.labels: {key}={labels[key]} contradicts the type's {expected!r}"
            )
    if OS in labels and (labels[OS],) != os_values:
        r.fail(raw_labels, OS, f"{where}.labels: {OS}={labels[OS]} contradicts os {list(os_values)}")
    if name:
        labels[INSTANCE_TYPE] = name
    labels[ARCH] = arch
    if len(os_values) == 1:
        labels[OS] = os_values[0]
    else:
        labels.pop(OS, None)
    return labels


def _sizes(r: _Reader, entry: Mapping[str, Any], where: str, capacity: Resources | None,
           given_allocatable: Resources | None, shape: InstanceShape | None
           ) -> tuple[Resources, Resources, InstanceShape | None, bool] | None:
    """Capacity, allocatable, shape and whether allocatable was derived: the given allocatable (completed),
    else computed from the aws facts (`shape`) as Karpenter does, else derived from capacity; None (a
    problem) with none of them."""
    if given_allocatable is not None:
        capacity = capacity if capacity is not None else given_allocatable
        alloc = _complete_allocatable(given_allocatable, capacity)
        for resource, amount in alloc.items():
            if amount > capacity.get(resource, amount):
                r.fail(entry.get("allocatable"), resource,
                       f"{where}.allocatable.{resource}: {alloc.formatted()[resource]} exceeds capacity "
                       f"{capacity.formatted().get(resource, '0')}")  # fmt: skip
        return capacity, alloc, None, False
    if shape is not None:
        node = allocatable.compute(shape, None, None, _extended(capacity))
        for resource in allocatable.CORE_RESOURCES:
            if (
                capacity is not None
                and resource in capacity
                and capacity[resource] != node.capacity.get(resource)
            ):
                r.fail(entry.get("capacity"), resource,
                       f"{where}.capacity.{resource}: {capacity.formatted()[resource]} disagrees with "
                       f"{node.capacity.formatted().get(resource, '0')} computed from aws")  # fmt: skip
        return node.capacity, node.allocatable, shape, False
    if capacity is not None:
        node = allocatable.derive_from_capacity(capacity)
        return node.capacity, node.allocatable, None, True
    r.fail(entry, None, f"{where}: give capacity, allocatable, or aws facts")
    return None


def _extended(capacity: Resources | None) -> dict[str, int]:
    return {k: v for k, v in (capacity or Resources()).items() if k not in allocatable.CORE_RESOURCES}


def _complete_allocatable(alloc: Resources, capacity: Resources) -> Resources:
    """Pods and extended resources the node has but `allocatable` left out are fully allocatable."""
    extra = {k: v for k, v in capacity.items() if k not in alloc and k not in (CPU, MEMORY, EPHEMERAL)}
    if PODS not in alloc and PODS not in capacity:
        extra[PODS] = allocatable.NON_ENI_MAX_PODS
    return alloc + extra


def _os_values(r: _Reader, entry: Mapping[str, Any], where: str) -> tuple[str, ...]:
    raw = entry.get("os")
    if raw is None:
        return ("linux",)
    if isinstance(raw, str) and raw.strip():
        return (raw.strip(),)
    if isinstance(raw, list) and raw and all(isinstance(v, str) and v.strip() for v in raw):
        return tuple(dict.fromkeys(v.strip() for v in raw))
    r.fail(entry, "os", f"{where}.os: must be an OS name or a non-empty list of them")
    return ("linux",)


def _shape(
    r: _Reader, entry: Mapping[str, Any], where: str, capacity: Resources | None, arch: str
) -> InstanceShape | None:
    raw = r.mapping(entry, "aws", where)
    if raw is None:
        return None
    r.unknown_fields(raw, _AWS_FIELDS, f"{where}.aws")
    vcpu = r.integer(raw, "vcpu", f"{where}.aws", required=True)
    memory = r.integer(raw, "memoryMiB", f"{where}.aws", required=True)
    eni = r.integer(raw, "eniPods", f"{where}.aws", required=False)
    ephemeral = r.integer(raw, "ephemeralGiB", f"{where}.aws", required=False)
    local_storage = r.integer(raw, "localStorageGB", f"{where}.aws", required=False)
    ipv4_per_eni = r.integer(raw, "ipv4PerEni", f"{where}.aws", required=False)
    if vcpu is None or memory is None:
        return None
    if eni is None:
        eni = (capacity or Resources()).get(PODS) or allocatable.NON_ENI_MAX_PODS
    return InstanceShape(
        vcpu=vcpu,
        memory_mib=memory,
        arch=arch,
        eni_pods=eni,
        ephemeral_gib=ephemeral if ephemeral is not None else allocatable.DEFAULT_ROOT_VOLUME_GIB,
        local_storage_gb=local_storage or 0,
        ipv4_per_eni=ipv4_per_eni or 0,
    )


def _offerings(
    r: _Reader, entry: Mapping[str, Any], where: str, zones: tuple[str, ...] | None
) -> tuple[Offering, ...]:
    raw = entry.get("offerings")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        r.fail(entry, "offerings", f"{where}.offerings: must be a list")
        return ()
    out: list[Offering] = []
    seen: set[tuple[str, str]] = set()
    for index, item in enumerate(raw):
        at = f"{where}.offerings[{index}]"
        if not isinstance(item, Mapping):
            r.fail(raw, index, f"{at}: must be a mapping")
            continue
        r.unknown_fields(item, _OFFERING_FIELDS, at)
        zone = r.string(item, "zone", at, required=True)
        capacity_type = r.string(item, "capacityType", at) or ON_DEMAND
        if capacity_type not in CAPACITY_TYPES:
            r.fail(item, "capacityType", f"{at}.capacityType: must be one of {', '.join(CAPACITY_TYPES)}")
            continue
        if "price" not in item:
            r.fail(item, None, f"{at}: price is required (USD per hour)")
            continue
        try:
            price = parse_price(item["price"], r.origin(item, "price"))
        except InputError as exc:
            r.problems.extend(exc.problems)
            continue
        flags: dict[str, bool] = {}
        for flag in ("estimated", "available"):
            value = item.get(flag)
            if value is not None and not isinstance(value, bool):
                r.fail(item, flag, f"{at}.{flag}: must be true or false")
            elif value is not None:
                flags[flag] = value
        if zone is None:
            continue
        if zones is not None and zone not in zones:
            r.fail(item, "zone", f"{at}.zone: {zone!r} is not one of the catalog's zones {list(zones)}")
            continue
        if (zone, capacity_type) in seen:
            r.fail(item, None, f"{at}: a {capacity_type} offering in {zone} is already listed")
            continue
        seen.add((zone, capacity_type))
        if flags.get("available", True):
            out.append(Offering(zone, capacity_type, price, flags.get("estimated", False)))
    return tuple(out)


def _with_absent_keys(types: list[InstanceType]) -> list[InstanceType]:
    """Every catalog label key a type lacks becomes `DoesNotExist` for it (the fake provider's `special`)."""
    keys = {k for it in types for k in it.labels if k not in (INSTANCE_TYPE, ARCH, OS)}
    aws_keys = {AWS_PREFIX + suffix for suffix in AWS_LABEL_SUFFIXES}
    out = []
    for it in types:
        # A type described by EC2 facts lacks every provider label it does not carry (Karpenter's view).
        known = keys | aws_keys if it.shape is not None else keys
        missing = frozenset(known - set(it.labels))
        out.append(_replace(it, absent_label_keys=missing) if missing else it)
    return out


def _replace(it: InstanceType, **changes: Any) -> InstanceType:
    return dataclasses.replace(it, **changes)


def load_user_catalog(path: str, *, region: str | None = None) -> Catalog:
    """Read `--catalog FILE`: exactly one InstanceCatalog document."""
    documents = load_documents([path])
    catalogs = [d for d in documents if d.kind == KIND]
    if len(catalogs) != 1:
        origin = (
            catalogs[1].origin if len(catalogs) > 1 else (documents[0].origin if documents else Origin(path))
        )
        found = f"{len(catalogs)} InstanceCatalog documents" if catalogs else "no InstanceCatalog document"
        raise InputError.at(
            origin, f"--catalog needs exactly one {KIND} document ({API_VERSION}); found {found}"
        )
    return parse_catalog(catalogs[0], region=region)


# ------------------------------------------------------------------------------------------ writing
def _price(value: float) -> float:
    return float(f"{value:.10g}") if math.isfinite(value) else value


def catalog_document(catalog: Catalog, *, include_allocatable: bool = True) -> dict[str, Any]:
    """A Catalog as an InstanceCatalog document (what `catalog import`/`refresh` write).

    Types with EC2 facts are written with their `aws` block and capacity (allocatable then follows
    from them, kubelet settings included); others with capacity and allocatable.
    """
    types: list[dict[str, Any]] = []
    for it in catalog.instance_types:
        entry: dict[str, Any] = {"name": it.name, "arch": it.labels.get(ARCH, "amd64")}
        entry["os"] = it.os_values[0] if len(it.os_values) == 1 else list(it.os_values)
        entry["capacity"] = it.capacity.formatted()
        # Allocatable that karpplan computes (EC2 facts, or derived from capacity) is left for the reader
        # to compute again, so kubelet settings still apply to it.
        if include_allocatable and it.shape is None and not it.allocatable_derived:
            entry["allocatable"] = it.allocatable.formatted()
        extra = {k: v for k, v in it.labels.items() if k not in (INSTANCE_TYPE, ARCH, OS)}
        if extra:
            entry["labels"] = extra
        if it.shape is not None:
            entry["aws"] = {
                "vcpu": it.shape.vcpu,
                "memoryMiB": it.shape.memory_mib,
                "eniPods": it.shape.eni_pods,
            }
            if it.shape.ephemeral_gib != allocatable.DEFAULT_ROOT_VOLUME_GIB:
                entry["aws"]["ephemeralGiB"] = it.shape.ephemeral_gib
            if it.shape.local_storage_gb:
                entry["aws"]["localStorageGB"] = it.shape.local_storage_gb
            if it.shape.ipv4_per_eni:
                entry["aws"]["ipv4PerEni"] = it.shape.ipv4_per_eni
        offerings = []
        for o in it.offerings:
            item: dict[str, Any] = {"zone": o.zone, "capacityType": o.capacity_type, "price": _price(o.price)}
            if o.estimated:
                item["estimated"] = True
            offerings.append(item)
        entry["offerings"] = offerings
        types.append(entry)
    document: dict[str, Any] = {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": catalog.name}}
    if catalog.region:
        document["region"] = catalog.region
    document["zones"] = list(catalog.zones)
    document["instanceTypes"] = types
    return document


def parse_catalog_body(body: Mapping[str, Any], file: str, *, region: str | None = None) -> Catalog:
    """Parse an InstanceCatalog held in plain dicts (no line numbers), e.g. one karpplan just built."""
    return parse_catalog(Document(_line_dict(body), Origin(file, 1)), region=region)


def _line_dict(body: Mapping[str, Any]) -> LineDict:
    def convert(value: object) -> object:
        if isinstance(value, Mapping):
            return LineDict({str(k): convert(v) for k, v in value.items()})
        if isinstance(value, list | tuple):
            return LineList(convert(v) for v in value)
        return value

    return LineDict({str(k): convert(v) for k, v in body.items()})
