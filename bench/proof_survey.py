"""The proof survey (issue 29): plan every plan scenario case with the optimal engine; how many are proven, how fast.

    python bench/proof_survey.py [--cases DIR] [--case SUBSTR] [--no-quickstart] [--no-real] [--json FILE]
                                 [--karpplan CMD]

Every plan case of `../shared/cases` (each suite folder but those with runners of their own: explain*, lint*,
consolidate*, diff*; a case is a folder holding `expect.yaml`) is run as FORMAT.md runs it: `karpplan plan
<case>/manifests.yaml [--catalog <case>/catalog.yaml] [--region R] <expect.yaml args> -o json`, here with
`--engine optimal` (a case's own `--engine` is replaced), in a fresh process, with the CLI's default (`auto`)
time limit unless `--time-limit` is given. The README's quickstart (`fixtures/quickstart`) is surveyed too.

Real input is surveyed as well (by default; `--no-real` leaves it out): every folder of `fixtures/real-survey/`
(public manifests as their authors wrote them: aws-samples/karpenter-blueprints, aws/karpenter-provider-aws
examples, eksctl examples; each folder's SOURCES names repository, path and commit) and every manifest file of
`fixtures/real/`, each planned as a user would, `karpplan plan <folder or file> --engine optimal -o json`. Those
that end without a Plan document (input karpplan refuses, exit 2) are listed, not counted against the targets;
the targets count plans of up to 100 pending pods only.
Only the Plan document's public fields are read (`summary.status`, `gap`, `hourlyCost`, `lowerBound`,
`solveSeconds`, `timeLimit`, `gapCause`), so the survey keeps working while the engines change.

Reported: how many plans are proven optimal (`summary.status == "optimal"`), the status, gap and wall of each
one that is not, and wall-time quantiles (median, p90, max) of all of them: `wall s` is the whole process (what
a user waits for, start-up included), `plan s` the plan's own `solveSeconds`.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CASES = REPO.parent / "shared" / "cases"
QUICKSTART = REPO / "fixtures" / "quickstart"
QUICKSTART_NAME = "quickstart"
REAL_ROOTS = (REPO / "fixtures" / "real-survey", REPO / "fixtures" / "real")  # folders of cases, files of cases
OTHER_RUNNERS = ("explain", "lint", "consolidate", "diff", "bench")  # suite folders check.py does not plan
PROVEN = "optimal"
SMALL_PLAN_PODS = 100  # issue 29: every plan of up to 100 pending pods proven optimal
QUICKSTART_WALL = 2.0  # issue 29: the quickstart proven in under 2 s on this machine's 2 cores
DEFAULT_TIMEOUT = 600.0


@dataclass(frozen=True)
class SurveyCase:
    name: str  # suite/case, or "quickstart"
    arguments: tuple[str, ...]  # what follows `karpplan`


@dataclass
class SurveyResult:
    case: str
    ok: bool  # a Plan document came back
    error: str = ""
    exit_code: int | None = None
    pods: int | None = None
    scheduled: int | None = None
    status: str = ""
    gap: float | None = None
    cost: float | None = None
    lower_bound: float | None = None
    gap_cause: str | None = None
    time_limit: float | None = None
    wall_s: float = 0.0  # the whole `karpplan plan` process
    plan_s: float | None = None  # summary.solveSeconds

    @property
    def proven(self) -> bool:
        return self.ok and self.status == PROVEN


# ------------------------------------------------------------------------------------------ cases
def plan_suites(root: Path) -> list[Path]:
    """The suite folders of `root` that hold plan cases (check.py's rule: not those with runners of their own)."""
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(OTHER_RUNNERS))


def _without_engine(args: Sequence[str]) -> list[str]:
    """A case's extra arguments without its `--engine` (the survey plans with the optimal engine)."""
    out: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg == "--engine":
            skip = True
            continue
        if arg.startswith("--engine="):
            continue
        out.append(arg)
    return out


def case_arguments(case: Path, time_limit: float | None = None) -> tuple[str, ...]:
    """`plan` arguments for one case folder, as FORMAT.md runs it, with the optimal engine and JSON output."""
    expect = yaml.safe_load((case / "expect.yaml").read_text()) or {}
    args = ["plan", str(case / "manifests.yaml")]
    if (case / "catalog.yaml").exists():
        args += ["--catalog", str(case / "catalog.yaml")]
    if expect.get("region"):
        args += ["--region", str(expect["region"])]
    args += _without_engine([str(a) for a in expect.get("args") or []])
    args += ["--engine", "optimal"]
    if time_limit is not None:
        args += ["--time-limit", f"{time_limit:g}"]
    return (*args, "-o", "json")


