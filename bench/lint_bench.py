#!/usr/bin/env python3
"""Benchmark `karpplan lint`: Deployments spread over files with 20 NodePools (issue 13).

    python bench/lint_bench.py                 # 100, 1,000 (the 100-file target), 10,000 objects, one process
    python bench/lint_bench.py 1000            # one size (100 files)
    python bench/lint_bench.py 1000 --profile /tmp/lint.prof   # a cProfile file of the last size's run
Prints one Markdown table row per size (wall and CPU seconds of `lint()`, the process's peak resident
memory so far, the load average when it ends); bench/results.md holds the recorded figures. The sizes
run one after the other in the same process, as a CI job linting several trees would, so a row's peak
memory is the largest of its own and the rows before it (run one size for its own figure).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.workloads import many_deployment, many_deployment_pools, to_yaml  # noqa: E402
from karpplan.lint.run import LintOptions, lint  # noqa: E402


def write(root: Path, objects: int, files: int) -> None:
    """The `many-deployments` bench family's tree (bench/workloads.py): its NodePools in pools.yaml, its
    Deployments spread evenly over `files` files."""
    (root / "pools.yaml").write_text(to_yaml(many_deployment_pools()))
    per_file = max(objects // files, 1)
    for f in range(files):
        body = to_yaml([many_deployment(i) for i in range(f * per_file, (f + 1) * per_file)])
        (root / f"apps-{f:03d}.yaml").write_text(body)


def measure(objects: int, files: int, profile: str | None = None) -> tuple[float, float, int]:
    """Wall and CPU seconds of `lint()` over a fresh tree of `objects` Deployments, and its findings."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write(root, objects, files)
        profiler = cProfile.Profile() if profile else None
        start, cpu = time.perf_counter(), time.process_time()
        if profiler is not None:
            profiler.enable()
        report = lint(LintOptions(paths=(str(root),)))
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(profile)
        return time.perf_counter() - start, time.process_time() - cpu, len(report.findings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", nargs="*", type=int,
                        help="Deployments per row, in 100 files (default: 100 in 10 files, 1,000, 10,000)")
    parser.add_argument("--profile", metavar="FILE", help="write a cProfile file of the last row's lint()")
    args = parser.parse_args()
    sizes = [(n, 100) for n in args.sizes] or [(100, 10), (1_000, 100), (10_000, 100)]
    print("| Deployments | files | NodePools | seconds | CPU seconds | peak MB | load average | findings |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for i, (objects, files) in enumerate(sizes):
        last = i == len(sizes) - 1
        seconds, cpu, findings = measure(objects, files, args.profile if last else None)
        load = os.getloadavg()[0]
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux
        print(f"| {objects:,} | {files} | 20 | {seconds:.2f} | {cpu:.2f} | {peak:,.0f} | {load:.1f} | {findings} |",
              flush=True)


if __name__ == "__main__":
    main()
