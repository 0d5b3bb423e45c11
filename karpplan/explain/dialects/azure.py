"""Karpenter's Azure provider (karpenter-provider-azure, and AKS node auto-provisioning, NAP, which runs it): what
its errors mean where the AWS wording would mislead.

A NodeClaim that Azure would not create (the NodeClaim's Launched condition, the controller's log):

    creating instance, ... QuotaExceeded ... Operation could not be completed as it results in exceeding approved
        Total Regional Cores quota. Additional details - ... Location: northeurope, Current Limit: 100, ...
    The regional capacity limit for your subscription has been reached. ...
    getting backend pools: failed to get next loadbalancer page: DefaultAzureCredential: failed to acquire a token.
        Attempted credentials: ... ManagedIdentityCredential: ... Multiple user assigned identities exist, ...
    unable to allocate resources in the selected zone (westeurope-1). (will try a different zone ...)
    SkuNotAvailable / AllocationFailed / OverconstrainedAllocationRequest

And a pool on Azure: its requirements name karpenter.azure.com/... keys (sku-name, sku-family), which the AWS
catalog knows nothing of; `topology.kubernetes.io/zone In [0]` is AKS's label of a regional (non-zonal) VM.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

CREDENTIALS = "azure credentials"
QUOTA = "azure quota"
CAPACITY = "azure capacity"
API = "azure api"
SUBNET = "azure subnet full"
CAUSES = (CREDENTIALS, QUOTA, CAPACITY, API, SUBNET)

TRIGGERS = ("AzureCredential", "ManagedIdentityCredential", "AADSTS", "AuthorizationFailed", "QuotaExceeded",
            "exceeding approved", "regional capacity limit for your subscription", "subscription level",
            "LowPriorityCores",
            "unable to allocate resources in the selected zone", "ZonalAllocationFailed", "SkuNotAvailable",
            "OverconstrainedAllocationRequest", "OverconstrainedZonalAllocationRequest", "AllocationFailed",
            "failed to get next loadbalancer page", "getting backend pools", "SubnetIsFull")
_CREDENTIALS = re.compile(r"AzureCredential|ManagedIdentityCredential|AADSTS\d+|failed to acquire a token|"
                          r"AuthorizationFailed|does not have authorization to perform action")
_QUOTA = re.compile(r"\bQuotaExceeded\b|exceeding approved|regional capacity limit for your subscription|"
                    r"subscription level \S+ vCPU quota|LowPriorityCores")
_CAPACITY = re.compile(r"unable to allocate resources in the selected zone|ZonalAllocationFailed|SkuNotAvailable|"
                       r"Overconstrained(?:Zonal)?AllocationRequest|AllocationFailed")
_FIGURES = {name: re.compile(rf"{label}:\s*(?P<v>[\w-]+)") for name, label in (
    ("location", "Location"), ("limit", "Current Limit"), ("usage", "Current Usage"),
    ("required", "Additional Required"), ("new_limit", r"\(Minimum\) New Limit Required"))}
_QUOTA_NAME = re.compile(r"exceeding approved (?P<q>.+?) quota")
_SUBSCRIPTION = re.compile(r"/subscriptions/(?P<s>[^/\s\"']+)/")
_API = re.compile(r"failed to get next loadbalancer page|getting backend pools|management\.azure\.com")
_CODE_ONLY = re.compile(r'\s*"code"\s*:\s*"\w+"\s*,?\s*|\s*ERROR CODE:\s*\w+\s*')  # azcore's header: the message follows
_URL = re.compile(r":?\s*(?:GET|PUT|POST|DELETE|PATCH) https?://\S*")
# SubnetIsFull: "Subnet <id>/subnets/<name> with address prefix <cidr> does not have enough capacity for <n> IP addresses"
_SUBNET_FULL = re.compile(r"Subnet \S*?/subnets/(?P<name>[^/\s]+) with address prefix (?P<prefix>\S+) does not have "
                          r"enough capacity for (?P<n>\d+) IP address")
_ZONE = re.compile(r"selected zone \((?P<z>[^)]+)\)")
# the text of the error from its first Azure words on, without the JSON / YAML around it
_START = re.compile(r"creating instance|getting backend pools|failed to get next loadbalancer page|Create or update "
                    r"virtual machine|Operation could not be completed|The regional capacity limit|"
                    r"(?:We're currently )?unable to allocate|DefaultAzureCredential|SubnetIsFull|" + _QUOTA.pattern, re.I)
AZURE_KEY_PREFIXES = ("karpenter.azure.com/", "kubernetes.azure.com/", "topology.disk.csi.azure.com/")
REGIONAL_ZONE = "0"  # AKS's topology.kubernetes.io/zone of a VM in no availability zone


@dataclass(frozen=True)
class AzureError:
    cause: str  # one of CAUSES
    text: str
    figures: tuple[tuple[str, str], ...] = ()  # (name, value) of _FIGURES found, in their order
    quota: str | None = None
    subscription: str | None = None
    zone: str | None = None


def parse(line: str) -> AzureError | None:
    """The Azure error a NodeClaim's condition or a log line reports, or None."""
    if not any(t in line for t in TRIGGERS) or _CODE_ONLY.fullmatch(line):
        return None  # a pretty-printed error's `"code": "QuotaExceeded",` line: its message follows
    text = " ".join(line.replace('\\"', '"').replace("\\n", " ").replace("\\t", " ").split())
    start = _START.search(text)
    error = text[start.start():] if start is not None else text
    sub = _SUBSCRIPTION.search(text)
    subscription = sub.group("s") if sub else None
    if _QUOTA.search(text):
        figures = tuple((name, m.group("v")) for name, rx in _FIGURES.items() if (m := rx.search(text)) is not None)
        q = _QUOTA_NAME.search(text)
        return AzureError(QUOTA, error, figures, q.group("q") if q else None, subscription)
    if _CREDENTIALS.search(text):
        return AzureError(CREDENTIALS, error, subscription=subscription)
    if "SubnetIsFull" in text:
        full = _SUBNET_FULL.search(text)
        return AzureError(SUBNET, error, tuple(full.groupdict().items()) if full else (), subscription=subscription)
    if _CAPACITY.search(text):
        z = _ZONE.search(text)
        return AzureError(CAPACITY, error, subscription=subscription, zone=z.group("z") if z else None)
    if _API.search(text) is None:
        return None  # a trigger word alone (ServiceQuotaExceeded, ...) is no Azure error
    return AzureError(API, error, subscription=subscription)


