"""Benchmark `karpplan explain` on a synthetic log of mixed dialects.

    python bench/explain_bench.py --size-mb 100 [--size-mb 1024] [--keep DIR]

The log mixes every dialect (v0.16 console, v0.32 JSON, v1.x JSON with a `kubectl logs --prefix`
prefix, v1.5+ events, pretty-printed v1 JSON, describe Events, default-scheduler FitErrors,
cluster-autoscaler) with ordinary INFO lines (about half of all lines), over 5,000 pod names.
Prints wall seconds, MB/s, CPU seconds (user + system of explain and its workers: what the run costs
whatever else holds the cores) and MB per CPU second (the rate that does not depend on who else holds the
cores of a shared machine; wall MB/s is at most that times the cores explain gets), the peak RSS of the largest explain process (main or worker, as getrusage
reports it) and the peak of the summed PSS of the explain process and its workers (sampled every 50 ms;
PSS splits the pages the forked workers share with the main process, so the sum is the real footprint).
`--keep DIR` keeps the generated logs (reused on the next run) and the last run's JSON output beside them.
"""

from __future__ import annotations

import argparse
import random
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

TEMPLATES = [
    '{{"level":"ERROR","time":"{t}","logger":"controller.provisioner","message":"Could not schedule pod, incompatible '
    'with nodepool \\"default\\", daemonset overhead={{\\"cpu\\":\\"675m\\",\\"memory\\":\\"390Mi\\",\\"pods\\":\\"6\\"}}, '
    'incompatible requirements, label \\"nodegroup\\" does not have known values","commit":"17d6c05","pod":"{ns}/{pod}"}}',
    '{t}\tERROR\tcontroller.provisioning\tCould not schedule pod, incompatible with provisioner "core", did not '
    'tolerate dedicated=core:NoExecute; incompatible with provisioner "tenant", no instance type satisfied resources '
    '{{"cpu":"7","memory":"8692Mi","pods":"1"}} and requirements node.kubernetes.io/instance-type In [m5d.2xlarge '
    'm5d.xlarge], kubernetes.io/arch In [amd64]\t{{"commit": "27a51c0", "pod": "{ns}/{pod}"}}',
    '[pod/karpenter-78748f59d4-hnx82/controller] {{"level":"ERROR","time":"{t}","logger":"controller","message":"could '
    'not schedule pod","Pod":{{"name":"{pod}","namespace":"{ns}"}},"error":"incompatible with nodepool \\"gpu\\", '
    'daemonset overhead={{\\"cpu\\":\\"605m\\"}}, did not tolerate nvidia.com/gpu=1:NoSchedule; incompatible with '
    'nodepool \\"app\\", daemonset overhead={{\\"cpu\\":\\"605m\\"}}, unsatisfiable topology constraint for topology '
    'spread, key=topology.kubernetes.io/zone (counts = a: 1, b: 0, podDomains = topology.kubernetes.io/zone Exists, '
    'nodeDomains = topology.kubernetes.io/zone In [a]"}}',
    "  Warning  FailedScheduling  16s   karpenter        Failed to schedule pod, did not tolerate taint "
    "(taint=CriticalAddonsOnly:NoSchedule); all available instance types exceed limits for nodepool (NodePool=np-b)",
    "  Warning  FailedScheduling  77s (x3 over 4m14s)  default-scheduler  0/8 nodes are available: 1 Insufficient "
    "memory, 2 node(s) had untolerated taint {{eks.amazonaws.com/compute-type: fargate}}, 5 node(s) didn't match Pod's "
    "node affinity/selector. preemption: 0/8 nodes are available: 8 Preemption is not helpful for scheduling..",
    'I0910 18:42:33.914842       1 event.go:281] Event(v1.ObjectReference{{Kind:"Pod", Namespace:"{ns}", '
    'Name:"{pod}", UID:"bb1"}}): type: \'Normal\' reason: \'NotTriggerScaleUp\' pod didn\'t trigger scale-up: 1 '
    "node(s) didn't match node selector",
    '{{\n  "level": "ERROR",\n  "time": "{t}",\n  "message": "could not schedule pod",\n  "Pod": {{"name": "{pod}", '
    '"namespace": "{ns}"}},\n  "error": "no instance type has enough resources, requirements=kubernetes.io/arch In '
    '[amd64], resources={{\\"cpu\\":\\"14\\",\\"pods\\":\\"1\\"}}"\n}}',
]
NOISE = [
    '{{"level":"INFO","time":"{t}","logger":"controller.provisioner","message":"found provisionable pod(s)",'
    '"commit":"17d6c05","pods":"{ns}/{pod}","duration":"12.3ms"}}',
    '{{"level":"INFO","time":"{t}","logger":"controller.disruption","message":"disrupting nodeclaim(s) via delete, '
    'terminating 1 nodes (1 pods) ip-10-0-1-2.ec2.internal/m5.large/spot","commit":"17d6c05"}}',
    "{t}\tDEBUG\tcontroller.aws.launchtemplate\tdiscovered launch template\t{{\"commit\": \"639756a\"}}",
]