def discover(root: Path, *, quickstart: Path | None = QUICKSTART, only: str | None = None,
             time_limit: float | None = None) -> list[SurveyCase]:
    """Every plan case under `root` (suite/case order), then the quickstart; `only` keeps names containing it."""
    cases: list[SurveyCase] = []
    for suite in plan_suites(root):
        for case in sorted(suite.iterdir()):
            if case.is_dir() and (case / "expect.yaml").exists() and (case / "manifests.yaml").exists():
                cases.append(SurveyCase(f"{suite.name}/{case.name}", case_arguments(case, time_limit)))
    if quickstart is not None and quickstart.exists():
        args = ["plan", str(quickstart), "--engine", "optimal"]
        if time_limit is not None:
            args += ["--time-limit", f"{time_limit:g}"]
        cases.append(SurveyCase(QUICKSTART_NAME, (*args, "-o", "json")))
    return [c for c in cases if not only or only in c.name]


def discover_real(roots: Sequence[Path] = REAL_ROOTS, *, only: str | None = None,
                  time_limit: float | None = None) -> list[SurveyCase]:
    """Every real-input case: each folder of a root (a whole input) and each manifest file directly in it."""
    cases: list[SurveyCase] = []
    for root in roots:
        if not root.is_dir():
            continue
        for entry in sorted(root.iterdir()):
            if not (entry.is_dir() or entry.suffix in (".yaml", ".yml", ".json")):
                continue
            args = ["plan", str(entry), "--engine", "optimal"]
            if time_limit is not None:
                args += ["--time-limit", f"{time_limit:g}"]
            cases.append(SurveyCase(f"{root.name}/{entry.name}", (*args, "-o", "json")))
    return [c for c in cases if not only or only in c.name]


# ------------------------------------------------------------------------------------------ running
def default_karpplan() -> list[str]:
    """This interpreter's karpplan (the bench's own checkout when run from its venv)."""
    return [sys.executable, "-m", "karpplan"]


def read_plan(case: str, exit_code: int, stdout: str, stderr: str, wall_s: float) -> SurveyResult:
    """A survey row from one `karpplan plan -o json` run: its public summary fields, or why there is none."""
    try:
        plan = json.loads(stdout) if stdout.strip() else None
    except json.JSONDecodeError:
        plan = None
    if not isinstance(plan, dict) or plan.get("kind") != "Plan":
        why = (stderr.strip().splitlines() or ["no output"])[-1][:200]
        return SurveyResult(case, False, f"exit {exit_code}: {why}", exit_code=exit_code, wall_s=wall_s)
    s = plan.get("summary") or {}

    def number(key: str) -> float | None:
        value = s.get(key)
        return float(value) if isinstance(value, int | float) else None

    pods = s.get("pods")
    scheduled = s.get("scheduled")
    return SurveyResult(
        case, True, exit_code=exit_code, pods=pods if isinstance(pods, int) else None,
        scheduled=scheduled if isinstance(scheduled, int) else None, status=str(s.get("status") or ""),
        gap=number("gap"), cost=number("hourlyCost"), lower_bound=number("lowerBound"),
        gap_cause=s.get("gapCause") if isinstance(s.get("gapCause"), str) else None,
        time_limit=number("timeLimit"), wall_s=wall_s, plan_s=number("solveSeconds"))