def _credential_advice(text: str) -> str:
    low = text.lower()
    found = []
    if "multiple user assigned identities" in low:
        found.append("the node (VM) running Karpenter has several user-assigned managed identities and the request "
                     "named none, so Azure would not choose: name the identity Karpenter should use by its client ID "
                     "(AZURE_CLIENT_ID, or the workload identity's client ID in Karpenter's settings)")
    if "no client id specified" in low or "azure_client_id" in low:
        found.append("workload identity found no client ID (the service account's azure.workload.identity/client-id "
                     "annotation, with the pod label azure.workload.identity/use: \"true\")")
    if "aadsts" in low or "authorizationfailed" in low or "does not have authorization" in low:
        found.append("the identity signed in but may not do what Karpenter asks (its role assignments on the "
                     "cluster's node resource group, VNet and load balancer)")
    return ("; ".join(found) + ". ") if found else ""


def plain(e: AzureError) -> str:
    """What an Azure launch error means and the smallest fix."""
    if e.cause == QUOTA:
        fig = dict(e.figures)
        where = f" in {fig['location']}" if "location" in fig else ""
        numbers = (f" (limit {fig['limit']}, in use {fig.get('usage', '?')}, this VM needs {fig['required']} more"
                   + (f": at least {fig['new_limit']}" if "new_limit" in fig else "") + ")") if "limit" in fig and "required" in fig else ""
        whose = f" {e.subscription}" if e.subscription and "<" not in e.subscription else ""
        return (f"Azure refused the VM for a quota: the subscription's{whose} {e.quota or 'vCPU'} quota{where} is used "
                f"up{numbers}. Request an increase of that quota (the subscription's Usage + quotas page, for that "
                "region), or lower the NodePool's cpu limit, or allow VM sizes of a family with quota "
                "left (karpenter.azure.com/sku-family)." + (" The quota is the one of the subscription the error "
                "names (in the VM's resource ID): if that is not a subscription you own, only its owner - for a managed "
                "cluster, Azure support - can raise it." if e.subscription else "") + " Nothing on the pod is wrong.")
    if e.cause == SUBNET:
        return _subnet_full_plain(dict(e.figures))
    if e.cause == CREDENTIALS:
        return ("Karpenter (its Azure provider) could not authenticate to Azure, so it creates no VM at all: "
                + _credential_advice(e.text) + "Each credential DefaultAzureCredential tried is listed with why it "
                "failed; the one you deploy Karpenter with (workload identity or the kubelet's managed identity) is "
                "the one to fix. On AKS node auto-provisioning the controller and its identity are AKS's, not yours to "
                "configure: when it persists, open an Azure support request (and name any user-assigned identities "
                "added to the cluster's node pools). Nothing on the pod is wrong, and no NodePool change helps.")
    if e.cause == CAPACITY:
        where = f" in {e.zone}" if e.zone else ""
        return (f"Azure could not allocate the VM{where}: no capacity for that size there, the size is not offered to "
                "this subscription in that zone, or (Overconstrained...AllocationRequest) no host meets every "
                "constraint the message lists - zone, ephemeral OS disk, accelerated networking, size. Karpenter "
                "marks that size and zone unavailable for a while and tries another, so this often clears on its "
                "own (releases before PR #892 did not for the Overconstrained and AllocationFailed codes and kept "
                "retrying the same spot offering instead of falling back to on-demand, Azure/karpenter-provider-azure"
                "#762: upgrade); when it keeps failing, the NodePool allows too few choices - allow more VM sizes and "
                "families (karpenter.azure.com/sku-family, sku-cpu), more zones, on-demand beside spot. For an AKS "
                "node pool (no Karpenter) its one VM size is the constraint: pick another size, or zones that offer "
                "it (az vm list-skus --location <region> --size <size> lists its zones and restrictions). Nothing on "
                "the pod is wrong.")
    return (f"Karpenter's call to Azure failed while creating the VM ({_URL.sub('', e.text)[:160]}): the status and code Azure returned "
            "follow the request in the full error - 401/403 (AuthorizationFailed) is the identity's permissions, 404 "
            "a resource (load balancer, subnet) that is gone, 429 throttling (it retries). That is the cluster's "
            "Azure side, not the pod.")


