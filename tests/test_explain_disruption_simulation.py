"""`explain --manifests` on Karpenter's disruption messages: the node each message names is run through the
consolidation simulation of the snapshot given, and the item says whether Karpenter would consolidate it now,
why not in Karpenter's words, which pod blocks it, or that the snapshot lacks the node.

The messages are the real rows of tests/test_explain_disruption.py (upstream threads); the snapshot is a small
eu-central-1 cluster written here around the nodes those rows name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console
from test_explain_disruption import DESCRIBE_NODE, GET_EVENTS, JSON_EVENT
from typer.testing import CliRunner

from karpplan.cli.explain_consolidation import consolidation_simulator
from karpplan.cli.main import app
from karpplan.explain.render import render_table
from karpplan.explain.report import explain_text
from karpplan.explain.simulation import simulate_items

ZONE = "eu-central-1a"
PDB_NODE = "ip-10-52-162-231.eu-central-1.compute.internal"  # GET_EVENTS: Pdb prevents pod evictions
ABSENT_NODE = "ip-10-54-144-4.eu-central-1.compute.internal"  # GET_EVENTS too, left out of the snapshot
ANNOTATED_NODE = "ip-172-31-6-136.eu-central-1.compute.internal"  # JSON_EVENT: a do-not-disrupt pod
ANNOTATED_POD = "cdp-default-2ekrbha7wakskum3uuw492ts4y"
IDLE_NODE = "ip-10-52-170-10.eu-central-1.compute.internal"  # one small pod: its node can go
# v1.1+ JSON log line (kubernetes-sigs/karpenter queue.go: the reason, decision and disrupted nodes beside it)
DISRUPTING = ('{"level":"INFO","time":"2024-10-01T10:00:00.000Z","logger":"controller","message":"disrupting node(s)",'
              '"controller":"disruption","command-id":"a1","reason":"underutilized","decision":"delete",'
              '"disrupted-node-count":1,"replacement-node-count":0,"pod-count":1,"disrupted-nodes":[{"Node":{"name":"'
              + IDLE_NODE + '"},"NodeClaim":{"name":"default-x7k2p"},"capacity-type":"on-demand",'
              '"instance-type":"m5.large"}]}')
# v0.32-v0.37 console line naming the same node
CONSOLE = ("2024-02-26T16:41:54.123Z\tINFO\tcontroller.disruption\tdisrupting via consolidation delete, terminating 1 "
           f'candidates {IDLE_NODE}/m5.large/on-demand\t{{"commit": "1072d3b"}}')


def _node(name: str) -> dict[str, Any]:
    labels = {"karpenter.sh/nodepool": "default", "karpenter.sh/capacity-type": "on-demand",
              "karpenter.sh/initialized": "true", "karpenter.sh/registered": "true",
              "karpenter.k8s.aws/ec2nodeclass": "default", "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux",
              "kubernetes.io/hostname": name, "node.kubernetes.io/instance-type": "m5.large",
              "topology.kubernetes.io/region": "eu-central-1", "topology.kubernetes.io/zone": ZONE}
    resources = {"cpu": "1930m", "memory": "7068672Ki", "pods": "29"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "spec": {"providerID": f"aws:///{ZONE}/i-0{abs(hash(name)) % 10**12:012d}"},
            "status": {"allocatable": resources, "capacity": {"cpu": "2", "memory": "7758848Ki", "pods": "29"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def _pod(ns: str, name: str, node: str, owner: tuple[str, str], labels: dict[str, str], cpu: str,
         annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": ns, "labels": labels,
                            "ownerReferences": [{"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1],
                                                 "controller": True, "uid": f"uid-{owner[1]}"}]}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"nodeName": node, "containers": [{"name": "main", "image": "busybox",
                                                       "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}


def _snapshot() -> list[dict[str, Any]]:
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
           "metadata": {"name": "ebs-csi-controller", "namespace": "kube-system"},
           "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "ebs-csi-controller"}}},
           "status": {"currentHealthy": 1, "desiredHealthy": 1, "disruptionsAllowed": 0, "expectedPods": 2}}
    pool = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"},
            "spec": {"template": {"spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                                 {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5"]}]}},
                "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "30s",
                               "budgets": [{"nodes": "100%"}]}}}
    nodeclass = {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
                 "spec": {"role": "KarpenterNodeRole", "amiSelectorTerms": [{"alias": "al2023@latest"}],
                          "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "c"}}],
                          "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "c"}}]}}
    return [
        _node(PDB_NODE), _node(ANNOTATED_NODE), _node(IDLE_NODE),
        _pod("kube-system", "ebs-csi-controller-5c8b9-abcde", PDB_NODE, ("ReplicaSet", "ebs-csi-controller-5c8b9"),
             {"app": "ebs-csi-controller"}, "100m"),
        _pod("default", ANNOTATED_POD, ANNOTATED_NODE, ("Job", "cdp-default"), {"app": "cdp"}, "500m",
             {"karpenter.sh/do-not-disrupt": "true"}),
        _pod("shop", "web-7d4f8-xk2p9", IDLE_NODE, ("ReplicaSet", "web-7d4f8"), {"app": "web"}, "200m"),
        pdb, pool, nodeclass,
    ]


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(_snapshot()))
    return path


def _simulated(log: str, snapshot: Path) -> dict[str, dict[str, Any]]:
    """Each simulated node's document, by node name."""
    out = explain_text(log)
    simulate_items(out, consolidation_simulator([str(snapshot)], catalog=None, region="eu-central-1", zones=()))
    return {s["node"]: s for i in out.item_list() for s in (x.to_document() for x in i.simulations)}


