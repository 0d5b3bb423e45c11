"""Advice from the instance-type catalog for "no instance type ..." reasons, with or without manifests.

Karpenter prints what it asked for (resources with DaemonSet overhead, the requirements) but not why no
type qualified. The catalog can tell the cases apart, and each has a different fix:

- an extended resource no type offers (a device-plugin resource such as github.com/fuse), or offers only
  outside the requirements (GPUs, Neuron, pod ENIs): name the resource and how to get it;
- a requirement that alone empties the type list (a zone the region lacks, `zone DoesNotExist`, a family
  that does not exist): name it and the types that would qualify if it were widened, with their price;
- a request above the allocatable of the largest allowed type: then, and only then, lower the requests,
  naming the type and both figures;
- otherwise allowed types do fit: the size is not the cause (limits, offerings, capacity errors are).
Requirements are quoted whole, as Karpenter printed them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from karpplan.catalog.coverage import lacking_text, lacking_types
from karpplan.catalog.types import Catalog, InstanceType
from karpplan.explain.structure import NO_INSTANCE_TYPE, ParsedRequirement, Reason
from karpplan.model.aws_zones import LOCAL_ZONE
from karpplan.model.labels import ARCH, CAPACITY_TYPE, ZONE
from karpplan.model.quantity import QuantityError, format_resource
from karpplan.model.requirements import Requirement, Requirements
from karpplan.model.resources import CPU, EPHEMERAL, MEMORY, PODS, Resources

_STANDARD = (CPU, MEMORY, PODS, EPHEMERAL)
# vendors whose device resources Karpenter's AWS provider reports on the types that have them
_VENDOR_PREFIXES = ("nvidia.com/", "amd.com/", "aws.amazon.com/neuron", "habana.ai/", "vpc.amazonaws.com/")
_TRUNCATED = re.compile(r"\band \d+ others?\b|…|\.\.\.")  # Karpenter's cut value list: `[c d g and 4 others]`
_BOUND = re.compile(r"^(?P<op>[<>])(?P<n>-?\d+)")
# an AWS Local Zone (us-west-2-lax-1a) or Wavelength Zone (us-east-1-wl1-bos-wlz-1) of its parent region

# how to get an extended resource onto a node, by name prefix
_HOW_TO_GET = (
    ("vpc.amazonaws.com/pod-eni",
     "Security groups for pods request vpc.amazonaws.com/pod-eni: each such pod takes one branch network interface "
     "of its node's trunk interface, and a node offers only its instance type's branch-interface limit (the VPC "
     "resource controller's table: m5.large 9, m5.xlarge 18, m5.2xlarge 38, m5.4xlarge to 12xlarge 54, 107 on the "
     "largest Nitro sizes; t-family types such as t3 and t4g and Xen-based families such as m4, c4 and r4 are not "
     "trunking compatible and offer none), so once every node's branch interfaces are taken the pod needs another "
     "node or a larger type, not smaller requests. Nodes offer it only with ENABLE_POD_ENI=true on the VPC CNI "
     "(aws-node) and a trunk interface attached, which takes one of the node's network-interface slots (kubectl get "
     "nodes -L vpc.amazonaws.com/has-trunk-attached shows which nodes have one; replace nodes that came up with every "
     "slot in use), on types the controller supports (a family it does not list yet never offers it, so the pool "
     "must allow supported ones), and Karpenter up to v0.31 counts it only with its setting aws.enablePodENI=true"),
    ("vpc.amazonaws.com/efa", "EFA devices come only with EFA-capable types (e.g. p4d, p5, c5n, hpc) and the EFA device plugin"),
    ("nvidia.com/gpu", "GPUs come with GPU instance families (g and p categories); the pool's requirements must allow "
                       "them and the NVIDIA device plugin must run on those nodes"),
    ("amd.com/gpu", "AMD GPUs come with g4ad-family types and the AMD device plugin"),
    ("aws.amazon.com/neuron", "Neuron devices come with inf and trn families and the Neuron device plugin"),
    ("habana.ai/gaudi", "Gaudi accelerators come only with dl1 types and the Habana device plugin"),
    ("hugepages-", "Huge pages exist only once the kubelet pre-allocates them (node class user data), so no instance "
                   "type reports them before the node is up: Karpenter launches a node for them only when a "
                   "NodeOverlay (karpenter.sh/v1alpha1, Karpenter v1.7+) adds them to the pool's types' capacity, "
                   "and before v1.7 it cannot"),
)


@dataclass(frozen=True)
class Ask:
    """The reason's requirements as the catalog can judge them."""

    type_reqs: tuple[Requirement, ...]
    zones: Requirement | None
    capacity: Requirement | None
    skipped: tuple[str, ...]  # requirements the log cut short (values "... and 4 others"): not judged


