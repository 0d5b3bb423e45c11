"""Which operating system a pod's image runs and which a NodePool launches: the `kubernetes.io/os` questions lint
(a Windows NodePool taking pods that name no OS) and explain (a fix that sends a pod to a pool of another OS is no
fix) both ask.

A pod that names no OS runs a Linux image (every upstream image without a Windows variant): Karpenter and
kube-scheduler still place it on any node it fits, Windows ones included, where its image never starts
("no matching manifest for windows"). A NodePool that names no OS launches either.
"""

from __future__ import annotations

from karpplan.model.labels import OS
from karpplan.model.pods import PodTemplate
from karpplan.model.requirements import Requirement, Requirements

LINUX = "linux"
WINDOWS = "windows"


def names_an_os(template: PodTemplate) -> bool:
    """Whether the pod names an OS wherever it may run: its nodeSelector, or every required node-affinity term."""
    return all(OS in alternative for alternative in template.affinity.strict_alternatives())


def image_os(template: PodTemplate) -> Requirement:
    """The OS the pod's image runs: the OS its (first) strict node requirements select, else Linux."""
    alternatives = template.affinity.strict_alternatives()
    requirements = alternatives[0] if alternatives else template.affinity.node_selector
    return requirements.get(OS) or Requirement(OS, frozenset({LINUX}))


def launches_os(pool_requirements: Requirements, wanted: Requirement) -> bool:
    """Whether a pool with these requirements may launch a node of an OS `wanted` allows (a pool that names no OS
    launches any)."""
    pool_os = pool_requirements.get(OS)
    return pool_os is None or not pool_os.intersect(wanted).is_empty()


def runs_its_os(pool_requirements: Requirements, template: PodTemplate) -> bool:
    """Whether a pool may launch a node of the OS the pod's image runs (a Windows pool that takes a pod naming no OS
    does not: its Linux image never starts there)."""
    return launches_os(pool_requirements, image_os(template))


def launches_only(pool_requirements: Requirements, os_name: str) -> bool:
    """Whether every node a pool with these requirements launches runs `os_name` (`kubernetes.io/os In [os_name]`)."""
    pool_os = pool_requirements.get_or_any(OS)
    return not pool_os.complement and pool_os.values == frozenset({os_name})