def test_a_pdb_event_names_its_node_and_the_pod_the_pdb_holds(snapshot: Path) -> None:
    found = _simulated(GET_EVENTS, snapshot)
    kept = found[PDB_NODE]
    assert kept["inSnapshot"] and kept["consolidatable"] is False
    assert kept["reason"] == "Pdb prevents pod evictions (PodDisruptionBudget=[kube-system/ebs-csi-controller])"
    [blocker] = kept["blockingPods"]
    assert blocker["name"] == "kube-system/ebs-csi-controller-5c8b9-abcde"
    assert "kube-system/ebs-csi-controller" in blocker["outcome"]
    # the second node of the same PDB row is not in the snapshot: said in one line, nothing simulated
    assert found[ABSENT_NODE] == {"node": ABSENT_NODE, "inSnapshot": False,
                                  "reason": "not in the snapshot (3 node(s) read)"}


def test_a_do_not_disrupt_event_names_the_annotated_pod(snapshot: Path) -> None:
    kept = _simulated(JSON_EVENT + "\n", snapshot)[ANNOTATED_NODE]
    assert kept["consolidatable"] is False and "do-not-disrupt" in kept["reason"]
    assert [p["name"] for p in kept["blockingPods"]] == [f"default/{ANNOTATED_POD}"]


@pytest.mark.parametrize("line", [DISRUPTING, CONSOLE])
def test_a_disruption_under_way_is_confirmed_with_where_the_pods_go(line: str, snapshot: Path) -> None:
    gone = _simulated(line, snapshot)[IDLE_NODE]
    assert gone["consolidatable"] is True and gone["blockingPods"] == []
    assert gone["reason"].startswith("Deleted through")
    [pod] = gone["pods"]
    assert pod["name"] == "shop/web-7d4f8-xk2p9" and pod["outcome"].startswith("would move to node")


def test_manifests_without_nodes_say_so(tmp_path: Path) -> None:
    path = tmp_path / "app.yaml"
    path.write_text(yaml.safe_dump(_snapshot()[4]))  # a pod only: no cluster snapshot
    found = _simulated(GET_EVENTS, path)
    assert not found[PDB_NODE]["inSnapshot"] and "no Node objects" in found[PDB_NODE]["reason"]