def _requirement(q: ParsedRequirement) -> Requirement | None:
    values = list(q.values)
    if _TRUNCATED.search(" ".join(values)):
        return None
    bound = _BOUND.match(q.extra.strip()) if q.extra else None
    try:
        if bound is not None and q.operator == "Exists":
            return Requirement.of(q.key, "Gt" if bound.group("op") == ">" else "Lt", [bound.group("n")])
        return Requirement.of(q.key, q.operator, values)
    except ValueError:
        return None


# EKS Auto Mode's NodePools select instance types with eks.amazonaws.com/instance-* labels: the same attributes as
# Karpenter's karpenter.k8s.aws/instance-* ones (category, family, generation, cpu, size, ...)
_EKS_AUTO_PREFIX, _KARPENTER_AWS_PREFIX = "eks.amazonaws.com/instance-", "karpenter.k8s.aws/instance-"


def ask_of(reqs: Sequence[ParsedRequirement], catalog: Catalog) -> Ask:
    known_keys = {k for t in catalog.instance_types for k in t.labels}
    type_reqs: list[Requirement] = []
    zones = capacity = None
    skipped: list[str] = []
    for q in reqs:
        if q.key.startswith(_EKS_AUTO_PREFIX):
            q = ParsedRequirement(_KARPENTER_AWS_PREFIX + q.key.removeprefix(_EKS_AUTO_PREFIX), q.operator, q.values,
                                  q.extra)
        req = _requirement(q)
        if req is None:
            skipped.append(str(q))
        elif q.key == ZONE:
            zones = req
        elif q.key == CAPACITY_TYPE:
            capacity = req
        elif q.key in known_keys:
            type_reqs.append(req)
    return Ask(tuple(type_reqs), zones, capacity, tuple(skipped))


def _offered(t: InstanceType, zones: Requirement | None, capacity: Requirement | None) -> list[float]:
    return [o.price for o in t.offerings
            if (zones is None or zones.matches({ZONE: o.zone})) and (capacity is None or capacity.matches({CAPACITY_TYPE: o.capacity_type}))]


def allowed(catalog: Catalog, ask: Ask, drop: str | None = None) -> list[tuple[InstanceType, float]]:
    """Types the requirements allow with an offering they allow, each with its cheapest such price."""
    out: list[tuple[InstanceType, float]] = []
    for t in catalog.instance_types:
        if any(r.key != drop and not r.matches(t.labels) for r in ask.type_reqs):
            continue
        prices = _offered(t, None if drop == ZONE else ask.zones, None if drop == CAPACITY_TYPE else ask.capacity)
        if prices:
            out.append((t, min(prices)))
    return out


def _fmt(name: str, amount: int) -> str:
    if name in (MEMORY, EPHEMERAL) or name.startswith("hugepages-"):
        mib = amount / (1 << 20)
        return f"{mib / 1024:.1f}Gi" if mib >= 10240 and mib % 1024 else (f"{mib:.0f}Mi" if mib % 1024 else f"{mib / 1024:.0f}Gi")
    return format_resource(name, amount)


# Requirements that choose a type's size or kind: widening them is the fix. The others (architecture, OS,
# hypervisor, capacity type, zone, custom labels) hold for whatever type the pool would launch instead.
_SIZE_KEYS = frozenset({"node.kubernetes.io/instance-type", *(_KARPENTER_AWS_PREFIX + k for k in (
    "type", "size", "cpu", "memory", "family", "category", "generation"))})


