"""model/node_os.py: the OS questions lint's windows-pool-takes-linux-pods and explain's fixes both ask."""

from __future__ import annotations

from karpplan.model.node_os import WINDOWS, launches_only, names_an_os, runs_its_os
from karpplan.model.pods import PodTemplate
from karpplan.model.requirements import Requirement, Requirements
from karpplan.model.resources import Resources
from karpplan.model.selectors import NodeAffinity, NodeSelectorTerm

OS = "kubernetes.io/os"


def pod(selector: Requirement | None = None, terms: tuple[Requirement | None, ...] | None = None) -> PodTemplate:
    required = None if terms is None else tuple(NodeSelectorTerm(Requirements([t] if t else [])) for t in terms)
    affinity = NodeAffinity(node_selector=Requirements([selector] if selector else []), required=required)
    return PodTemplate("default", {}, Resources({"cpu": 1}), affinity=affinity)


def pool(*values: str, operator: str = "In") -> Requirements:
    return Requirements([Requirement.of(OS, operator, list(values))]) if values else Requirements()


def test_a_pod_naming_no_os_runs_a_linux_image_so_a_windows_pool_does_not_run_it() -> None:
    assert not runs_its_os(pool("windows"), pod())
    assert runs_its_os(pool("linux"), pod())
    assert runs_its_os(pool(), pod())  # a pool naming no OS launches either
    assert runs_its_os(pool("windows"), pod(Requirement.of(OS, "In", ["windows"])))


def test_a_pod_names_an_os_only_when_every_required_term_does() -> None:
    assert names_an_os(pod(Requirement.of(OS, "In", ["linux"])))
    assert names_an_os(pod(terms=(Requirement.of(OS, "In", ["windows"]),)))
    assert not names_an_os(pod(terms=(Requirement.of(OS, "In", ["windows"]), None)))
    assert not names_an_os(pod())


def test_only_an_in_windows_pool_launches_only_windows() -> None:
    assert launches_only(pool("windows"), WINDOWS)
    assert not launches_only(pool("linux", "windows"), WINDOWS)
    assert not launches_only(pool(), WINDOWS)
