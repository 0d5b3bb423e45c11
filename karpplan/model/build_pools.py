"""Karpenter NodePools (v1, v1beta1), v1alpha5 Provisioners, EKS Auto Mode pools and node classes.

`NodePool.requirements` come out complete: `spec.template.spec.requirements` (or v1alpha5
`spec.requirements`), the template labels as `In [value]`, the pool's own label
(`karpenter.sh/nodepool In [name]`, `karpenter.sh/provisioner-name` for Provisioners) as Karpenter's
NodeClaim template adds it, and for Provisioners the AWS v0.27 webhook defaults.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from karpplan.inputs.loader import Document
from karpplan.model.build_fields import Field
from karpplan.model.inventory import InputNotice
from karpplan.model.labels import (
    ARCH,
    AWS_PREFIX,
    CAPACITY_TYPE,
    HOSTNAME,
    INSTANCE_TYPE,
    NODEPOOL,
    OS,
    PROVISIONER_NAME,
    normalize_key,
)
from karpplan.model.overlays import PRICE, PRICE_ADJUSTMENT, NodeOverlay, PriceAdjustment
from karpplan.model.pools import (
    BlockDevice,
    KubeletConfig,
    NodeClass,
    NodeClassRef,
    NodePool,
    NodeStorage,
    auto_mode_storage,
)
from karpplan.model.quantity import Quantity
from karpplan.model.requirements import OPERATORS, Requirement, Requirements, parse_int
from karpplan.model.resources import LimitVector, Resources, amount_of
from karpplan.model.taints import EFFECTS, Taint

AWS_GROUP = "karpenter.k8s.aws"
AUTO_GROUP = "eks.amazonaws.com"
# A static NodePool's nodes are planned one by one, as existing nodes: beyond this many (min(replicas,
# limits.nodes)) the input is refused (200,000 took 27 s and 2.6 GB before planning began).
MAX_STATIC_NODES = 10_000
# Keys whose presence stops the v0.27 webhook from defaulting instance-category/generation.
_INSTANCE_SELECTING_KEYS = frozenset(
    {
        INSTANCE_TYPE,
        AWS_PREFIX + "instance-family",
        AWS_PREFIX + "instance-category",
        AWS_PREFIX + "instance-generation",
    }
)
# Labels Karpenter sets itself and refuses in NodePool requirements.
_RESTRICTED_REQUIREMENT_KEYS = frozenset({HOSTNAME, NODEPOOL, PROVISIONER_NAME})
# `amiSelectorTerms[].alias` family prefixes (`al2023@latest`) and the amiFamily they stand for.
_ALIAS_FAMILIES = {
    "al2": "AL2",
    "al2023": "AL2023",
    "bottlerocket": "Bottlerocket",
    "windows2019": "Windows2019",
    "windows2022": "Windows2022",
    "windows2025": "Windows2025",
}


# ------------------------------------------------------------------------------------------ pieces
def resource_limits(f: Field) -> tuple[Resources | None, int | None]:
    """A limits resource list: (resources without `nodes`, the `nodes` count)."""
    if not f.present or not f.is_mapping():
        return None, None
    amounts: dict[str, int] = {}
    node_limit: int | None = None
    for name, (quantity, _) in f.resource_quantities().items():
        if name == "nodes":
            node_limit = quantity.value()
        else:
            amounts[name] = amount_of(name, quantity)
    return (LimitVector(amounts) if amounts else None), node_limit


def resource_list(f: Field) -> Resources | None:
    """A plain resource list (kubeReserved, allocatable...), None when absent."""
    if not f.present or not f.is_mapping():
        return None
    amounts: dict[str, int] = {}
    for name, item in f.entries(bracket_keys=True):
        quantity: Quantity | None = item.quantity()
        if quantity is not None:
            amounts[name] = amount_of(name, quantity)
    return Resources(amounts)


def taints(f: Field, aliases: Mapping[str, str] | None = None) -> tuple[Taint, ...]:
    """A list of `{key, value, effect}` taints; `aliases`: other spellings of the effects (the EKS API's
    `NO_SCHEDULE` for eksctl's managed node groups)."""
    out = []
    for item in f.mappings():
        key = item["key"].string()
        if not key:
            item["key"].required("taint key is required")
        written = item["effect"].string()
        effect = aliases.get(written, written) if aliases else written
        if effect not in EFFECTS:
            item["effect"].unsupported(EFFECTS, written)
        out.append(Taint(key, item["value"].string(), effect))
    return tuple(out)


def node_requirements(f: Field, restricted: frozenset[str] = _RESTRICTED_REQUIREMENT_KEYS) -> list[Requirement]:
    """NodePool-side requirements: Karpenter's operators incl. Gte/Lte; `minValues` is ignored. `restricted`:
    the keys the CRD refuses (a NodeOverlay may name `karpenter.sh/nodepool`, a NodePool may not)."""
    out = []
    for item in f.mappings():
        key_field, operator_field = item["key"], item["operator"]
        key = normalize_key(key_field.string())
        operator = operator_field.string()
        values = item["values"].string_list()
        if not key:
            key_field.required("requirement key is required")
            continue
        if key in restricted:
            key_field.invalid("label is restricted (Karpenter sets it itself)")
            continue
        if operator not in OPERATORS:
            operator_field.unsupported(OPERATORS, operator)
            continue
        if operator == "In" and not values:
            item["values"].required(f"requirements with operator '{operator}' must have a value defined")
            continue
        if operator in ("Gt", "Lt", "Gte", "Lte") and (len(values) != 1 or parse_int(values[0]) is None):
            item["values"].invalid(
                f"requirements with operator '{operator}' must have a single integer value", values
            )
            continue
        out.append(Requirement.of(key, operator, values))
    return out


def kubelet_config(f: Field) -> KubeletConfig | None:
    if not f.present or not f.is_mapping():
        return None
    max_pods = f["maxPods"].optional_integer()
    pods_per_core = f["podsPerCore"].optional_integer()
    for name, value in (("maxPods", max_pods), ("podsPerCore", pods_per_core)):
        if value is not None and value < 0:
            f[name].invalid("must be greater than or equal to 0")
    eviction = f["evictionHard"]
    return KubeletConfig(
        max_pods=max_pods,
        pods_per_core=pods_per_core,
        kube_reserved=resource_list(f["kubeReserved"]),
        system_reserved=resource_list(f["systemReserved"]),
        eviction_hard=eviction.string_map() if eviction.present else None,
    )


def _weight(f: Field) -> int:
    value = f.optional_integer()
    if value is None:
        return 0
    if value < 1:
        f.invalid(f"{f.path} in body should be greater than or equal to 1")
    elif value > 100:
        f.invalid(f"{f.path} in body should be less than or equal to 100")
    return value


def _group_of(api_version: str) -> str:
    return api_version.split("/", 1)[0] if "/" in api_version else ""


def _node_class_ref(f: Field, *, default_kind: str) -> NodeClassRef | None:
    """v1 `{group, kind, name}`; v1beta1 and v1alpha5 spell the group as `apiVersion`."""
    if not f.present or not f.is_mapping():
        return None
    name = f["name"].string()
    if not name:
        f["name"].required("name is required")
    written = f["group"].string()
    if "/" in written:
        # The CRD's `pattern: ^[^/]*$`: a group, not an apiVersion (`karpenter.k8s.aws/v1` is refused).
        f["group"].invalid("should match '^[^/]*$' (the API group without a version: "
                           f"{_group_of(written) or written!r})")
    group = written or _group_of(f["apiVersion"].string()) or AWS_GROUP
    return NodeClassRef(group=group, kind=f["kind"].string() or default_kind, name=name)


# ------------------------------------------------------------------------------------------ pools
V1 = "karpenter.sh/v1"


def build_nodepool(doc: Document, root: Field, notices: list[InputNotice] | None = None) -> NodePool:
    """A karpenter.sh NodePool (v1 or v1beta1), EKS Auto Mode ones included.

    What Karpenter itself drops or treats specially is kept out of the pool and told in `notices`: the
    v1beta1 `spec.template.spec.kubelet` in a v1 NodePool (not in the v1 schema, so the API server prunes
    it). `spec.replicas` makes a static NodePool: never provisioned for pending pods, its nodes are planned
    (and said) by `scheduling/candidates.static_pools`.
    """
    notices = notices if notices is not None else []
    spec = root["spec"]
    spec.is_mapping()
    template = spec["template"]
    template.is_mapping()
    labels = template["metadata"]["labels"].string_map()
    template_spec = template["spec"]
    template_spec.is_mapping()
    requirements = node_requirements(template_spec["requirements"])
    ref = _node_class_ref(template_spec["nodeClassRef"], default_kind="EC2NodeClass")
    limits, node_limit = resource_limits(spec["limits"])
    name = doc.name
    kubelet_field = template_spec["kubelet"]
    kubelet = kubelet_config(kubelet_field)
    if doc.api_version == V1 and kubelet_field.present:
        kubelet = None
        notices.append(InputNotice(
            kubelet_field.origin,
            f"NodePool {name}: spec.template.spec.kubelet is not part of {V1} (it moved to EC2NodeClass "
            "spec.kubelet); the API server drops it, so Karpenter and karpplan ignore it",
            fix=f"move spec.template.spec.kubelet to spec.kubelet of "
                f"{f'EC2NodeClass {ref.name}, the node class' if ref is not None else 'the EC2NodeClass'} this "
                "NodePool's nodeClassRef names: Karpenter v1 reads kubelet settings there",
        ))
    replicas_field = spec["replicas"]
    replicas = replicas_field.optional_integer()
    if replicas is not None and replicas < 0:
        replicas_field.invalid("must be greater than or equal to 0")
    if replicas is not None and min(replicas, node_limit if node_limit is not None else replicas) > MAX_STATIC_NODES:
        replicas_field.invalid(f"karpplan plans at most {MAX_STATIC_NODES:,} nodes per static NodePool "
                               "(min(replicas, limits.nodes))")
    reqs = Requirements(
        [*requirements, *Requirements.from_labels({normalize_key(k): v for k, v in labels.items()}).values()]
    ).with_requirement(Requirement(NODEPOOL, frozenset([name])))
    return NodePool(
        name=name,
        kind="NodePool",
        api_version=doc.api_version,
        requirements=reqs,
        labels=labels,
        taints=taints(template_spec["taints"]),
        startup_taints=taints(template_spec["startupTaints"]),
        limits=limits,
        node_limit=node_limit,
        weight=_weight(spec["weight"]),
        node_class_ref=ref,
        kubelet=kubelet,
        auto_mode=ref is not None and ref.group == AUTO_GROUP,
        replicas=replicas,
        origin=doc.origin,
        not_ready=_not_ready(root, doc, notices),
    )


def _not_ready(root: Field, doc: Document, notices: list[InputNotice]) -> str:
    """Why Karpenter would not launch from this NodePool, as its object shows it (and said in `notices`)."""
    why = _not_ready_why(root)
    if why:
        notices.append(InputNotice(doc.origin, f"NodePool {doc.name} {why}: Karpenter launches nothing from it "
                                               "(it provisions only from ready NodePools not being deleted)"))
    return why


def _not_ready_why(root: Field) -> str:
    """A deletionTimestamp, or a status whose Ready condition is not True. A NodePool without status (a manifest
    from git) is taken as ready."""
    if root["metadata"]["deletionTimestamp"].present:
        return "is being deleted (metadata.deletionTimestamp)"
    conditions = root["status"]["conditions"].value
    if not isinstance(conditions, list):
        return ""
    ready = [c for c in conditions if isinstance(c, dict) and c.get("type") == "Ready"]
    if not ready or str(ready[-1].get("status")) == "True":
        return ""
    why = ": ".join(str(ready[-1][k]) for k in ("reason", "message") if ready[-1].get(k))
    return f"is not ready (status Ready={ready[-1].get('status')}{f', {why}' if why else ''})"


def provisioner_defaults(requirements: Requirements, labels: dict[str, str]) -> list[Requirement]:
    """The AWS provider's v0.27 webhook defaults for keys a Provisioner leaves open."""
    given = set(requirements) | {normalize_key(k) for k in labels}
    out = []
    for key, value in ((OS, "linux"), (ARCH, "amd64"), (CAPACITY_TYPE, "on-demand")):
        if key not in given:
            out.append(Requirement(key, frozenset([value])))
    if not given & _INSTANCE_SELECTING_KEYS:
        out.append(Requirement(AWS_PREFIX + "instance-category", frozenset(["c", "m", "r"])))
        out.append(Requirement.of(AWS_PREFIX + "instance-generation", "Gt", ["2"]))
    return out


def build_provisioner(doc: Document, root: Field) -> NodePool:
    """A karpenter.sh/v1alpha5 Provisioner, with the v0.27 defaults applied."""
    spec = root["spec"]
    spec.is_mapping()
    labels = spec["labels"].string_map()
    given = Requirements(node_requirements(spec["requirements"]))
    defaults = provisioner_defaults(given, labels)
    limits_field = spec["limits"]
    limits_field.is_mapping()
    limits, node_limit = resource_limits(limits_field["resources"])
    name = doc.name
    reqs = Requirements(
        [
            *given.values(),
            *defaults,
            *Requirements.from_labels({normalize_key(k): v for k, v in labels.items()}).values(),
            Requirement(PROVISIONER_NAME, frozenset([name])),
        ]
    )
    return NodePool(
        name=name,
        kind="Provisioner",
        api_version=doc.api_version,
        requirements=reqs,
        labels=labels,
        taints=taints(spec["taints"]),
        startup_taints=taints(spec["startupTaints"]),
        limits=limits,
        node_limit=node_limit,
        weight=_weight(spec["weight"]),
        node_class_ref=_node_class_ref(spec["providerRef"], default_kind="AWSNodeTemplate"),
        kubelet=kubelet_config(spec["kubeletConfiguration"]),
        origin=doc.origin,
    )


# ------------------------------------------------------------------------------------------ node classes
def _alias_family(spec: Field) -> str | None:
    for term in spec["amiSelectorTerms"].mappings():
        alias = term["alias"].string()
        if alias:
            family = alias.split("@", 1)[0].lower()
            if family not in _ALIAS_FAMILIES:
                term["alias"].unsupported([f"{f}@<version>" for f in _ALIAS_FAMILIES])
                return None
            return _ALIAS_FAMILIES[family]
    return None


def build_nodeclass(doc: Document, root: Field) -> NodeClass:
    """EC2NodeClass (v1, v1beta1), v1alpha1 AWSNodeTemplate, or EKS Auto Mode NodeClass."""
    spec = root["spec"]
    spec.is_mapping()
    family = spec["amiFamily"].optional_string() or _alias_family(spec)
    return NodeClass(
        name=doc.name,
        kind=doc.kind,
        ami_family=family,
        kubelet=kubelet_config(spec["kubelet"]),
        storage=_auto_mode_storage(spec) if doc.group == AUTO_GROUP else _node_storage(spec),
        origin=doc.origin,
        zones=_subnet_zones(root["status"]),
    )


def _subnet_zones(status: Field) -> tuple[str, ...]:
    """The zones of `status.subnets[]` (what the Karpenter controller resolved its subnetSelectorTerms to),
    in order, once each; empty when the input holds no status."""
    if not isinstance(status.value, dict):
        return ()
    zones = (s["zone"].optional_string() for s in status["subnets"].mappings())
    return tuple(dict.fromkeys(z for z in zones if z))


def _node_storage(spec: Field) -> NodeStorage:
    """`blockDeviceMappings` and `instanceStorePolicy`, which size the node's ephemeral-storage."""
    devices: list[BlockDevice] = []
    for entry in spec["blockDeviceMappings"].mappings():
        size = entry["ebs"]["volumeSize"]
        quantity = size.quantity()
        if quantity is not None and quantity.amount <= 0:
            size.invalid("must be greater than 0")
            quantity = None
        devices.append(BlockDevice(
            device_name=entry["deviceName"].optional_string(),
            volume_bytes=quantity.value() if quantity is not None else None,
            root_volume=entry["rootVolume"].boolean(),
        ))
    if sum(d.root_volume for d in devices) > 1:
        spec["blockDeviceMappings"].invalid("must have only one blockDeviceMappings with rootVolume")
    policy = spec["instanceStorePolicy"].optional_string()
    if policy is not None and policy != "RAID0":
        spec["instanceStorePolicy"].unsupported(["RAID0"], policy)
    return NodeStorage(tuple(devices), policy == "RAID0")


def _auto_mode_storage(spec: Field) -> NodeStorage:
    """An EKS Auto Mode NodeClass's `ephemeralStorage.size`, the node's ephemeral-storage volume (80Gi when
    it is not written: the EKS user guide, "Node Class Specification")."""
    size = spec["ephemeralStorage"]["size"]
    quantity = size.quantity()
    if quantity is not None and quantity.amount <= 0:
        size.invalid("must be greater than 0")
        quantity = None
    return auto_mode_storage(quantity.value() if quantity is not None else None)


# (group, kind) of the node classes karpplan launches from the AWS catalog.
AWS_NODE_CLASS_KINDS = frozenset({
    ("karpenter.k8s.aws", "EC2NodeClass"),
    ("karpenter.k8s.aws", "AWSNodeTemplate"),
    (AUTO_GROUP, "NodeClass"),
})


def node_class_notices(pools: Sequence[NodePool], classes: Sequence[NodeClass]) -> list[InputNotice]:
    """NodePools whose nodeClassRef karpplan cannot follow: told, since the node class changes the nodes."""
    notices: list[InputNotice] = []
    names = {(c.kind, c.name) for c in classes}
    missing: list[NodePool] = []
    for pool in pools:
        ref = pool.node_class_ref
        if ref is None:
            continue
        if (ref.group, ref.kind) not in AWS_NODE_CLASS_KINDS:
            group = f" ({ref.group})" if ref.group else ""
            notices.append(InputNotice(
                pool.origin,
                f"{pool.kind} {pool.name}: nodeClassRef {ref.kind}/{ref.name}{group} is not an AWS node class; "
                "karpplan launches the catalog's instance types for it as if it were an EC2NodeClass with "
                "the defaults",
                fix="point nodeClassRef at an EC2NodeClass (group karpenter.k8s.aws, kind EC2NodeClass), or plan "
                    "this pool with a --catalog of the nodes its own node class launches",
            ))
        elif (ref.kind, ref.name) not in names and not (ref.kind == "NodeClass" and ref.name == "default"):
            missing.append(pool)
    if missing and classes:
        for pool in missing:
            ref = pool.node_class_ref
            assert ref is not None
            notices.append(InputNotice(
                pool.origin,
                f"{pool.kind} {pool.name}: nodeClassRef {ref.kind}/{ref.name} is not in the input (Karpenter "
                "launches nothing from this pool until it exists); planned with the node class defaults "
                "(AL2023, 20Gi root volume, default kubelet)",
                fix=f"add {ref.kind} {ref.name} to the input, or set nodeClassRef.name to one it holds "
                    f"({', '.join(sorted(n for k, n in names if k == ref.kind)) or 'none of kind ' + ref.kind})",
            ))
    elif missing:
        listed = ", ".join(sorted({p.node_class_ref.name for p in missing if p.node_class_ref}))
        notices.append(InputNotice(
            missing[0].origin,
            f"no node class in the input (nodeClassRef {listed}): node pools are planned with the node class "
            "defaults (AL2023, 20Gi root volume, default kubelet); add the EC2NodeClass for exact allocatable",
        ))
    return notices



# ------------------------------------------------------------------------------------------ overlays
_OVERLAY_RESTRICTED_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage", "pods"})
_OVERLAY_RESTRICTED_KEYS = frozenset({HOSTNAME, PROVISIONER_NAME})


def build_node_overlay(doc: Document, root: Field) -> NodeOverlay:
    """A karpenter.sh/v1alpha1 NodeOverlay, validated as its CRD does."""
    spec = root["spec"]
    spec.is_mapping()
    # The NodeOverlay CRD refuses kubernetes.io/hostname only: it targets pools by karpenter.sh/nodepool
    # (karpenter.sh_nodeoverlays.yaml: `self in ["karpenter.sh/capacity-type", "karpenter.sh/nodepool"] || ...`).
    requirements = Requirements(node_requirements(spec["requirements"], _OVERLAY_RESTRICTED_KEYS))
    weight_field = spec["weight"]
    weight = weight_field.optional_integer() or 0
    if weight < 0:
        weight_field.invalid("must be greater than or equal to 0")
    price_field, adjustment_field = spec["price"], spec["priceAdjustment"]
    price_text, adjustment_text = price_field.optional_string(), adjustment_field.optional_string()
    price: float | None = None
    adjustment: PriceAdjustment | None = None
    if price_text is not None and adjustment_text is not None:
        spec.invalid("cannot set both 'price' and 'priceAdjustment'")
    if price_text is not None:
        if PRICE.match(price_text):
            price = float(price_text)
        else:
            price_field.invalid(f"should match '{PRICE.pattern}'", price_text)
    if adjustment_text is not None:
        if PRICE_ADJUSTMENT.match(adjustment_text):
            adjustment = PriceAdjustment.parse(adjustment_text)
        else:
            adjustment_field.invalid(f"should match '{PRICE_ADJUSTMENT.pattern}'", adjustment_text)
    capacity_field = spec["capacity"]
    capacity = resource_list(capacity_field) or Resources()
    restricted = sorted(set(capacity) & _OVERLAY_RESTRICTED_RESOURCES)
    if restricted:
        capacity_field.invalid("invalid resource restricted (only extended resources may be added)", restricted)
    return NodeOverlay(
        name=doc.name,
        requirements=requirements,
        weight=weight,
        price=price,
        price_adjustment=adjustment,
        capacity=capacity,
        origin=doc.origin,
    )
