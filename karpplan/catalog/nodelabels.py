"""The labels a node of an instance type carries, for Karpenter (`karpenter.k8s.aws/*`) and EKS Auto Mode.

Catalog instance types keep their provider labels in the `karpenter.k8s.aws/` form. `node_labels`
renders them for a pool: unchanged for Karpenter, or under `eks.amazonaws.com/` for EKS Auto Mode
(only the keys Auto Mode supports, plus `eks.amazonaws.com/compute-type: auto`), following
karpenter-scheduler.md §15.
"""

from __future__ import annotations

from collections.abc import Mapping

from karpplan.catalog.types import InstanceType
from karpplan.model.labels import (
    ARCH,
    AUTO_PREFIX,
    AWS_PREFIX,
    CAPACITY_TYPE,
    COMPUTE_TYPE,
    INSTANCE_LABEL_SUFFIXES,
    INSTANCE_TYPE,
    OS,
    ZONE,
)
from karpplan.model.requirements import Requirement, Requirements

# The provider labels karpplan fills from its data (suffixes after the prefix). Keys the data has no
# figures for (sustained clock speed, encryption in transit, capability-flex) are left unknown: a
# requirement on them is neither satisfied nor refused by the catalog.
_NOT_IN_DATA = frozenset({
    "instance-cpu-sustained-clock-speed-mhz",
    "instance-encryption-in-transit-supported",
    "instance-tenancy",
    "instance-capability-flex",
    "nitro-sandbox",
})
AWS_LABEL_SUFFIXES = tuple(s for s in INSTANCE_LABEL_SUFFIXES if s not in _NOT_IN_DATA)

# EKS Auto Mode's supported instance labels (AWS user guide "EKS Auto Mode Supported Labels").
AUTO_MODE_SUFFIXES = frozenset(
    {
        "instance-hypervisor",
        "instance-encryption-in-transit-supported",
        "instance-category",
        "instance-generation",
        "instance-family",
        "instance-size",
        "instance-cpu",
        "instance-cpu-manufacturer",
        "instance-memory",
        "instance-ebs-bandwidth",
        "instance-network-bandwidth",
        "instance-gpu-name",
        "instance-gpu-manufacturer",
        "instance-gpu-count",
        "instance-gpu-memory",
        "instance-local-nvme",
    }
)
AUTO_COMPUTE_TYPE = "auto"


def to_karpenter_key(key: str) -> str:
    """`eks.amazonaws.com/instance-X` → `karpenter.k8s.aws/instance-X` (catalogs are stored in this form)."""
    if key.startswith(AUTO_PREFIX):
        suffix = key[len(AUTO_PREFIX) :]
        if suffix in AUTO_MODE_SUFFIXES:
            return AWS_PREFIX + suffix
    return key


def _for_pool(key: str, auto_mode: bool) -> str | None:
    """The key as a node of the pool carries it, or None when that kind of node lacks it."""
    if not key.startswith(AWS_PREFIX):
        return key
    if not auto_mode:
        return key
    suffix = key[len(AWS_PREFIX) :]
    return AUTO_PREFIX + suffix if suffix in AUTO_MODE_SUFFIXES else None


def node_labels(it: InstanceType, *, auto_mode: bool) -> dict[str, str]:
    """The well-known (and catalog) labels every node of this type carries.

    Zone, capacity type, hostname and nodepool labels depend on the launch and are not included.
    `kubernetes.io/os` is present when the type has a single OS (the kubelet sets it on every node,
    Auto Mode included; Auto Mode only refuses it as a NodePool requirement).
    """
    out: dict[str, str] = {}
    for key, value in it.labels.items():
        mapped = _for_pool(key, auto_mode)
        if mapped is not None:
            out[mapped] = value
    out[INSTANCE_TYPE] = it.name
    if len(it.os_values) == 1:
        out[OS] = it.os_values[0]
    else:
        out.pop(OS, None)
    if auto_mode:
        out[COMPUTE_TYPE] = AUTO_COMPUTE_TYPE
    return dict(sorted(out.items()))


def absent_keys(it: InstanceType, *, auto_mode: bool) -> frozenset[str]:
    """Catalog label keys this type lacks, as the pool's nodes would spell them."""
    out = set()
    for key in it.absent_label_keys:
        mapped = _for_pool(key, auto_mode)
        if mapped is not None:
            out.add(mapped)
    return frozenset(out)


def instance_requirements(it: InstanceType, *, auto_mode: bool, with_offerings: bool = True) -> Requirements:
    """Karpenter's `InstanceType.Requirements`: each label `In [value]`, absent catalog keys
    `DoesNotExist`, OS `In` the type's OSes and, with offerings, zone and capacity type `In` the values
    its offerings provide (a type with no offering then matches nothing)."""
    reqs: list[Requirement] = [
        Requirement(k, frozenset([v])) for k, v in node_labels(it, auto_mode=auto_mode).items()
    ]
    reqs.append(Requirement(OS, frozenset(it.os_values)))
    reqs.extend(Requirement.of(k, "DoesNotExist") for k in absent_keys(it, auto_mode=auto_mode))
    if with_offerings:
        reqs.append(Requirement(ZONE, frozenset(o.zone for o in it.offerings)))
        reqs.append(Requirement(CAPACITY_TYPE, frozenset(o.capacity_type for o in it.offerings)))
    return Requirements(reqs)


def aws_labels(
    *,
    name: str,
    arch: str,
    os: str | None,
    values: Mapping[str, object | None],
) -> tuple[dict[str, str], frozenset[str]]:
    """Labels for an EC2 type from provider label values keyed by suffix (empty/None values are absent).

    Returns (labels, absent provider keys). Only the suffixes in `AWS_LABEL_SUFFIXES` are considered.
    """
    labels: dict[str, str] = {INSTANCE_TYPE: name, ARCH: arch}
    if os:
        labels[OS] = os
    absent: set[str] = set()
    for suffix in AWS_LABEL_SUFFIXES:
        value = values.get(suffix)
        text = "" if value is None else str(value)
        if text:
            labels[AWS_PREFIX + suffix] = text
        else:
            absent.add(AWS_PREFIX + suffix)
    return labels, frozenset(absent)
