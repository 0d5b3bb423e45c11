"""What the VPC resource controller's webhook adds to pods at admission, in no manifest the user pastes:
`vpc.amazonaws.com/pod-eni: 1` to every pod a SecurityGroupPolicy (vpcresources.k8s.aws/v1beta1) selects, and
`vpc.amazonaws.com/PrivateIPv4Address: 1` to every Windows pod.

aws/amazon-vpc-resource-controller-k8s webhooks/core/pod_webhook.go and pkg/utils/helper.go: a Linux pod (not
hostNetwork, not on Fargate, no `kubernetes.io/os: windows` nodeSelector) that a policy of its own namespace
selects gets one branch network interface: `vpc.amazonaws.com/pod-eni: 1` in its first container's requests and
limits. A policy selects a pod when it has security groups and a podSelector and/or a serviceAccountSelector,
and each one it has matches (the pod's labels; its ServiceAccount's labels). A node offers only its instance
type's branch-interface limit of them (Karpenter's `vpc.amazonaws.com/pod-eni` capacity: m5.large 9, t3 none),
so the request caps how many such pods a node takes. The same webhook gives every Windows pod (a
`kubernetes.io/os: windows` nodeSelector, not hostNetwork) `vpc.amazonaws.com/PrivateIPv4Address: 1` when Windows
IPAM is on, as EKS's Windows support has it turned on (the `amazon-vpc-cni` ConfigMap's `enable-windows-ipam`): a
Windows node offers its IPv4 addresses per interface less one (Karpenter's `privateIPv4Address`: m5.large 9).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from karpplan.errors import UNKNOWN, Origin
from karpplan.model.inventory import InputNotice
from karpplan.model.pods import Pod
from karpplan.model.selectors import LabelSelector, selector_matches

POD_ENI = "vpc.amazonaws.com/pod-eni"
PRIVATE_IPV4 = "vpc.amazonaws.com/PrivateIPv4Address"
_WINDOWS_OS_KEYS = ("kubernetes.io/os", "beta.kubernetes.io/os")
_FARGATE_PROFILE_LABEL = "eks.amazonaws.com/fargate-profile"


@dataclass(frozen=True)
class SecurityGroupPolicy:
    name: str
    namespace: str
    pod_selector: LabelSelector | None
    service_account_selector: LabelSelector | None
    has_groups: bool
    origin: Origin = field(default=UNKNOWN, compare=False)

    def selects(self, labels: Mapping[str, str], account_labels: Mapping[str, str]) -> bool:
        """`filterPodSecurityGroups` for one policy."""
        if not self.has_groups or (self.pod_selector is None and self.service_account_selector is None):
            return False  # an invalid policy: the controller skips it
        if self.pod_selector is not None and not selector_matches(self.pod_selector, labels):
            return False
        return self.service_account_selector is None or selector_matches(self.service_account_selector, account_labels)


@dataclass(frozen=True)
class SecurityGroupPolicies:
    """The policies of each namespace, and the ServiceAccounts' labels (namespace, name) -> labels."""

    by_namespace: Mapping[str, tuple[SecurityGroupPolicy, ...]] = field(default_factory=dict)
    account_labels: Mapping[tuple[str, str], Mapping[str, str]] = field(default_factory=dict)

    def webhook_requests(self, spec: object, namespace: str, labels: Mapping[str, str]) -> dict[str, int]:
        """What the webhook adds to the requests of a pod with `spec` and `labels` created in `namespace`
        (`WhichPod`: hostNetwork and Fargate pods get nothing, Windows pods an address, Linux pods a policy
        selects a branch interface)."""
        if not isinstance(spec, Mapping) or spec.get("hostNetwork") is True or _FARGATE_PROFILE_LABEL in labels:
            return {}
        selector = spec.get("nodeSelector")
        if isinstance(selector, Mapping) and any(selector.get(k) == "windows" for k in _WINDOWS_OS_KEYS):
            return {PRIVATE_IPV4: 1}
        policies = self.by_namespace.get(namespace)
        if not policies:
            return {}
        account = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
        account_labels = self.account_labels.get((namespace, str(account)), {})
        return {POD_ENI: 1} if any(p.selects(labels, account_labels) for p in policies) else {}


def security_group_notices(pods: Sequence[Pod], policies: SecurityGroupPolicies) -> list[InputNotice]:
    """One warning per namespace whose pending pods a SecurityGroupPolicy gives a branch network interface, and
    one for the Windows pods given an address."""
    notices: list[InputNotice] = []
    windows = [p for p in pods if PRIVATE_IPV4 in p.template.vpc_injected]
    if windows:
        workloads = sorted({p.workload for p in windows})
        shown = ", ".join(workloads[:5]) + (f" and {len(workloads) - 5} more" if len(workloads) > 5 else "")
        notices.append(InputNotice(windows[0].template.origin, (
            f"{len(windows)} Windows pod(s) of {shown} request {PRIVATE_IPV4}: 1 each, which the VPC resource "
            "controller's webhook adds to pods with a kubernetes.io/os: windows nodeSelector when Windows IPAM is on "
            "(enable-windows-ipam, as EKS's Windows support requires), so a Windows node takes at most its IPv4 "
            "addresses per network interface less one of them (m5.large 9, m5.xlarge 14), not its 110 pods; the "
            "plan counts it")))
    for namespace, listed in sorted(policies.by_namespace.items()):
        chosen = [p for p in pods if p.namespace == namespace and POD_ENI in p.template.vpc_injected]
        if not chosen:
            continue
        workloads = sorted({p.workload for p in chosen})
        shown = ", ".join(workloads[:5]) + (f" and {len(workloads) - 5} more" if len(workloads) > 5 else "")
        names = ", ".join(sorted(p.name for p in listed))
        notices.append(InputNotice(listed[0].origin, (
            f"SecurityGroupPolicy {names} in namespace {namespace} selects {len(chosen)} pod(s) of {shown}: the VPC "
            f"resource controller's webhook adds {POD_ENI}: 1 to each (a branch network interface), so a node "
            "takes at most its instance type's branch-interface limit of them (m5.large 9, m5.xlarge 18) and types "
            "that are not trunking compatible (t3, t4g, m4...) none; the plan counts it")))
    return notices