def _wider(catalog: Catalog, ask: Ask, fits: Callable[[InstanceType], bool]
           ) -> list[tuple[InstanceType, float, bool]]:
    """Types that fit and keep every requirement but the size ones, offered in the asked zones and capacity types,
    each with its cheapest such price and whether that price is an estimate."""
    keep = [r for r in ask.type_reqs if r.key not in _SIZE_KEYS]
    out: list[tuple[InstanceType, float, bool]] = []
    for t in catalog.instance_types:
        if not fits(t) or any(not r.matches(t.labels) for r in keep):
            continue
        offers = [o for o in t.offerings if (ask.zones is None or ask.zones.matches({ZONE: o.zone}))
                  and (ask.capacity is None or ask.capacity.matches({CAPACITY_TYPE: o.capacity_type}))]
        if offers:
            best = min(offers, key=lambda o: (o.price, o.estimated))
            out.append((t, best.price, best.estimated))
    return out


def _listed_priced(types: Sequence[tuple[InstanceType, float, bool]], n: int = 4) -> str:
    """`r6a.2xlarge ($0.4536/h)`, an estimated price marked ~ (a spot estimate, say)."""
    best = sorted(types, key=lambda tp: (tp[1], tp[0].name))[:n]
    return ", ".join(f"{t.name} ({'~' if estimated else ''}${p:.4f}/h)" for t, p, estimated in best)


def _listed(types: Sequence[tuple[InstanceType, float]], n: int = 4) -> str:
    """`g4dn.xlarge ($0.5260/h)`; a price only an estimated offering has (a spot estimate) marked `~`, and one only
    spot offerings have said to be spot (`~$0.2104/h spot`): the on-demand price is what a pool without spot pays."""
    best = sorted(types, key=lambda tp: (tp[1], tp[0].name))[:n]
    return ", ".join(f"{t.name} ({'~' if _estimated(t, p) else ''}${p:.4f}/h{' spot' if _spot(t, p) else ''})"
                     for t, p in best)


def _spot(t: InstanceType, price: float) -> bool:
    offers = [o for o in t.offerings if o.price == price]
    return bool(offers) and all(o.capacity_type == "spot" for o in offers)


def _estimated(t: InstanceType, price: float) -> bool:
    offers = [o for o in t.offerings if o.price == price]
    return bool(offers) and all(o.estimated for o in offers)


def how_to_get(name: str) -> str | None:
    """How a node comes to offer an extended resource, when karpplan knows."""
    text = next((text for prefix, text in _HOW_TO_GET if name.startswith(prefix)), None)
    return text + "." if text else None


# what a pod needs of a node whatever type it gets: types offered as the alternative must keep these
_PLATFORM_KEYS = ("kubernetes.io/arch", "kubernetes.io/os")


def _alternatives(catalog: Catalog, ask: Ask | None, ok: list[tuple[InstanceType, float]], name: str,
                  amount: int, asked: Resources | None = None) -> str:
    """Types with `amount` of `name` as the pool would buy them: the log's other requirements kept (capacity type,
    zones, platform), priced as offered there (an estimate marked ~), and of the allowed types' architecture when
    they share one (an arm64 g5g is no answer for a pod whose pool allows only amd64 g4dn: its image may not run)."""
    if ask is None:
        return ""
    rest = Resources({k: v for k, v in (asked or Resources()).items() if k != EPHEMERAL})  # see _extended
    wider = _same_architecture(_wider(catalog, ask, lambda t: t.allocatable.get(name) >= amount
                                      and rest.fits_in(t.allocatable)), ask, ok)
    return _listed_priced(wider) if wider else ""


def _same_architecture(wider: list[tuple[InstanceType, float, bool]], ask: Ask, ok: list[tuple[InstanceType, float]]
                       ) -> list[tuple[InstanceType, float, bool]]:
    """`wider` narrowed to the architecture every allowed type shares, when the log names none: the pod's image
    was built for the types it could have had (kept whole when none of `wider` has it)."""
    archs = {t.labels.get(ARCH) for t, _ in ok}
    if len(archs) != 1 or any(r.key == ARCH for r in ask.type_reqs):
        return wider
    return [w for w in wider if w[0].labels.get(ARCH) in archs] or wider