def run_case(case: SurveyCase, karpplan: Sequence[str], timeout: float = DEFAULT_TIMEOUT) -> SurveyResult:
    started = time.monotonic()
    try:
        done = subprocess.run([*karpplan, *case.arguments], capture_output=True, text=True, timeout=timeout,
                              cwd=REPO)
    except subprocess.TimeoutExpired:
        return SurveyResult(case.name, False, f"timeout after {timeout:.0f} s", wall_s=time.monotonic() - started)
    return read_plan(case.name, done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def run_survey(cases: Sequence[SurveyCase], karpplan: Sequence[str], timeout: float = DEFAULT_TIMEOUT,
               *, progress: bool = True) -> list[SurveyResult]:
    results: list[SurveyResult] = []
    for i, case in enumerate(cases, 1):
        if progress:
            print(f"[survey {i}/{len(cases)}] {case.name} ...", file=sys.stderr, flush=True)
        result = run_case(case, karpplan, timeout)
        if progress:
            said = (f"{result.status}, gap {_pct(result.gap)}, wall {result.wall_s:.2f} s" if result.ok
                    else result.error)
            print(f"    {said}", file=sys.stderr, flush=True)
        results.append(result)
    return results


# ------------------------------------------------------------------------------------------ figures
def quantile(values: Sequence[float], q: float) -> float | None:
    """The nearest-rank q-quantile (the smallest value with at least q of them at or below it); None if empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[rank - 1]


def quantiles(values: Sequence[float]) -> dict[str, float | None]:
    return {"median": statistics.median(values) if values else None, "p90": quantile(values, 0.9),
            "max": max(values) if values else None}


def summary(results: Sequence[SurveyResult]) -> dict[str, Any]:
    """The survey's figures as JSON-ready data."""
    walls = [r.wall_s for r in results if r.ok]
    plans = [r.plan_s for r in results if r.ok and r.plan_s is not None]
    return {
        "cases": len(results),
        "planned": sum(1 for r in results if r.ok),
        "proven": sum(1 for r in results if r.proven),
        "wallSeconds": quantiles(walls),
        "planSeconds": quantiles(plans),
        "notProven": [r.case for r in results if not r.proven],
        "results": [{**asdict(r), "proven": r.proven} for r in results],
    }


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.2%}"


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _suite_counts(results: Sequence[SurveyResult]) -> str:
    counts: dict[str, list[int]] = {}
    for r in results:
        suite = r.case.split("/", 1)[0] if "/" in r.case else r.case
        proven_total = counts.setdefault(suite, [0, 0])
        proven_total[0] += r.proven
        proven_total[1] += 1
    return ", ".join(f"{suite} {p}/{n}" for suite, (p, n) in counts.items())


def markdown(results: Sequence[SurveyResult], root: Path, command: str = "python bench/proof_survey.py") -> str:
    """The survey's section of bench/results.md."""
    figures = summary(results)
    wall, plan = figures["wallSeconds"], figures["planSeconds"]
    lines = [
        "## Proof survey (issue 29): every plan scenario case and real input, optimal engine",
        "",
        f"`{command}`: every plan case of `{root}` run as its FORMAT.md says (`karpplan plan ... --engine optimal "
        "-o json`, the case's catalog, region and arguments, the default `auto` time limit)"
        + (", and the README quickstart (`fixtures/quickstart`)" if any(r.case == QUICKSTART_NAME for r in results)
           else "")
        + ", each in a fresh process. `wall s` is the whole process (start-up included), `plan s` the plan's "
        "`solveSeconds`.",
        "",
        f"**{figures['proven']} of {figures['cases']} proven optimal** ({_suite_counts(results)}); "
        f"{figures['cases'] - figures['planned']} without a plan.",
        "",
        "| seconds | median | p90 | max |",
        "|---|---:|---:|---:|",
        f"| wall s | {_seconds(wall['median'])} | {_seconds(wall['p90'])} | {_seconds(wall['max'])} |",
        f"| plan s | {_seconds(plan['median'])} | {_seconds(plan['p90'])} | {_seconds(plan['max'])} |",
        "",
    ]
    unproven = [r for r in results if not r.proven]
    if unproven:
        lines += ["Not proven:", "",
                  "| case | pods | status | gap | cost $/h | lower bound | wall s | plan s | time limit | gap cause |",
                  "|---|---:|---|---:|---:|---:|---:|---:|---:|---|"]
        for r in unproven:
            if not r.ok:
                lines.append(f"| {r.case} | — | {r.error} | — | — | — | {r.wall_s:.2f} | — | — | — |")
                continue
            lines.append(
                f"| {r.case} | {r.pods if r.pods is not None else '—'} | {r.status} | {_pct(r.gap)} | "
                f"{'—' if r.cost is None else f'{r.cost:,.4f}'} | "
                f"{'—' if r.lower_bound is None else f'{r.lower_bound:,.4f}'} | {r.wall_s:.2f} | "
                f"{_seconds(r.plan_s)} | {'—' if r.time_limit is None else f'{r.time_limit:g}'} | "
                f"{(r.gap_cause or '—').replace('|', '/')} |")
        lines.append("")
    real = [r for r in results if is_real(r)]
    if real:
        lines += ["Real inputs (`fixtures/real-survey/`, `fixtures/real/`), every one:", "",
                  "| case | pods | status | gap | cost $/h | wall s | plan s |", "|---|---:|---|---:|---:|---:|---:|"]
        for r in real:
            if not r.ok:
                lines.append(f"| {r.case} | — | {r.error.replace('|', '/')} | — | — | {r.wall_s:.2f} | — |")
                continue
            lines.append(f"| {r.case} | {r.pods if r.pods is not None else '—'} | {r.status} | {_pct(r.gap)} | "
                         f"{'—' if r.cost is None else f'{r.cost:,.4f}'} | {r.wall_s:.2f} | {_seconds(r.plan_s)} |")
        lines.append("")
    slowest = sorted((r for r in results if r.ok), key=lambda r: r.wall_s, reverse=True)[:5]
    if slowest:
        lines += ["Slowest: " + "; ".join(f"{r.case} {r.wall_s:.2f} s ({r.status})" for r in slowest) + ".", ""]
    return "\n".join(lines)


