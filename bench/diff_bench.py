"""Benchmark row for `karpplan diff`: two 5,000-pod trees with the Karpenter engine, against one
`karpplan plan --engine karpenter` of one side (issue 28: the diff may take at most 3x the plan).

BASE is the `realistic` family (bench/workloads.py: several NodePools, a DaemonSet, a Fargate profile,
Deployments of real shapes); HEAD is the same tree with every tenth Deployment at twice its replicas and
one Deployment removed, the kind of change a pull request makes. Both commands run as a user runs them
(subprocesses of the installed CLI, JSON to a pipe), each timed on the wall clock; the best of `--repeat`.

    python bench/diff_bench.py                 # 5,000 pods, one run each
    python bench/diff_bench.py --pods 1000 --repeat 3
"""

from __future__ import annotations

import argparse
import copy
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.workloads import REALISTIC_REGION, realistic_inputs, to_yaml  # noqa: E402

MAX_RATIO = 3.0


def _head(manifests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every tenth Deployment doubled, the last one removed."""
    out = copy.deepcopy(manifests)
    deployments = [m for m in out if m.get("kind") == "Deployment"]
    for d in deployments[::10]:
        d["spec"]["replicas"] = 2 * int(d["spec"].get("replicas", 1))
    out.remove(deployments[-1])
    return out


def _timed(command: list[str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    return time.perf_counter() - start, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--karpplan", default=shutil.which("karpplan") or "karpplan")
    args = parser.parse_args()
    inputs = realistic_inputs(args.pods)
    with tempfile.TemporaryDirectory(prefix="karpplan-diff-bench-") as tmp:
        base, head = Path(tmp) / "base", Path(tmp) / "head"
        base.mkdir()
        head.mkdir()
        (base / "all.yaml").write_text(to_yaml(inputs.manifests))
        (head / "all.yaml").write_text(to_yaml(_head(list(inputs.manifests))))
        region = ["--region", REALISTIC_REGION]
        plan_cmd = [args.karpplan, "plan", str(base), "--engine", "karpenter", *region, "-o", "json"]
        diff_cmd = [args.karpplan, "diff", str(base), str(head), "--engine", "karpenter", *region, "-o", "json"]
        plan_s, diff_s = float("inf"), float("inf")
        for _ in range(args.repeat):
            seconds, plan = _timed(plan_cmd)
            plan_s = min(plan_s, seconds)
            seconds, diff = _timed(diff_cmd)
            diff_s = min(diff_s, seconds)
        if plan.returncode not in (0, 1) or diff.returncode not in (0, 1):
            print(f"failed: plan exit {plan.returncode}, diff exit {diff.returncode}: {diff.stderr[-300:]}")
            return 2
        delta = json.loads(diff.stdout)["delta"]
    ratio = diff_s / plan_s
    verdict = "ok" if ratio <= MAX_RATIO else f"over {MAX_RATIO:g}x"
    print("| family | pods | plan --engine karpenter (s) | diff, karpenter (s) | ratio | delta $/month |")
    print("|---|---:|---:|---:|---:|---:|")
    print(f"| realistic | {args.pods:,} | {plan_s:.2f} | {diff_s:.2f} | {ratio:.2f}x ({verdict}) | "
          f"{delta['monthlyCost']:+.2f} |")
    return 0 if ratio <= MAX_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