def _other_vendor(name: str, ok: list[tuple[InstanceType, float]]) -> str:
    """The accelerator the allowed types carry instead of the one asked for (g4ad's amd.com/gpu for nvidia.com/gpu)."""
    if not name.startswith(_VENDOR_PREFIXES[:4]):
        return ""
    carry = {(k, t.name) for t, _ in ok for k, v in t.allocatable.items()
             if k != name and v > 0 and k.startswith(_VENDOR_PREFIXES[:4])}
    if not carry:
        return ""
    kinds = sorted({k for k, _ in carry})
    examples = ", ".join(sorted({n for _, n in carry})[:3])
    return (f" The types the requirements allow carry {' / '.join(kinds)} instead ({examples}): another vendor's "
            f"accelerator, which a request for {name} never uses - allow types with {name}, or request "
            f"{kinds[0]} if the workload runs on it.")


def _extended(asked: Resources, catalog: Catalog, ok: list[tuple[InstanceType, float]],
              known: bool, ask: Ask | None = None) -> tuple[list[str], str | None]:
    """Sentences about the extended resources the pod asks for, and the one that is the whole cause, if any."""
    out: list[str] = []
    # huge pages first (no type ever reports them), then unknown resources, then vendor devices
    names = sorted((n for n, a in asked.items() if n not in _STANDARD and a > 0),
                   key=lambda n: (not n.startswith("hugepages-"), n.startswith(_VENDOR_PREFIXES), n))
    for name in names:
        amount = asked.get(name)
        how = how_to_get(name)
        platform = [r for r in (ask.type_reqs if ask is not None else ()) if r.key in _PLATFORM_KEYS]
        offering = [(t, t.cheapest_price) for t in catalog.instance_types if t.allocatable.get(name) >= amount
                    and all(r.matches(t.labels) for r in platform)]  # an arm64 type is no answer for an amd64 pod
        in_reqs = [(t, p) for t, p in ok if t.allocatable.get(name) >= amount]
        if not offering and name.startswith(_VENDOR_PREFIXES):
            out.append(f"The pod asks for {_fmt(name, amount)} of {name}; the {catalog.region} catalog has no type "
                       "reporting it, so karpplan cannot check which allowed types offer it." + (f" {how}" if how else ""))
            continue
        if not offering:
            out.append(f"The pod asks for {_fmt(name, amount)} of {name}, and no instance type in the {catalog.region} "
                       f"catalog reports that resource: no node Karpenter could launch has it, so no instance type "
                       f"qualifies whatever its CPU and memory - the pod's size is not the problem. "
                       + (how or "A resource a device plugin advertises only once the node runs is unknown to "
                          "Karpenter before launch (it supports only resources the instance types report): run such "
                          "pods on nodes that already advertise it (a node group with the device plugin), or drop the "
                          "request from the pod's resources."))
            return out, name
        if known and not in_reqs and ask is not None and lacking_types(catalog, Requirements(ask.type_reqs), asked):
            continue  # the allowed types that hold it are ones this region's catalog lacks: `_lacking` says so
        fewer = [t for t, _ in ok if 0 < t.allocatable.get(name) < amount]
        # the pod's other requests, but ephemeral storage: a node's comes from its EC2NodeClass's volume, not its type
        rest = Resources({k: v for k, v in asked.items() if k not in (name, EPHEMERAL)})
        if known and not in_reqs and fewer:
            most = max(fewer, key=lambda t: (t.allocatable.get(name), t.name))
            also = _also_short(rest, fewer)
            out.append(f"The pod asks for {_fmt(name, amount)} of {name}, but the types the requirements allow offer "
                       f"fewer ({', '.join(sorted({t.name for t in fewer})[:4])}; at most {_fmt(name, most.allocatable.get(name))}, "
                       f"{most.name}){also}: allow a larger type that has {_fmt(name, amount)}"
                       f"{' and room for the rest' if also else ''}, e.g. "
                       f"{_alternatives(catalog, ask, ok, name, amount, asked) or _listed(offering)}, or "
                       f"request no more than {_fmt(name, most.allocatable.get(name))}"
                       f"{' and lower the other requests to what those types hold' if also else ''}."
                       + (f" {how}" if how else ""))
            return out, name
        if known and not in_reqs:
            out.append(f"The pod asks for {_fmt(name, amount)} of {name}; no type the requirements allow offers it, "
                       f"though these would: {_listed(offering)}." + _other_vendor(name, ok) + (f" {how}" if how else ""))
            return out, name
        # Said where it may be the cause: at least half the types that hold the pod's other requests lack it, or
        # the log's requirements allow types that hold it all (then how nodes come to offer it is the question).
        # Not for a 120Gi pod on a pool whose requirements the log hides: most types that large offer pod-eni.
        holding = [t for t, _ in ok if rest.fits_in(t.allocatable) and all(r.matches(t.labels) for r in platform)]
        narrows = 2 * sum(1 for t in holding if t.allocatable.get(name) < amount) >= max(len(holding), 1)
        if how is not None and (narrows or (known and any(t.allocatable.get(name) >= amount for t in holding))):
            out.append(f"The pod asks for {_fmt(name, amount)} of {name}, which only {len(offering)} of the "
                       f"{len(catalog.instance_types)} types in the catalog offer. {how}")
    return out, None