def is_real(result: SurveyResult) -> bool:
    """Whether the row is a real-input case (`discover_real`)."""
    return result.case.split("/", 1)[0] in {root.name for root in REAL_ROOTS}


def checks(results: Sequence[SurveyResult]) -> list[tuple[str, list[bool], str]]:
    """Issue 29's survey targets: (target, a verdict per plan it covers, detail). A real-input case without a
    Plan document (input karpplan refuses) is no plan, so no target covers it."""
    small = [r for r in results if (r.ok or not is_real(r)) and (r.pods is None or r.pods <= SMALL_PLAN_PODS)]
    missed = [r for r in small if not r.proven]
    detail = (f"{sum(r.proven for r in small)} of {len(small)} proven"
              + (": not " + ", ".join(f"{r.case} ({r.status + ', gap ' + _pct(r.gap) if r.ok else r.error})"
                                      for r in missed) if missed else ""))
    out = [(f"every surveyed plan of up to {SMALL_PLAN_PODS} pods proven optimal", [r.proven for r in small], detail)]
    quick = [r for r in results if r.case == QUICKSTART_NAME]
    out.append((f"quickstart proven optimal in < {QUICKSTART_WALL:g} s (whole process)",
                [r.proven and r.wall_s < QUICKSTART_WALL for r in quick],
                "; ".join(f"{r.status or r.error}, wall {r.wall_s:.2f} s, plan {_seconds(r.plan_s)} s"
                          for r in quick)))
    return out


# ------------------------------------------------------------------------------------------ main
def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", type=Path, default=DEFAULT_CASES, help="the scenario cases (default ../shared/cases)")
    p.add_argument("--case", help="only cases whose suite/name contains this")
    p.add_argument("--no-quickstart", dest="quickstart", action="store_false", help="leave the quickstart out")
    p.add_argument("--no-real", dest="real", action="store_false",
                   help="leave out the real inputs (fixtures/real-survey/*/, fixtures/real/*.yaml)")
    p.add_argument("--time-limit", type=float, help="seconds per plan (default: the CLI's auto limit)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds before a plan is cut off")
    p.add_argument("--karpplan", help="the karpplan command (default: this interpreter's -m karpplan)")
    p.add_argument("--json", type=Path, help="also write the figures as JSON")
    return p.parse_args(argv)


def survey_from_args(args: argparse.Namespace) -> tuple[list[SurveyResult], Path]:
    cases = discover(args.cases, quickstart=QUICKSTART if args.quickstart else None, only=args.case,
                     time_limit=args.time_limit)
    if args.real:
        cases += discover_real(only=args.case, time_limit=args.time_limit)
    karpplan = shlex.split(args.karpplan) if args.karpplan else default_karpplan()
    return run_survey(cases, karpplan, args.timeout), args.cases


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    results, root = survey_from_args(args)
    print(markdown(results, root, "python bench/proof_survey.py " + " ".join(sys.argv[1:] if argv is None else argv)))
    for target, verdicts, detail in checks(results):
        verdict = "NOT RUN" if not verdicts else "PASS" if all(verdicts) else "MISS"
        print(f"- **{verdict}** — {target}: {detail}")
    if args.json:
        args.json.write_text(json.dumps(summary(results), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
