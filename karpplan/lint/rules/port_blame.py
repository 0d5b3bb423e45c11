"""A pod no NodePool can take because a DaemonSet holds its host port on every node the pod fits: which port
of the pod as written asks for it, which DaemonSet holds it (and where it is written), and what to change.
The verdicts are the planner's (`check_pool`'s `daemonset` kind); this finds their field and names the fix."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from karpplan.model.pods import DaemonSet, HostPort, PodTemplate
from karpplan.scheduling.candidates import PoolVerdict, option_table
from karpplan.scheduling.daemon_ports import DaemonPort, clashing, daemonset_key
from karpplan.scheduling.problem import Problem


@dataclass(frozen=True)
class PortBlame:
    """The written field asking for the held port, and the fix naming the DaemonSet and port."""

    path: str
    fix: str


def _clashes(template: PodTemplate, verdict: PoolVerdict, problem: Problem) -> list[DaemonPort]:
    """The DaemonSet ports that clash with the pod's on the pool's options the pod fits (as `check_pool` finds
    them)."""
    table = option_table(problem.options)
    rows = table.pool_rows(verdict.pool)
    matching = rows[table.affinity_mask(template.affinity)[rows]]
    fitting = matching[table.fits(template.requests, matching)]
    return [c for o in table.rows(fitting) for c in clashing(template.host_ports, o.daemon_ports)]


def _port_text(port: HostPort) -> str:
    text = f"{port.port}/{port.protocol}"
    return text if port.host_ip in ("0.0.0.0", "", "::") else f"{port.host_ip}:{text}"


def _written_port(spec: object, spec_path: str, held: Sequence[HostPort]) -> tuple[str, str] | None:
    """(field path, container name) of the first written port asking for one of `held`: its `hostPort`, or,
    under `hostNetwork`, its `containerPort` (every containerPort is then a host port)."""
    if not isinstance(spec, dict):
        return None
    host_network = spec.get("hostNetwork") is True
    for group in ("containers", "initContainers"):
        containers = spec.get(group)
        for i, container in enumerate(containers if isinstance(containers, list) else []):
            ports = container.get("ports") if isinstance(container, dict) else None
            for j, port in enumerate(ports if isinstance(ports, list) else []):
                if not isinstance(port, dict):
                    continue
                key = "hostPort" if port.get("hostPort") not in (None, 0) else "containerPort" if host_network else None
                number = port.get(key) if key else None
                protocol = str(port.get("protocol") or "TCP")
                if isinstance(number, int) and any(h.port == number and h.protocol == protocol for h in held):
                    path = (f"{spec_path}.hostNetwork" if key == "containerPort"
                            else f"{spec_path}.{group}[{i}].ports[{j}].hostPort")
                    return path, str(container.get("name") or f"{group}[{i}]")
    return None


def _daemonset_text(name: str, daemonsets: Sequence[DaemonSet]) -> str:
    """`DaemonSet ns/name (file:line)`, where it is written when the input holds it."""
    found = next((ds for ds in daemonsets if daemonset_key(ds) == name), None)
    return f"DaemonSet {name} ({found.origin})" if found is not None and found.origin.file else f"DaemonSet {name}"


def port_blame(spec: object, spec_path: str, template: PodTemplate, verdicts: Sequence[PoolVerdict],
               problem: Problem) -> PortBlame | None:
    """Where and what to change when DaemonSets' host ports are why NodePools refuse the pod (`spec`, written at
    `spec_path`; None when no refusing pool says so)."""
    refused = [v for v in verdicts if not v.ok and v.kind == "daemonset"]
    if not refused:
        return None
    clashes = list(dict.fromkeys(c for v in refused for c in _clashes(template, v, problem)))
    if not clashes:
        return None
    ports = list(dict.fromkeys(p for _, p in clashes))
    owners = list(dict.fromkeys(ds for ds, _ in clashes))
    port_text = ", ".join(_port_text(p) for p in ports)
    owner_text = ", ".join(_daemonset_text(o, problem.inventory.daemonsets) for o in owners)
    pools = ", ".join(v.pool.name for v in refused)
    written = _written_port(spec, spec_path, ports)
    plural = "s" if len(ports) > 1 else ""
    if written is not None and written[0].endswith(".hostNetwork"):
        ask = (f"this pod runs with hostNetwork, so container {written[1]}'s containerPort{plural} {port_text} "
               f"{'are host ports' if plural else 'is a host port'}: drop hostNetwork or use another port")
    elif written is not None:
        ask = f"give container {written[1]} another hostPort than {port_text}, or drop hostPort if it does not need one"
    else:
        ask = f"give the pod another host port than {port_text}, or drop hostPort / hostNetwork if it does not need one"
    fix = (f"{owner_text} holds host port{plural} {port_text} on every node of NodePool{'s' * (len(refused) > 1)} "
           f"{pools} this pod fits: {ask}, or keep {'that DaemonSet' if len(owners) == 1 else 'those DaemonSets'} off "
           "the nodes this pod needs (a nodeSelector or node affinity in its template)")
    return PortBlame(written[0] if written is not None else spec_path, fix)