def _also_short(rest: Resources, types: Sequence[InstanceType]) -> str:
    """`, and its cpu 17185m exceeds them too (at most 15890m, g4dn.4xlarge)` when the pod's other requests fit
    none of `types` either: fewer of one resource is then not the whole story, nor asking for fewer the fix."""
    if not types or any(rest.fits_in(t.allocatable) for t in types):
        return ""
    short = next((k for k in (CPU, MEMORY, EPHEMERAL, *rest) if all(rest.get(k) > t.allocatable.get(k) for t in types)),
                 None)
    if short is None:
        return ", and its other requests fit none of them either"
    most = max(types, key=lambda t: (t.allocatable.get(short), t.name))
    return (f", and its {short} {_fmt(short, rest.get(short))} exceeds them too (at most "
            f"{_fmt(short, most.allocatable.get(short))}, {most.name})")


def _emptying(catalog: Catalog, ask: Ask, fits: Callable[[InstanceType], bool]) -> str | None:
    keys = [r.key for r in ask.type_reqs] + ([ZONE] if ask.zones else []) + ([CAPACITY_TYPE] if ask.capacity else [])
    for key in keys:
        widened = [(t, p) for t, p in allowed(catalog, ask, drop=key) if fits(t)]
        if widened:
            current = next((r for r in (*ask.type_reqs, ask.zones, ask.capacity) if r is not None and r.key == key), None)
            zones = f" ({catalog.region} has the zones {', '.join(catalog.zones)})" if key == ZONE else ""
            return (f"The requirement {current} alone leaves no instance type with an offering that fits{zones}; if it "
                    f"were widened these would qualify: {_listed(widened)}.")
    return None


def _no_zone_left(q: ParsedRequirement) -> str:
    return (f"{q} among these requirements is an empty set of zones, not a requirement to widen: Karpenter adds a zone "
            "requirement for each PersistentVolume the pod has bound (and for its own zone selector) and prints "
            "their empty intersection this way - typically EBS volumes in different zones, or a volume in a zone the "
            "pod or the pool excludes. No instance type can help: keep the pod's volumes in one zone (recreate the odd "
            "one out from a snapshot, or delete its claim so it is provisioned again), and use a StorageClass with "
            "volumeBindingMode: WaitForFirstConsumer so new volumes are made where the pod lands "
            "(kubectl get pv -o wide shows each volume's zone).")


def _lacking(catalog: Catalog, ask: Ask, asked: Resources) -> str:
    """The types the requirements allow that would hold the pod but that this region's embedded catalog lacks
    (karpplan knows them, has no price there): the answer is the catalog's gap, not a requirement to widen."""
    if ask.zones is not None and not any(ask.zones.matches({ZONE: z}) for z in catalog.zones):
        return ""  # a zone the region lacks empties the list whatever the types: that is the answer
    lacking = lacking_types(catalog, Requirements(ask.type_reqs), asked)
    if not lacking:
        return ""
    region = catalog.region
    return (f"The requirements allow {lacking_text(catalog, lacking)}: that is a gap in karpplan's catalog, not a "
            "sign that the types do not exist or match nothing, so karpplan cannot tell here why Karpenter found none. "
            f"Run explain again with --catalog FILE, a current catalog of {region} (`karpplan catalog refresh "
            f"--region {region}` writes one from AWS, `karpplan catalog import` one from AWS CLI output); meanwhile "
            f"check which zones offer them: aws ec2 describe-instance-type-offerings --region {region} "
            "--location-type availability-zone.")