def test_the_cli_adds_the_verdict_under_the_item_and_to_its_json(snapshot: Path, tmp_path: Path) -> None:
    log = tmp_path / "events.txt"
    log.write_text(GET_EVENTS + JSON_EVENT + "\n")
    runner = CliRunner()
    table = runner.invoke(app, ["explain", str(log), "--manifests", str(snapshot), "--region", "eu-central-1"])
    assert table.exit_code == 0, table.output
    text = " ".join(table.output.split())
    assert f"simulation: node {PDB_NODE}: Karpenter keeps it: Pdb prevents pod evictions" in text
    assert f"simulation: node {ABSENT_NODE}: not in the snapshot" in text
    assert f"blocking pod default/{ANNOTATED_POD}" in text
    doc = json.loads(runner.invoke(app, ["explain", str(log), "--manifests", str(snapshot), "--region",
                                         "eu-central-1", "-o", "json"]).output)
    pdb_item = doc["items"][0]
    assert pdb_item["nodes"] == [PDB_NODE, ABSENT_NODE] and pdb_item["count"] == 2
    assert [s["node"] for s in pdb_item["simulations"]] == [PDB_NODE, ABSENT_NODE]
    assert pdb_item["plain"] and pdb_item["reasons"] == []  # the contract fields as they were


def test_without_manifests_the_items_only_name_their_nodes() -> None:
    doc = explain_text(GET_EVENTS).to_document()
    assert doc["items"][0]["nodes"] == [PDB_NODE, ABSENT_NODE]
    assert all("simulations" not in i for i in doc["items"])


def test_describe_node_events_are_simulated_for_the_node_of_the_header(snapshot: Path) -> None:
    out = explain_text(f"Name:               {PDB_NODE}\nRoles:              <none>\n" + DESCRIBE_NODE)
    assert [i.nodes for i in out.item_list()] == [[PDB_NODE], [PDB_NODE]]
    simulate_items(out, consolidation_simulator([str(snapshot)], catalog=None, region="eu-central-1", zones=()))
    cheaper = out.item_list()[0].simulations[0].to_document()
    assert cheaper["consolidatable"] is False and "kube-system/ebs-csi-controller" in cheaper["reason"]
    console = Console(width=200, record=True)
    render_table(out, console)
    text = console.export_text()
    # both events are the one node's: its account is printed once, the second item points to it
    assert text.count(f"simulation: node {PDB_NODE}: Karpenter keeps it") == 2
    assert text.count("blocking pod kube-system/ebs-csi-controller-5c8b9-abcde") == 1 and "(its pods: above)" in text


@pytest.mark.parametrize(("line", "nodes"), [
    # v0.2x console, replace: the replacement's types follow the node
    ("2023-03-01T10:00:00.000Z\tINFO\tcontroller.consolidation\tConsolidating via Replace, terminating 1 nodes "
     "ip-192-168-1-1.ec2.internal/m5.xlarge/on-demand and replacing with node of types m5.large, c5.large",
     ["ip-192-168-1-1.ec2.internal"]),
    # v1.0 JSON, two nodes
    ('{"level":"INFO","time":"2024-08-01T10:00:00.000Z","logger":"controller","message":"disrupting nodeclaim(s) via '
     'delete, terminating 2 nodes (3 pods) ip-10-0-1-2.ec2.internal/m5.large/spot, ip-10-0-1-3.ec2.internal/m5.large/'
     'on-demand","commit":"5bdf9c3","reason":"empty"}', ["ip-10-0-1-2.ec2.internal", "ip-10-0-1-3.ec2.internal"]),
])
def test_disruption_log_lines_name_every_node_they_terminate(line: str, nodes: list[str]) -> None:
    [item] = explain_text(line).item_list()
    assert item.parsed.event == "Disrupting" and item.nodes == nodes


def test_parts_of_a_log_read_in_parallel_keep_every_node_named() -> None:
    first, second = GET_EVENTS.splitlines()[1:3]  # the PDB's two nodes, one in each part
    out = explain_text(first + "\n")
    out.merge(explain_text(second + "\n"), out.lines)
    [item] = out.item_list()
    assert item.count == 2 and item.nodes == [PDB_NODE, ABSENT_NODE]


