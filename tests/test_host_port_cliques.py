"""Which pending groups' host ports clash pairwise (at most one of their pods per node in the counts model)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from karpplan.constraints.host_ports import port_cliques
from karpplan.model.pods import HostPort


def group(index: int, *ports: HostPort) -> Any:
    return SimpleNamespace(index=index, template=SimpleNamespace(host_ports=ports))


def cliques(*groups: Any) -> list[list[int]]:
    return [[g.index for g in c] for c in port_cliques(list(groups))]


def test_a_wildcard_port_clashes_with_every_ip_and_two_ips_do_not_clash() -> None:
    wildcard = group(0, HostPort(8080))
    a, b = group(1, HostPort(8080, host_ip="10.0.0.1")), group(2, HostPort(8080, host_ip="10.0.0.2"))
    assert cliques(wildcard, a, b) == [[0, 1], [0, 2]]
    assert cliques(a, b) == [[1], [2]]  # each replica alone per node; the two may share one


def test_protocols_are_apart_and_a_clique_is_given_once() -> None:
    tcp = group(0, HostPort(53, "TCP"), HostPort(8080))
    udp = group(1, HostPort(53, "UDP"))
    both = group(2, HostPort(53, "TCP"), HostPort(8080))
    assert cliques(tcp, udp, both) == [[0, 2], [1]]
    assert cliques(group(0), group(1)) == []