def _matching_nothing(catalog: Catalog, ask: Ask, pool_fields: str) -> str:
    """The requirements that on their own match no type (or no offering) of the catalog; a requirement whose types
    karpplan knows but this region's embedded catalog lacks is said to be the catalog's gap, not to match nothing."""
    alone: list[str] = []
    lacked: list[str] = []
    for r in ask.type_reqs:
        if any(r.matches(t.labels) for t in catalog.instance_types):
            continue
        if lacking_types(catalog, Requirements([r])):
            lacked.append(str(r))
        else:
            alone.append(str(r))
    if ask.zones is not None and not any(ask.zones.matches({ZONE: z}) for z in catalog.zones):
        alone.append(f"{ask.zones} ({catalog.region} has the zones {', '.join(catalog.zones)})")
    gap = ""
    if lacked:
        names = lacking_types(catalog, Requirements(r for r in ask.type_reqs if str(r) in lacked))
        gap = (f"{'; '.join(lacked)} allow{'s' if len(lacked) == 1 else ''} only "
               f"{lacking_text(catalog, names) if names else 'types the embedded ' + catalog.region + ' catalog lacks'}"
               f": a gap in karpplan's catalog, not a requirement that matches nothing (run explain again with --catalog "
               f"FILE, a current {catalog.region} catalog from `karpplan catalog refresh --region {catalog.region}`).")
    if alone:
        return ((gap + " ") if gap else "") + (
            f"{'Each of these requirements' if len(alone) > 1 else 'This requirement'} alone matches nothing in the "
            f"{catalog.region} catalog: {'; '.join(alone)}. "
            f"Check them in {pool_fields} and the pod's selectors (a type newer than karpplan's catalog shows up "
            "here too).")
    if gap:
        return gap[:1].upper() + gap[1:]
    return (f"No instance type in the {catalog.region} catalog satisfies these requirements together with an offering; "
            f"check them against the types you expect ({pool_fields}).")


def advise(reason: Reason, catalog: Catalog, pool_fields: str, limits_field: str,
           pod_platform: Sequence[Requirement] = ()) -> tuple[list[str], str | None]:
    """Sentences the catalog adds to a no-instance-type reason (empty when it has nothing to add), and the one
    resource that alone is the cause (an extended resource no allowed type offers), if so. `pod_platform`: the
    architecture / OS the pod requires as the log's other clauses show it (another pool's conflict quotes the
    pod's side), kept by every type offered even when this reason shows no requirements."""
    if reason.kind != NO_INSTANCE_TYPE or not reason.resources:
        return [], None
    try:
        asked = Resources.parse({k: v for k, v in reason.resources.items() if k != PODS})
    except (QuantityError, ValueError, TypeError):
        return [], None
    empty = next((q for q in reason.requirements if q.key == ZONE and (q.operator == "DoesNotExist" or (
        q.operator == "In" and not q.values))), None)
    if empty is not None:
        return [_no_zone_left(empty)], None
    ask = ask_of(reason.requirements, catalog)
    said = {r.key for r in ask.type_reqs}
    ask = replace(ask, type_reqs=ask.type_reqs + tuple(r for r in pod_platform if r.key not in said))
    local = _local_zones(ask, catalog)
    if local:
        return [local], None
    known = bool(reason.requirements)
    ok = allowed(catalog, ask)
    out, decided = _extended(asked, catalog, ok, known, ask)
    if decided:
        return out, decided

    def fits(t: InstanceType) -> bool:
        return asked.fits_in(t.allocatable)

    fitting = [(t, p) for t, p in ok if fits(t)]
    if not fitting and known and (lacking := _lacking(catalog, ask, asked)):
        return out + [lacking], None
    if not ok:
        emptying = _emptying(catalog, ask, fits)
        return out + [emptying or _matching_nothing(catalog, ask, pool_fields)], None
    if not fitting and asked.get(EPHEMERAL) and any(_fits_but(asked, t, EPHEMERAL) for t, _ in ok):
        return out + [_ephemeral(asked)], None
    if fitting and not known:
        smallest = min(fitting, key=lambda tp: (tp[0].allocatable.get(MEMORY), tp[1], tp[0].name))[0]
        return out + [f"The log does not show the pool's requirements, so the catalog cannot check them; types that "
                      f"fit this pod exist (e.g. {_listed(fitting, 3)}; the smallest, {smallest.name}, has "
                      f"{_fmt(CPU, smallest.allocatable.get(CPU))} CPU / {_fmt(MEMORY, smallest.allocatable.get(MEMORY))} "
                      f"allocatable): check that {pool_fields} allows one of them and the pool's limits "
                      f"({limits_field}), or lower the pod's requests if it does not need them."], None
    if fitting:
        cheapest = min(fitting, key=lambda tp: (tp[1], tp[0].name))[0]
        return out + [_POD_ENI_SETTING] * bool(asked.get(POD_ENI) and _provisioner(pool_fields)) + [
            f"Instance types the requirements allow do fit the pod (e.g. {_listed(fitting, 3)}; {cheapest.name} "
            f"has {_fmt(CPU, cheapest.allocatable.get(CPU))} CPU / {_fmt(MEMORY, cheapest.allocatable.get(MEMORY))} "
            "allocatable), so the pod's size is not the cause. When Karpenter says this although such types "
            f"exist, look at the pool's limits first ({limits_field}: the types that fit would exceed what its "
            "nodes have not used yet - Karpenter logs 'N out of M instance types were excluded because they would "
            "breach limits' just before), then at offerings (zones / capacity type without capacity, recent "
            "insufficient-capacity errors)." + _zone_subnets(ask, limits_field)], None
    return out + [_too_big(asked, catalog, ok, pool_fields, known, fits, ask)], None


