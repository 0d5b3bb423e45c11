"""Karpenter's node-class resolution errors: a NodePool whose node class (EC2NodeClass, AKSNodeClass, ...) is
missing or not ready resolves no instance types, so it can launch nothing.

    skipping, unable to resolve instance types, resolving node class, EC2NodeClass.karpenter.k8s.aws "default" not found
    listing instance types for default, resolving node class, ec2nodeclasses.karpenter.k8s.aws "default" not found
    ... NodeClassNotReady ... / nodeclass not ready / ignoring nodepool, not ready

Karpenter then reports every pod for that pool as "all available instance types exceed limits" (no instance
type is left, which its limits check reads as all of them exceeding the limits: kubernetes-sigs/karpenter#1165).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MISSING = "node class not found"  # also the reason's `cause`
NOT_READY = "node class not ready"
UNRESOLVED = "instance types not resolved"  # the cause was cut off (or is another one)
AWAITING = "node class awaiting reconciliation"  # v0.37+: the node class has no Ready condition yet
CAUSES = (MISSING, NOT_READY, UNRESOLVED, AWAITING)

TRIGGERS = ("resolving node class", "NodeClassNotReady", "NodeClass not found on cluster", "nodeclass not ready", "node class not ready",
            "unable to resolve instance types", "ignoring nodepool, not ready", "no resolved instance types",
            "awaiting reconciliation")
# v0.37+: `launching nodeclaim, resolving ec2nodeclass, object is awaiting reconciliation` (no Ready condition yet)
_AWAITING = re.compile(r"(?:resolving (?P<res>\w*node ?class(?:es)?),? )?object is awaiting reconciliation", re.I)
_NOT_FOUND = re.compile(r"(?P<res>[A-Za-z0-9]*[Nn]ode[Cc]lass(?:es)?)(?:\.[\w.-]+)? \\?\"(?P<name>[^\"\\]+)\\?\" not found")
# a NodePool's status condition (kubectl get nodepool -o yaml / describe): NodeClassReady False, NodeClassNotFound
_CONDITION_NOT_FOUND = re.compile(r"NodeClass not found on cluster")
_NOT_READY = re.compile(r"NodeClassNotReady|node ?class (?:is )?not ready|ignoring nodepool, not ready", re.I)
_NODE_CLASS_NAMED = re.compile(r"(?P<res>[A-Za-z0-9]*[Nn]ode[Cc]lass(?:es)?)(?:\.[\w.-]+)?[ /]\\?\"?(?P<name>[a-z0-9][-a-z0-9.]*)")
_END = re.compile(r'\t|\s\{|","|"\}|"$')
_LISTING = re.compile(r"listing instance types for (?P<pool>[a-z0-9][-a-z0-9.]*),")
_POOL_FIELD = re.compile(r"\\?\"(?:nodepool|NodePool|nodePool|provisioner)\\?\"\s*:\s*(?:\{\s*\\?\"name\\?\"\s*:\s*)?\\?\""
                         r"(?P<pool>[^\"\\]+)")
_POOL_TEXT = re.compile(r"\b(?:nodepool|NodePool)[=/ ]\\?\"?(?P<pool>[a-z0-9][-a-z0-9.]*)")


@dataclass(frozen=True)
class NodeClassError:
    state: str  # MISSING | NOT_READY | UNRESOLVED
    pool: str | None
    kind: str | None  # the node class resource as logged, e.g. EC2NodeClass
    name: str | None
    text: str  # the error, from "resolving node class" / "unable to resolve" on
    provisioner: bool = False  # a v0.2x Provisioner's (its node template is an AWSNodeTemplate, via providerRef)


def _kind(resource: str) -> str:
    """`ec2nodeclasses` -> `EC2NodeClass`; a Kind stays as it is."""
    if resource[:1].isupper():
        return resource
    base = resource.removesuffix("es") if resource.endswith("classes") else resource
    head = base[: -len("nodeclass")]
    return (head.upper() if len(head) <= 3 else head.capitalize()) + "NodeClass"


def parse(line: str) -> NodeClassError | None:
    """The node-class error a log line (console or JSON, any envelope) reports, or None."""
    if not any(t in line for t in TRIGGERS):
        return None
    text = line.replace('\\"', '"')
    start = min((i for i in (text.find(t) for t in TRIGGERS) if i >= 0), default=0)
    error = _END.split(text[start:], 1)[0].rstrip('"').strip()
    pool = None
    if (m := _LISTING.search(text)) is not None or (m := _POOL_FIELD.search(line)) is not None or (m := _POOL_FIELD.search(text)) is not None or (m := _POOL_TEXT.search(text[:start])) is not None:
        pool = m.group("pool")
    if (m := _NOT_FOUND.search(text)) is not None:
        return NodeClassError(MISSING, pool, _kind(m.group("res")), m.group("name"), error)
    if (m := _AWAITING.search(text)) is not None:
        return NodeClassError(AWAITING, pool, _kind(m.group("res").replace(" ", "")) if m.group("res") else None, None,
                              _END.split(text[m.start():], 1)[0].rstrip('"').strip())
    if _CONDITION_NOT_FOUND.search(text) is not None:
        return NodeClassError(MISSING, pool, None, None, error)
    if _NOT_READY.search(text) is not None:
        named = _NODE_CLASS_NAMED.search(text[start:])
        return NodeClassError(NOT_READY, pool, _kind(named.group("res")) if named else None,
                              named.group("name") if named else None, error)
    if "unable to resolve instance types" in text or "no resolved instance types" in text:  # cause cut off or
        # another one (v0.2x: `skipping, no resolved instance types found` for a Provisioner): still no types
        return NodeClassError(UNRESOLVED, pool, None, None, error, provisioner='"provisioner"' in line.replace('\\"', '"'))
    return None


def plain(e: NodeClassError) -> str:
    """What the error means for the pool and its pods, and the fix (the caller capitalises)."""
    if e.state == AWAITING:
        kind = (e.kind or "EC2NodeClass").replace("Ec2", "EC2")
        return (f"Karpenter launches nothing for this NodeClaim yet ({e.text}): its {kind} has no Ready status "
                "condition, so Karpenter waits for the node class to be reconciled. Right after the node class is "
                "created this clears in seconds. If it stays, the installed CRDs are older than the controller - "
                f"since v0.37 Karpenter reads a Ready condition that an older {kind} CRD has no place for - so "
                "upgrade the CRDs with the controller (the karpenter-crd chart, or kubectl apply the release's CRDs: "
                "helm upgrade does not update a chart's crds/ directory), then kubectl get "
                f"{kind.lower()} shows READY True; otherwise the controller's log says why it cannot reconcile it.")
    pool = f'NodePool "{e.pool}"' if e.pool else "a NodePool"
    kind = e.kind or "node class"
    named = f'{kind} "{e.name}"' if e.name else f"its {kind}"
    if e.state == MISSING:
        state = (f"its node class {named + ' ' if e.name else ''}does not exist. Create it (kubectl get "
                 f"{kind.lower() if e.kind else 'ec2nodeclass (aksnodeclass on Azure)'}; apply the {kind} your NodePool names), or point the NodePool's spec.template.spec.nodeClassRef (name, and "
                 "group / kind matching the installed CRDs) at one that exists")
    elif e.state == UNRESOLVED and e.provisioner:
        pool = f'Provisioner "{e.pool}"' if e.pool else "a Provisioner"
        state = ("the log does not say why; most often the AWSNodeTemplate its spec.providerRef names is missing, or "
                 "its subnet / security group selectors find nothing (kubectl describe awsnodetemplate shows what it "
                 "resolved), or no instance type is left once its requirements are applied")
    elif e.state == UNRESOLVED:
        where = f"kubectl get nodepool {e.pool} -o yaml" if e.pool else "the NodePool's YAML"
        state = ("the log does not show why (the error is cut off or names another cause); most often its node class "
                 f"is missing or not Ready: {where} names it in spec.template.spec.nodeClassRef, and kubectl describe "
                 "on that node class shows whether it exists and which condition fails")
    else:
        state = (f"{named} is not Ready. kubectl describe {kind.lower() if e.kind else 'ec2nodeclass'} shows the "
                 "failing condition (subnets or security groups its selectors find, the AMI, the node role / "
                 "instance profile, or the controller's IAM permissions); fix that and the pool resumes")
    return (f"Karpenter resolves no instance types for {pool} ({e.text}): {state}. Until then the pool launches "
            "nothing, and Karpenter reports its pods as 'all available instance types exceed limits' - a side effect, "
            "not the pool's limits (kubernetes-sigs/karpenter#1165).")
