"""DaemonSets an export leaves out (`kubectl get nodes,pods -A -o yaml` has their pods bound on every node, no
DaemonSet object): `consolidate` takes each from its newest pod, as Karpenter reads a DaemonSet's overhead
(`Cluster.UpdateDaemonSet` keeps the newest pod the DaemonSet controls, `getDaemonSetPods` uses it), so the
replacement it chooses holds the daemons too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_consolidate_semantics import node, nodepool, pod, removed, run, write

ALL = [{"nodes": "100%"}]


def _daemon(name: str, on: str, cpu: str = "400m", created: str = "2026-11-20T09:00:00Z") -> dict[str, Any]:
    # the DaemonSet controller pins each pod to its node (`matchFields metadata.name In [node]`)
    pinned = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [on]}]}]}}},
        "tolerations": [{"operator": "Exists"}]}
    made = pod(name, on, cpu=cpu, memory="64Mi", owner="DaemonSet/node-agent", labels={"app": "node-agent"},
               namespace="kube-system", spec=pinned)
    made["metadata"]["creationTimestamp"] = created
    return made


def _daemonset() -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "node-agent", "namespace": "kube-system"},
            "spec": {"selector": {"matchLabels": {"app": "node-agent"}}, "template": {
                "metadata": {"labels": {"app": "node-agent"}},
                "spec": {"tolerations": [{"operator": "Exists"}], "containers": [
                    {"name": "c", "image": "x", "resources": {"requests": {"cpu": "400m", "memory": "64Mi"}}}]}}}}


def _replacement(tmp_path: Path, *extra: dict[str, Any]) -> tuple[str, list[str]]:
    # 1700m of work on an m5.2xlarge: an m5.large (1930m allocatable) holds it alone, not with the 400m daemon
    docs = [node("big", itype="m5.2xlarge"), pod("w", "big", cpu="1700m"), *extra]
    report = run(write(tmp_path, *docs, pools=(nodepool(budgets=ALL),)))
    assert removed(report) == {"big": ("single", "replace")}
    replacement = report.actions[0].replacement
    assert replacement is not None
    return str(replacement.instance_type), report.warnings


def test_a_daemonset_known_only_by_its_pods_is_counted_on_the_replacement(tmp_path: Path) -> None:
    chosen, warnings = _replacement(tmp_path, _daemon("node-agent-x1", "big"))
    assert chosen == "m5.xlarge"  # not m5.large, where the daemon's pod would not fit beside w
    derived = [w for w in warnings if "not in the input" in w]
    assert len(derived) == 1 and "kube-system/node-agent (400m CPU, 64Mi)" in derived[0]


def test_the_same_daemonset_given_as_an_object_gives_the_same_replacement_without_a_warning(tmp_path: Path) -> None:
    chosen, warnings = _replacement(tmp_path, _daemon("node-agent-x1", "big"), _daemonset())
    assert chosen == "m5.xlarge"
    assert not any("not in the input" in w for w in warnings)


def test_the_newest_pod_says_what_the_daemonset_costs(tmp_path: Path) -> None:
    # an old pod of a rollout (100m) and the newest (400m): Karpenter counts the newest
    old = _daemon("node-agent-old", "big", cpu="100m", created="2026-11-01T00:00:00Z")
    chosen, warnings = _replacement(tmp_path, old, _daemon("node-agent-new", "big", created="2026-11-21T00:00:00Z"))
    assert chosen == "m5.xlarge"
    assert any("kube-system/node-agent (400m CPU" in w for w in warnings)


def test_a_defined_daemonset_counts_what_its_running_pod_requests(tmp_path: Path) -> None:
    # getDaemonSetPods takes the newest pod the DaemonSet controls before its template: the template asks 400m,
    # the pod runs with 100m (a VPA, a LimitRange), so 1700m + 100m fits an m5.large
    chosen, warnings = _replacement(tmp_path, _daemon("node-agent-x1", "big", cpu="100m"), _daemonset())
    assert chosen == "m5.large"
    [said] = [w for w in warnings if "its newest pod" in w]
    assert "DaemonSet kube-system/node-agent: its newest pod kube-system/node-agent-x1 requests 100m CPU, 64Mi " \
           "where its template asks 400m CPU, 64Mi" in said
