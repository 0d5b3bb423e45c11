"""A pod whose host port another pod already holds on every node: most often a DaemonSet.

kube-scheduler says `N node(s) didn't have free ports for the requested pod ports` (NodePorts filter); Karpenter says
`checking host port usage, IP=0.0.0.0 Port=8080 Proto=TCP conflicts with existing HostPort configuration ...` - on an
existing node, and (since kubernetes-sigs/karpenter#2102, the fix for #2083) for a new NodeClaim whose NodePool runs a
DaemonSet holding that port. A DaemonSet puts its pod on every node, new ones included, so a new or bigger node never
frees the port: the fix is the port (the pod's or the DaemonSet's), or keeping the two apart. Before that fix Karpenter
launched node after node for such a pod (#2083).
"""

from __future__ import annotations

import re

_PORT = re.compile(r"IP=(?P<ip>\S+) Port=(?P<port>\d+) Proto=(?P<proto>[A-Za-z]+)")


def is_host_port(text: str) -> bool:
    low = text.lower()
    return "host port" in low or "hostport" in low or "free ports" in low


def find_holder(port: str) -> str:
    """The command that names the pods holding host port `port` (hostNetwork pods hold every containerPort)."""
    return ("kubectl get pods -A -o json | jq -r '.items[] | select(any(.spec.containers[].ports[]?; .hostPort == "
            f"{port}) or (.spec.hostNetwork and any(.spec.containers[].ports[]?; .containerPort == {port}))) | "
            ".metadata.namespace + \"/\" + .metadata.name + \" \" + .spec.nodeName + \" \" + "
            "(.metadata.ownerReferences[0].kind // \"\")'")


def karpenter_host_port_plain(text: str, where: str) -> str:
    """Karpenter's `checking host port usage, ... conflicts with existing HostPort configuration ...`."""
    m = _PORT.search(text)
    port = m.group("port") if m else "<port>"
    if "invariant violated" in text:
        return (f"this is not a pod that failed to schedule: Karpenter's view of the cluster saw two pods on one node "
                f"holding host port {port} at once and logged it ('please file an issue'). It happens while a "
                "DaemonSet with a hostPort rolls out (its old and new pod on the same node for a moment) and is "
                "harmless; nothing on the pod or the DaemonSet needs changing - upgrade Karpenter if it keeps "
                "logging it outside rollouts.")
    what = f"host port {port}/{m.group('proto')} (IP {m.group('ip')})" if m else "a host port"
    return (f"the pod asks for {what} (containers[].ports[].hostPort, or every containerPort under hostNetwork: "
            f"true), and on the nodes of {where} another pod already holds it - a DaemonSet that runs on every node "
            "of that pool (Karpenter checks the DaemonSets that would run on a new node too), or on an existing node "
            "another pod, often an old replica of the same workload. A new or larger node does not help: the "
            "DaemonSet's pod takes the port on it as well (older Karpenter kept launching nodes for such a pod, "
            f"kubernetes-sigs/karpenter#2083). Find the holder: {find_holder(port)} (kind DaemonSet names the "
            "culprit). Then give the pod or the DaemonSet another port, drop hostPort (expose the pod through a "
            "Service), or keep them apart (the DaemonSet's nodeAffinity / tolerations, or a NodePool whose nodes it "
            "does not run on).")


def node_ports_hint(every_node: bool) -> str:
    """kube-scheduler's `node(s) didn't have free ports for the requested pod ports`."""
    every = (" Every node saying so points at a DaemonSet (one pod on each node, new nodes included), so "
             "Karpenter or cluster-autoscaler adding a node does not help either." if every_node else "")
    return ("Node(s) didn't have free ports: the pod asks for a host port (containers[].ports[].hostPort, or every "
            "containerPort when it runs with hostNetwork: true) that another pod on those nodes already holds - a "
            "DaemonSet on the same port (two monitoring stacks each running node-exporter on 9100: a cluster's "
            "built-in one - OpenShift's, a distribution's add-on - and a kube-prometheus-stack install), the "
            "workload's own old replica during a rolling update, an ingress controller or k3s svclb pod." + every + " Find the holder: " + find_holder("<port>") + " (kind DaemonSet "
            "names the culprit). A node takes one such pod per port, and a bigger node does not help: give the pod "
            "or the holder another port, run at most one replica per node (a rolling update with maxSurge: 0, or "
            "fewer replicas than nodes), or drop hostPort / hostNetwork and expose the pod through a Service.")


def servicelb_note(pod: str | None) -> str:
    """k3s's ServiceLB (klipper-lb) pod left pending on host ports, or ''. ServiceLB runs a `svclb-<service>-...` pod
    on every node for each Service of type LoadBalancer, holding the Service's ports as host ports there: a second
    LoadBalancer Service on a port another one already holds (Traefik's 80 / 443, say) fits no node."""
    name = (pod or "").rsplit("/", 1)[-1]
    if not name.startswith("svclb-"):
        return ""
    return ("This pod is k3s's ServiceLB (klipper-lb) for a Service of type LoadBalancer: it holds that Service's "
            "ports as host ports on each node, so another LoadBalancer Service on the same port (k3s's Traefik on "
            "80 / 443, or a Service sharing an IP) leaves it no node. Give the Service other ports, or - when MetalLB "
            "or another load balancer assigns the addresses - start k3s with --disable servicelb so no svclb pods are "
            "made.")