def _subnet_full_plain(fig: dict[str, str]) -> str:
    subnet = (f"the subnet {fig['name']} ({fig['prefix']}) had not the {fig['n']} free address(es) the VM's network "
              "interface asks" if fig else "the subnet had no free address for the VM's network interface")
    return (f"Azure refused the VM (SubnetIsFull): {subnet}. It is the subnet the error names that is full - the one "
            "Karpenter launches into (the AKSNodeClass's vnetSubnetID, else the cluster's: Karpenter's AZURE_SUBNET_ID), "
            "which need not be the subnet your other node pools use; check it: az network vnet subnet show (its "
            "addresses in use) and az network vnet subnet list-available-ips. What holds addresses there: every node "
            "(with Azure CNI without overlay, 1 + its max pods each), and network interfaces left behind by deleted "
            "nodes (Azure/karpenter-provider-azure#543: delete the orphaned NICs). Free addresses, widen the subnet, or "
            "point the AKSNodeClass at a subnet with room. Nothing on the pod is wrong.")


NOT_JOINED = ("A NodeClaim's VM was created but its node never registered with the cluster (the NodeClaim's "
              "Registered condition: NodeNotFound, Node not registered with cluster): the kubelet on the VM cannot join - "
              "its bootstrap (the AKSNodeClass's image family and the node bootstrapping token / TLS bootstrapping "
              "Karpenter's settings give it), or no route from the VM's subnet to the API server (NSG rules, a "
              "route table or firewall without the AKS egress rules, a private cluster's DNS). The VM's boot "
              "diagnostics (az vm boot-diagnostics get-boot-log) show the kubelet's error; Karpenter deletes the "
              "NodeClaim after 15 minutes and tries again. Nothing on the pod is wrong.")
"""`Node not registered with cluster` where the paste shows Karpenter's Azure provider (launch.py's words are EC2's)."""
MARKERS = ("karpenter.azure.com", "kubernetes.azure.com", "AKSNodeClass", "azure:///subscriptions")
"""Words that put a paste on Azure (a NodeClaim's labels, its node class kind, its providerID)."""


def on_azure(keys: Iterable[str]) -> bool:
    """Whether requirement keys say the pool is one of Karpenter's Azure provider."""
    return any(k.startswith(AZURE_KEY_PREFIXES) for k in keys)


def no_type_advice(zone_values: tuple[str, ...] | None) -> str:
    """What to check when an Azure pool fits no VM size (the AWS catalog cannot judge Azure sizes)."""
    if zone_values is not None and REGIONAL_ZONE in zone_values:
        return ("The requirements ask for topology.kubernetes.io/zone \"0\": that is how AKS labels a regional VM "
                "(one in no availability zone), and karpenter-provider-azure releases without regional "
                "provisioning offer a VM size that has zones only in numbered zones (region-1, -2, -3), so a zone "
                "\"0\" requirement leaves only the few sizes with no zones at all (Azure/karpenter-provider-azure"
                "#1002; regional VMs came with the karpenter.azure.com/placement-scope label). Drop the zone "
                "requirement (or require real zones), or upgrade to a release with regional provisioning; the pod's "
                "size is not the cause.")
    return ("These are Azure VM sizes: compare the request (with DaemonSet overhead) with the largest size the "
            "requirements allow (karpenter.azure.com/sku-name, sku-family, sku-cpu), check the pool's cpu and memory "
            "limits, and whether those sizes are offered to the subscription in the region and zones for the "
            "capacity type (az vm list-skus --location <region> shows each size's restrictions).")