def _provisioner(pool_fields: str) -> bool:
    """Whether the pool is a v1alpha5 Provisioner (before v0.32): its requirements are not under spec.template."""
    return not pool_fields.startswith("spec.template")


POD_ENI = "vpc.amazonaws.com/pod-eni"
# types that offer pod-eni fit, yet none satisfied: before v0.32 Karpenter counts it only with its setting on
_POD_ENI_SETTING = (
    "That Karpenter setting is off by default: the controller's AWS_ENABLE_POD_ENI environment variable in early "
    "releases, aws.enablePodENI in the karpenter-global-settings ConfigMap from v0.19 to v0.31. Off, every type offers "
    "none, so this message comes whatever the pool allows: check it first (from v0.32 on it is always counted).")


def _local_zones(ask: Ask, catalog: Catalog) -> str:
    """A zone requirement of Local / Wavelength Zones only: the catalog knows no offering there, AWS offers few."""
    if ask.zones is None or ask.zones.operator != "In" or not ask.zones.values or not all(
            LOCAL_ZONE.match(z) and z not in catalog.zones for z in ask.zones.values):
        return ""
    values = sorted(ask.zones.values)
    zones = ", ".join(values)
    return (f"{ask.zones} allows only {zones}, a Local Zone (or Wavelength Zone), not an Availability Zone: it "
            "offers only a few instance types and sizes (often not every generation, and no spot for many), so "
            "the types these requirements allow may simply not be offered there. List what is: aws ec2 "
            "describe-instance-type-offerings --location-type availability-zone --filters "
            f"Name=location,Values={values[0]}; allow those types in the pool, and check that the zone "
            "is opted in and that the node class selects a subnet in it.")


def _zone_subnets(ask: Ask, limits_field: str) -> str:
    """A zone requirement narrows the offerings to zones the node class has subnets in: say so."""
    if ask.zones is None or ask.zones.operator != "In":
        return ""
    node_class = "AWSNodeTemplate" if "provisioner" in limits_field or limits_field == "spec.limits.resources" \
        else "EC2NodeClass"
    return (f" With {ask.zones} among the requirements (the pod's selector, or the zone of a volume it has bound), an "
            f"offering exists only where the {node_class}'s subnet selector finds a subnet in that zone: check that its "
            "discovered subnets (its status, or Karpenter's 'discovered subnets' log line) include that zone.")