def test_blocking_pods_say_which_rule_and_which_pdb(snapshot: Path) -> None:
    found = _simulated(GET_EVENTS + JSON_EVENT + "\n", snapshot)
    [pdb_pod] = found[PDB_NODE]["blockingPods"]
    assert pdb_pod["blocking"] == {"rule": "pdb", "podDisruptionBudgets": ["kube-system/ebs-csi-controller"]}
    [annotated] = found[ANNOTATED_NODE]["blockingPods"]
    assert annotated["blocking"] == {"rule": "do-not-disrupt", "podDisruptionBudgets": []}
    # a pod that blocks nothing carries no blocking data
    assert all("blocking" not in p for p in _simulated(DISRUPTING, snapshot)[IDLE_NODE]["pods"])


def test_one_run_reads_and_consolidates_the_snapshot_once(snapshot: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import karpplan.cli.explain_consolidation as bound
    import karpplan.consolidate.explain as node_explain

    calls = {"steady": 0, "read": 0}
    steady, read = bound.steady_state, bound.read_documents_or_fail

    def counted_steady(*args: Any, **kwargs: Any) -> Any:
        calls["steady"] += 1
        return steady(*args, **kwargs)

    def counted_read(*args: Any, **kwargs: Any) -> Any:
        calls["read"] += 1
        return read(*args, **kwargs)

    monkeypatch.setattr(bound, "steady_state", counted_steady)
    monkeypatch.setattr(node_explain, "steady_state", counted_steady)
    monkeypatch.setattr(bound, "read_documents_or_fail", counted_read)
    found = _simulated(GET_EVENTS + JSON_EVENT + "\n" + DISRUPTING + "\n", snapshot)
    assert {n for n, s in found.items() if s["inSnapshot"]} == {PDB_NODE, ANNOTATED_NODE, IDLE_NODE}
    assert calls == {"steady": 1, "read": 1}  # three nodes explained in full from one reading, one steady state


def test_manifests_from_stdin_serve_every_node_named(snapshot: Path, tmp_path: Path) -> None:
    log = tmp_path / "events.txt"
    log.write_text(GET_EVENTS + JSON_EVENT + "\n" + DISRUPTING + "\n")
    result = CliRunner().invoke(app, ["explain", str(log), "--manifests", "-", "--region", "eu-central-1",
                                      "-o", "json"], input=snapshot.read_text())
    assert result.exit_code == 0, result.output
    sims = {s["node"]: s for i in json.loads(result.output)["items"] for s in i.get("simulations", [])}
    assert sims[PDB_NODE]["blockingPods"][0]["name"] == "kube-system/ebs-csi-controller-5c8b9-abcde"
    assert sims[ANNOTATED_NODE]["blockingPods"][0]["name"] == f"default/{ANNOTATED_POD}"
    assert sims[IDLE_NODE]["consolidatable"] is True and sims[IDLE_NODE]["pods"][0]["outcome"].startswith("would move")


def test_the_consolidation_steady_state_keeps_the_auto_time_limit(snapshot: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """explain --manifests ran the steady state with no limit: a large snapshot could run unbounded, where
    `consolidate` on the same snapshot keeps its auto limit. A cut steady state is said in the verdict."""
    from karpplan.cli import explain_consolidation
    from karpplan.consolidate.run import ConsolidateOptions, read, time_limit_of

    limits: list[float | None] = []
    real = explain_consolidation.steady_state

    def cut(state: Any, spot_to_spot: bool = False, **kwargs: Any) -> Any:
        limits.append(kwargs.get("time_limit"))
        return real(state, spot_to_spot, max_passes=0)  # stopped before its first pass: not complete

    monkeypatch.setattr(explain_consolidation, "steady_state", cut)
    found = _simulated(GET_EVENTS, snapshot)
    _, state = read(ConsolidateOptions(paths=(str(snapshot),), region="eu-central-1"))
    assert limits == [time_limit_of(ConsolidateOptions(), state)] and limits[0] is not None
    assert found[PDB_NODE]["reason"].endswith(
        f"(the auto time limit of {limits[0]:g}s ran out after 0 consolidation command(s), before the steady state: "
        "Karpenter would go on)")