def generate(path: Path, size: int, seed: int = 42) -> int:
    rng = random.Random(seed)
    pods = [(f"ns-{i % 40}", f"app-{i % 900}-{rng.randrange(16**10):010x}-{rng.randrange(36**5):05x}") for i in range(5000)]
    written = lines = 0
    with path.open("w") as f:
        buf: list[str] = []
        while written < size:
            ns, pod = pods[rng.randrange(len(pods))]
            t = f"2024-04-03T06:{rng.randrange(60):02d}:{rng.randrange(60):02d}.{rng.randrange(1000):03d}Z"
            tmpl = NOISE[rng.randrange(len(NOISE))] if rng.random() < 0.5 else TEMPLATES[rng.randrange(len(TEMPLATES))]
            text = tmpl.format(t=t, ns=ns, pod=pod) + "\n"
            buf.append(text)
            written += len(text)
            lines += text.count("\n")
            if len(buf) >= 10000:
                f.write("".join(buf))
                buf.clear()
        f.write("".join(buf))
    return lines


def _tree_pss_kb(pid: int) -> int:
    """Summed PSS of `pid` and its children (Linux /proc), 0 once gone."""
    total = 0
    pids = [pid]
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            pids += [int(c) for c in f.read().split()]
    except OSError:
        return 0
    for p in pids:
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            pass
    return total


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(path: Path, karpplan: str, out: Path) -> tuple[float, float, float, float]:
    """Wall seconds, CPU seconds (user + system, workers included), peak RSS MB of the largest process, peak
    summed PSS MB of the process tree."""
    cpu_before = _children_cpu()
    started = time.monotonic()
    with out.open("wb") as sink:
        proc = subprocess.Popen([karpplan, "explain", str(path), "-o", "json"], stdout=sink, stderr=subprocess.PIPE)
        peak = [0]

        def sample() -> None:
            while proc.poll() is None:
                peak[0] = max(peak[0], _tree_pss_kb(proc.pid))
                time.sleep(0.05)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, stderr = proc.communicate()
        sampler.join()
    wall = time.monotonic() - started
    cpu = _children_cpu() - cpu_before
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if proc.returncode != 0:
        raise SystemExit(f"explain failed ({proc.returncode}): {stderr.decode()[-500:]}")
    return wall, cpu, rss_mb, peak[0] / 1024


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, action="append")
    ap.add_argument("--karpplan", default=str(Path(sys.executable).with_name("karpplan")))
    ap.add_argument("--keep")
    a = ap.parse_args()
    import json

    directory = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="explain-bench-"))
    directory.mkdir(parents=True, exist_ok=True)
    print("| log size | lines | generate s | explain s | MB/s | CPU s | MB per CPU s | peak RSS MB | "
          "peak PSS MB (all processes) | items | explained |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for mb in a.size_mb or [100]:
        path = directory / f"mixed-{mb}mb.log"
        t0 = time.monotonic()
        if not (a.keep and path.exists()):
            generate(path, mb << 20)
        gen = time.monotonic() - t0
        with path.open("rb") as f:
            lines = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 24), b""))
        out = directory / f"mixed-{mb}mb.json"
        wall, cpu, rss, pss = run(path, a.karpplan, out)
        with out.open() as f:
            summary = json.load(f)["summary"]
        if not a.keep:
            out.unlink()
        print(f"| {mb} MB | {lines:,} | {gen:.1f} | {wall:.1f} | {mb / wall:.1f} | {cpu:.1f} | {mb / cpu:.1f} | "
              f"{rss:.0f} | {pss:.0f} | "
              f"{summary['items']:,} | {summary['explained']:,} |", flush=True)
        if not a.keep:
            path.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