def _nominal(t: InstanceType, name: str) -> int:
    """The size EC2 sells (instance-memory in MiB, instance-cpu), before any overhead; else the capacity."""
    label = {MEMORY: "karpenter.k8s.aws/instance-memory", CPU: "karpenter.k8s.aws/instance-cpu"}.get(name)
    raw = t.labels.get(label or "")
    if raw and raw.isdigit():
        return int(raw) << 20 if name == MEMORY else int(raw) * 1000
    return t.capacity.get(name)


def _fits_but(asked: Resources, t: InstanceType, name: str) -> bool:
    """Whether `t` holds everything the pod asks for except `name`."""
    return all(t.allocatable.get(k) >= a for k, a in asked.items() if k != name)


def _ephemeral(asked: Resources) -> str:
    return (f"The pod asks for {_fmt(EPHEMERAL, asked.get(EPHEMERAL))} of ephemeral-storage (with DaemonSet overhead), "
            "and that is the request no type meets: a node's ephemeral-storage is its root volume, not a property of "
            "the instance type - Karpenter takes it from the node class's blockDeviceMappings (20Gi when none is set; "
            "spec.blockDeviceMappings of the EC2NodeClass / AWSNodeTemplate, on the AMI family's root device: /dev/xvda "
            "for AL2 / AL2023, /dev/xvdb for Bottlerocket) or, with instanceStorePolicy: RAID0, from local NVMe. Raise "
            "that volumeSize above the request plus the images and system use (Karpenter keeps some for the system), or "
            "lower the pod's ephemeral-storage request; larger instance types alone do not help.")


def _too_big(asked: Resources, catalog: Catalog, ok: list[tuple[InstanceType, float]], pool_fields: str,
             known: bool, fits: Callable[[InstanceType], bool], ask: Ask) -> str:
    standard = [k for k in (CPU, MEMORY) if asked.get(k)]
    short_of: dict[str, InstanceType] = {}
    for k in standard:
        biggest = max(ok, key=lambda tp: (tp[0].allocatable.get(k), tp[0].name))[0]
        if asked.get(k) > biggest.allocatable.get(k):
            short_of[k] = biggest
    if not short_of:  # each resource fits some type, but no type holds both
        biggest = max(ok, key=lambda tp: (tp[0].allocatable.get(CPU), tp[0].allocatable.get(MEMORY)))[0]
        short_of = {k: biggest for k in standard if asked.get(k) > biggest.allocatable.get(k)}
    figures = "; ".join(f"{k}: the pod asks for {_fmt(k, asked.get(k))} with DaemonSet overhead, the largest allowed "
                        f"type, {t.name}, has {_fmt(k, t.allocatable.get(k))} allocatable" for k, t in short_of.items())
    wider = _same_architecture(_wider(catalog, ask, fits), ask, ok)
    overhead = [f"{t.name} has {_fmt(k, _nominal(t, k))} {k}, but Karpenter subtracts kube-reserved, the eviction "
                "threshold and its VM memory overhead estimate (VM_MEMORY_OVERHEAD_PERCENT, 7.5% by default) before "
                "comparing" for k, t in short_of.items() if asked.get(k) <= _nominal(t, k)]
    scope = "every type the requirements allow" if known else f"every type in the {catalog.region} catalog"
    # The memory the type really has would hold the pod: Karpenter's estimate of the VM overhead is what refuses it,
    # and its setting is the fix its maintainers give (karpenter-provider-aws#5676).
    setting = (" or, since the type's real memory would hold it, lower Karpenter's VM memory overhead estimate "
               "(settings.vmMemoryOverheadPercent in the Helm values, VM_MEMORY_OVERHEAD_PERCENT), which only "
               "affects how Karpenter sizes nodes," if MEMORY in short_of and asked.get(MEMORY)
               <= _nominal(short_of[MEMORY], MEMORY) else "")
    fix = (" Lower the pod's resources.requests below that," + setting
           + (f" or widen {pool_fields} to larger types (e.g. {_listed_priced(wider, 3)})" if wider and known else ""))
    return (f"The pod is too big for {scope} ({figures})." + (f" {'; '.join(overhead)}." if overhead else "")
            + fix.rstrip(",") + ".")
