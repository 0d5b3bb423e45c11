"""Benchmark of `karpplan consolidate`: a realistic cluster snapshot consolidated to its steady state.

    python bench/consolidate_bench.py [--pods 33000] [--keep 0.6] [--seed 42] [--out DIR] [--optimal S]

The snapshot is made the way a real cluster gets into one: the `realistic` family's Deployments
(bench/workloads.py: web front ends, APIs, workers, caches, analytics, payments; four NodePools; a log-agent
DaemonSet) are provisioned by karpplan's Karpenter simulation (the Fargate namespace joins EC2), then every
Deployment scales down to `--keep` of its replicas (the pods removed drawn at random), which leaves the
nodes part-empty. Written as `kubectl get nodes,pods,daemonsets -A -o yaml` prints it, with the NodePools
(default disruption: WhenEmptyOrUnderutilized, 10% budget) and the EC2NodeClass.

Reports the snapshot's size, the wall seconds and peak RSS of reading it, of the steady state (every
consolidation pass: its CPU seconds too, the figure to compare on a shared machine) and of the optimal
re-pack (`--optimal` seconds), in one subprocess-free run.
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import yaml  # noqa: E402

from bench.workloads import FARGATE_NAMESPACE, realistic_inputs  # noqa: E402


def _provision(manifests: list[dict[str, Any]], directory: Path) -> Any:
    """The Karpenter simulation's plan of the manifests (every pod on EC2)."""
    from karpplan.planner import PlanOptions, make_plan, read_catalog, read_inventory

    path = directory / "deployments.yaml"
    path.write_text(yaml.safe_dump_all(manifests, sort_keys=False))
    options = PlanOptions(paths=(str(path),), engine="karpenter", time_limit=600)
    inventory = read_inventory(options)
    return make_plan(inventory, read_catalog(options, inventory), options)


def snapshot(pods: int, keep: float, seed: int, directory: Path) -> tuple[Path, int, int]:
    """Write the snapshot; returns its path, node count and pod count."""
    inputs = realistic_inputs(pods, seed)
    manifests = [m for m in inputs.manifests if m.get("kind") != "ClusterConfig"]
    plan = _provision(manifests, directory)
    rng = random.Random(seed)
    templates = {(m["metadata"]["namespace"], m["metadata"]["name"]): m for m in manifests
                 if m.get("kind") == "Deployment"}
    pools = [m for m in manifests if m.get("kind") == "NodePool"]
    for pool in pools:
        pool["spec"]["disruption"] = {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "30s",
                                      "budgets": [{"nodes": "10%"}]}
    daemonset = next(m for m in manifests if m.get("kind") == "DaemonSet")
    node_of = {key: n.name for n in plan.nodes for key in n.pods}
    items: list[dict[str, Any]] = []
    for n in plan.nodes:
        alloc = n.allocatable.formatted()
        items.append({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": n.name, "labels": {**n.labels, "karpenter.sh/initialized": "true"}},
                      "spec": {"taints": [dict(t) for t in n.taints]} if n.taints else {},
                      "status": {"allocatable": alloc, "capacity": alloc}})
        ds_spec = daemonset["spec"]["template"]["spec"]
        items.append({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": f"log-agent-{len(items)}", "namespace": "observability",
                                   "labels": {"app": "log-agent"},
                                   "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet",
                                                        "name": "log-agent", "uid": "ds", "controller": True}]},
                      "spec": {**ds_spec, "nodeName": n.name}, "status": {"phase": "Running"}})
    kept = 0
    for p in plan.pods:
        if p.namespace == FARGATE_NAMESPACE or p.key not in node_of or rng.random() > keep:
            continue
        workload = p.workload.split("/", 1)[1]
        template = templates[(p.namespace, workload)]["spec"]["template"]
        items.append({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": p.name, "namespace": p.namespace, "labels": dict(p.labels),
                                   "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                                        "name": f"{workload}-5d8f", "uid": workload,
                                                        "controller": True}]},
                      "spec": {**template["spec"], "nodeName": node_of[p.key]}, "status": {"phase": "Running"}})
        kept += 1
    others = [m for m in manifests if m.get("kind") in ("NodePool", "EC2NodeClass", "DaemonSet", "Namespace")]
    path = directory / "snapshot.yaml"
    path.write_text(yaml.safe_dump_all([{"apiVersion": "v1", "kind": "List", "items": items}, *others],
                                       sort_keys=False))
    return path, len(plan.nodes), kept


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pods", type=int, default=33000, help="replicas provisioned before the scale-down")
    ap.add_argument("--keep", type=float, default=0.6, help="share of the replicas kept after the scale-down")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--optimal", type=float, default=20.0, help="time limit of the optimal re-pack (s); 0: skip it")
    ap.add_argument("--limit", type=float, default=600.0, help="stop the steady state after this many seconds")
    ap.add_argument("--out", type=Path, default=None, help="keep the snapshot in this directory")
    a = ap.parse_args()
    from karpplan.consolidate.loop import steady_state
    from karpplan.consolidate.optimal import optimal_repack
    from karpplan.consolidate.run import ConsolidateOptions, read
    from karpplan.consolidate.state import ClusterState

    with tempfile.TemporaryDirectory() as tmp:
        directory = a.out or Path(tmp)
        directory.mkdir(parents=True, exist_ok=True)
        start = time.monotonic()
        path, nodes, pods = snapshot(a.pods, a.keep, a.seed, directory)
        print(f"snapshot: {nodes} nodes, {pods} pods (+{nodes} DaemonSet pods), generated in "
              f"{time.monotonic() - start:.1f}s, {path.stat().st_size / 2**20:.1f} MiB", flush=True)
        start = time.monotonic()
        snap, state = read(ConsolidateOptions(paths=(str(path),)))
        print(f"read: {time.monotonic() - start:.1f}s", flush=True)
        current = state.cost
        initial = ClusterState.of(snap, state.catalog)
        start, cpu = time.monotonic(), time.process_time()
        result = steady_state(state, time_limit=a.limit)
        steady_s, steady_cpu = time.monotonic() - start, time.process_time() - cpu
        karpenter = current - sum(x.savings for x in result.actions)
        methods: dict[str, int] = {}
        for x in result.actions:
            methods[x.method] = methods.get(x.method, 0) + 1
        print(f"steady state{'' if result.complete else ' NOT REACHED (time limit)'}: {steady_s:.1f}s wall, "
              f"{steady_cpu:.1f}s CPU, "
              f"{result.passes} passes, {len(result.actions)} actions {methods}, {len(state.nodes)} nodes left; "
              f"$/h now {current:.4f}, steady state {karpenter:.4f}; peak RSS {_peak_mib():.0f} MiB", flush=True)
        if a.optimal > 0:
            start = time.monotonic()
            repack = optimal_repack(initial, karpenter, a.optimal)
            print(f"optimal re-pack: {repack.cost:.4f} $/h (bound {repack.lower_bound:.4f}, {repack.status}, "
                  f"{time.monotonic() - start:.1f}s), opt/steady {repack.cost / karpenter if karpenter else 1:.3f}",
                  flush=True)
    print(f"peak RSS: {_peak_mib():.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
