"""Unrendered template placeholders (`<<AZ>>`, `${CLUSTER_NAME}`, `{{ .Values.zone }}`) in the fields that
select nodes, pods, subnets, security groups, AMIs or roles: applied as written they select nothing."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from karpplan.inputs.loader import Document
from karpplan.inputs.origins import LineDict, LineList
from karpplan.inputs.placeholders import VALUE_PLACEHOLDER
from karpplan.lint.context import LintContext
from karpplan.lint.core import Hit, Severity, lint_rule
from karpplan.lint.locate import path_segment
from karpplan.lint.rules.examples import NODEPOOL, deployment

_NODES = "no node carries that value, so the pods it applies to stay pending"
_PODS = "it names a label or domain no pod or node has, so the constraint does not do what it says"
_TAINTS = "it tolerates no real taint"
_POOL = "the NodePool's nodes would carry (or require) the literal text, so the pods meant for them do not match"
_DISCOVERY = "Karpenter discovers nothing matching it and launches no node from this node class"
_ROLE = "no IAM role or instance profile has that name: Karpenter cannot launch nodes from this node class"
_EKSCTL = "eksctl reads it literally"
_VOLUME = ("no node is in that zone, so no pod using a volume of it can be scheduled (kube-scheduler's "
           "VolumeBinding/VolumeZone filters and Karpenter admit only nodes in the volume's zones)")

# Per kind: (field path, consequence); every string key and value under the field is checked.
_POD_FIELDS = (
    ("nodeSelector", _NODES), ("affinity.nodeAffinity", _NODES), ("nodeName", _NODES),
    ("affinity.podAffinity", _PODS), ("affinity.podAntiAffinity", _PODS), ("topologySpreadConstraints", _PODS),
    ("tolerations", _TAINTS), ("runtimeClassName", _NODES),
)
_KIND_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "NodePool": (("spec.template.spec.requirements", _POOL), ("spec.template.metadata.labels", _POOL),
                 ("spec.template.spec.taints", _POOL), ("spec.template.spec.nodeClassRef", _DISCOVERY)),
    "Provisioner": (("spec.requirements", _POOL), ("spec.labels", _POOL), ("spec.taints", _POOL),
                    ("spec.providerRef", _DISCOVERY), ("spec.provider.subnetSelector", _DISCOVERY),
                    ("spec.provider.securityGroupSelector", _DISCOVERY), ("spec.provider.instanceProfile", _ROLE)),
    "EC2NodeClass": (("spec.role", _ROLE), ("spec.instanceProfile", _ROLE), ("spec.subnetSelectorTerms", _DISCOVERY),
                     ("spec.securityGroupSelectorTerms", _DISCOVERY), ("spec.amiSelectorTerms", _DISCOVERY),
                     ("spec.capacityReservationSelectorTerms", _DISCOVERY)),
    "AWSNodeTemplate": (("spec.instanceProfile", _ROLE), ("spec.subnetSelector", _DISCOVERY),
                        ("spec.securityGroupSelector", _DISCOVERY), ("spec.amiSelector", _DISCOVERY)),
    "NodeClass": (("spec.role", _ROLE), ("spec.subnetSelectorTerms", _DISCOVERY),
                  ("spec.securityGroupSelectorTerms", _DISCOVERY), ("spec.podSubnetSelectorTerms", _DISCOVERY),
                  ("spec.podSecurityGroupSelectorTerms", _DISCOVERY)),
    "NodeOverlay": (("spec.requirements", _POOL),),
    "StorageClass": (("allowedTopologies", _VOLUME),),
    "PersistentVolume": (("spec.nodeAffinity", _VOLUME),),
    "ClusterConfig": (("metadata.name", _EKSCTL), ("metadata.region", _EKSCTL), ("availabilityZones", _EKSCTL),
                      ("fargateProfiles", _EKSCTL)),
}
# eksctl node groups: what decides where and which nodes run, not their bootstrap scripts (shell ${...}).
_NODE_GROUP_FIELDS = ("availabilityZones", "subnets", "labels", "taints", "instanceType", "instanceTypes",
                      "instanceSelector")
# Fields whose placeholders change what the planner's checks would find (pods' node selection, pools).
_DECIDING = frozenset({_NODES, _PODS, _TAINTS, _POOL})


@dataclass(frozen=True)
class Placeholder:
    doc: Document
    path: str
    text: str
    placeholder: str
    consequence: str


def _child(node: object, part: str) -> object:
    """`node[part]`, with `name[i]` for a list item."""
    name, bracket, index = part.partition("[")
    child = node.get(name) if isinstance(node, dict) else None
    if bracket and isinstance(child, list) and index.rstrip("]").isdigit():
        i = int(index.rstrip("]"))
        return child[i] if i < len(child) else None
    return child if not bracket else None


def _walk(node: object, path: str) -> Iterator[tuple[str, str]]:
    """(path, text) of every string key and scalar under `node`."""
    stack: list[tuple[object, str]] = [(node, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, LineDict | dict):
            for key, value in reversed(list(item.items())):
                child = where + path_segment(str(key))
                stack.append((value, child))
                if isinstance(key, str) and VALUE_PLACEHOLDER.search(key):
                    stack.append((key, child))
        elif isinstance(item, LineList | list):
            stack.extend((value, f"{where}[{i}]") for i, value in reversed(list(enumerate(item))))
        elif isinstance(item, str):
            yield where, item


def _fields(ctx: LintContext) -> Iterator[tuple[Document, str, str]]:
    for doc, spec_path in ctx.pod_documents():
        for field, consequence in _POD_FIELDS:
            yield doc, f"{spec_path}.{field}", consequence
    for doc in ctx.documents:
        for field, consequence in _KIND_FIELDS.get(doc.kind, ()):
            yield doc, field, consequence
        if doc.kind == "ClusterConfig":
            for key in ("managedNodeGroups", "nodeGroups"):
                groups = _child(doc.body, key)
                for i in range(len(groups) if isinstance(groups, list) else 0):
                    for field in _NODE_GROUP_FIELDS:
                        yield doc, f"{key}[{i}].{field}", _EKSCTL


def placeholders(ctx: LintContext) -> list[Placeholder]:
    """Every placeholder in a selecting field, in input order (cached on the context)."""
    cached = ctx.cache.get("placeholders")
    if isinstance(cached, list):
        return cached
    out: list[Placeholder] = []
    for doc, field, consequence in _fields(ctx):
        node: object = doc.body
        for part in field.split("."):
            node = _child(node, part)
        if node is None:
            continue
        for path, text in _walk(node, field):
            for match in VALUE_PLACEHOLDER.finditer(text):
                out.append(Placeholder(doc, path, text, match.group(0), consequence))
    ctx.cache["placeholders"] = out
    return out


def unrendered_documents(ctx: LintContext) -> frozenset[int]:
    """ids of the documents with a placeholder where it changes which nodes their pods may use."""
    return frozenset(id(p.doc) for p in placeholders(ctx) if p.consequence in _DECIDING)


def unrendered_volume_documents(ctx: LintContext) -> frozenset[int]:
    """ids of the StorageClasses and PersistentVolumes with a placeholder in the zones they allow (the literal
    may not even survive as a zone: a PV's term with an invalid label value admits nothing)."""
    return frozenset(id(p.doc) for p in placeholders(ctx) if p.consequence == _VOLUME)


def _fix(placeholder: str) -> str:
    if placeholder.startswith("<"):
        return f"replace {placeholder} with your cluster's value before applying"
    if placeholder.startswith("$"):
        name = placeholder[2:-1] if placeholder.startswith("${") else placeholder[1:]
        return f"set {name} and render the file (envsubst < file | kubectl apply -f -), or write the value"
    return "render the chart (helm template ...) and lint its output, not the template"


@lint_rule("unrendered-placeholder", "KPL105", Severity.error,
           fix="render the template (envsubst, helm template) or write the real value",
           bad=NODEPOOL + deployment(
               "      nodeSelector: {topology.kubernetes.io/zone: \"<<AVAILABILITY_ZONE>>\"}\n"),
           good=NODEPOOL + deployment("      nodeSelector: {topology.kubernetes.io/zone: us-east-1a}\n"))
def UNRENDERED_PLACEHOLDER(ctx: LintContext) -> Iterator[Hit]:
    """An unrendered template placeholder (<<AZ>>, <AZ>, ${CLUSTER_NAME}, $CLUSTER_NAME, {{ .Values.x }}) in a field
    that selects.

    Examples and charts are often written with placeholders for the cluster's own values:
    `role: "<<KARPENTER_NODE_IAM_ROLE_NAME>>"`, `karpenter.sh/discovery: "${CLUSTER_NAME}"`, a zone
    `values: ["<<AZ>>"]`. The API server accepts most of them as plain text, and then nothing matches: no
    subnet, security group or AMI is discovered, no IAM role has that name, no node carries the label. The
    rule reads the fields that select (requirements, nodeSelector, affinity, topology keys and selectors,
    tolerations, NodePool labels and taints, node class selector terms, role and instance profile, eksctl
    zones, node groups and Fargate selectors, StorageClass allowedTopologies and PersistentVolume nodeAffinity),
    not free text such as userData or images. While a workload's
    or NodePool's scheduling fields, or its volumes' zones, hold placeholders, the capacity rules do not judge
    those pods (their verdict would be about the placeholder): the report lists them as skipped.
    """
    for p in placeholders(ctx):
        yield Hit(p.doc, p.path,
                  f"{p.placeholder} is an unrendered template placeholder ({p.path}: {p.text!r}): "
                  f"applied as written, {p.consequence}",
                  _fix(p.placeholder))


RULES = (UNRENDERED_PLACEHOLDER,)
