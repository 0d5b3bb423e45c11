"""The benchmark runner's own figures (bench/run.py, bench/proof_survey.py): the steady-state columns and
target, the large family, and the proof survey's cases, parsing and report. Small inputs only, no timing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import proof_survey as survey  # noqa: E402
from bench import run  # noqa: E402


# ------------------------------------------------------------------------------------------ helpers
def _row(engine: str, cost: float | None, *, workload: str = "realistic", pods: int = 1000, **fields: object
         ) -> run.RowResult:
    spec_fields = {k: fields.pop(k) for k in ("time_limit_auto", "large", "steady_state") if k in fields}
    spec = run.RowSpec("aws", workload, pods, engine, float(fields.pop("limit", 10.0)), **spec_fields)  # type: ignore[arg-type]
    return run.RowResult(spec, True, pods=pods, cost=cost, **fields)  # type: ignore[arg-type]


def _table(results: list[run.RowResult]) -> list[dict[str, str]]:
    return [dict(zip(run.HEADER, cells, strict=True)) for cells in run.table_rows(results)]


def _check(results: list[run.RowResult], target: str) -> run.TargetCheck:
    found = [c for c in run.check_targets(results) if target in c.target]
    assert len(found) == 1, [c.target for c in run.check_targets(results)]
    return found[0]


PLAN_SUMMARY = {
    "pods": 20, "scheduled": 20, "hourlyCost": 0.25, "lowerBound": 0.2, "gap": 0.2, "status": "feasible",
    "solveSeconds": 9.6, "timeLimit": 10.0, "gapCause": "the bound is weak for hostname anti-affinity",
    "phases": [{"name": "build", "seconds": 1.0}, {"name": "steady-state", "seconds": 0.75}],
    "karpenter": {"hourlyCost": 0.4, "steadyStateHourlyCost": 0.3, "steadyStateNodes": 3,
                  "steadyStateNote": None},
}


# ------------------------------------------------------------------------------------------ steady state
def test_steady_figures_read_the_public_summary() -> None:
    figures = run.steady_figures(PLAN_SUMMARY)
    assert figures == {"steady_cost": 0.3, "steady_nodes": 3, "steady_note": None, "steady_s": 0.75}


def test_a_steady_state_not_computed_keeps_its_reason_and_no_cost() -> None:
    note = "not computed: the time limit ran out after 3 consolidation commands"
    figures = run.steady_figures({"phases": [{"name": "steady-state", "seconds": 8.1}],
                                  "karpenter": {"steadyStateHourlyCost": None, "steadyStateNote": note}})
    assert figures["steady_cost"] is None and figures["steady_note"] == note and figures["steady_s"] == 8.1
    assert run.steady_figures({"phases": [{"name": "build", "seconds": 1.0}], "karpenter": None})["steady_s"] is None


def test_karpenter_row_shows_its_steady_state_and_optimal_row_the_ratio_to_it() -> None:
    karpenter = _row("karpenter", 20.0, steady_cost=16.0, steady_s=4.0, wall_s=5.0)
    optimal = _row("optimal", 15.0, steady_cost=16.5, steady_s=1.0, wall_s=10.0)
    table = _table([karpenter, optimal])
    assert table[0]["steady $/h"] == "16.0000" and table[0]["steady s"] == "4.00" and table[0]["opt/steady"] == "—"
    assert table[1]["opt/karp"] == "0.7500"
    assert table[1]["opt/steady"] == "0.9375"  # against the Karpenter row's steady state, not its own
    assert table[1]["steady $/h"] == "—"


def test_optimal_row_alone_is_compared_with_the_steady_state_its_own_plan_quotes() -> None:
    optimal = _row("optimal", 15.0, steady_cost=12.0, wall_s=10.0)
    assert _table([optimal])[0]["opt/steady"] == "1.2500"


def test_pods_per_second_leave_the_steady_state_out() -> None:
    row = _row("karpenter", 20.0, pods=10000, wall_s=10.0, steady_s=5.0)
    assert row.pods_per_s == pytest.approx(2000.0)
    assert _table([row])[0]["pods/s"] == "2,000"


def test_a_karpenter_row_whose_steady_state_ran_out_says_so() -> None:
    row = _row("karpenter", 20.0, steady_note="not computed: the time limit ran out", steady_s=8.0, wall_s=9.0)
    assert _table([row])[0]["steady $/h"] == "not computed"


def test_optimal_dearer_than_the_steady_state_misses_the_target() -> None:
    rows = [_row("karpenter", 20.0, steady_cost=16.0), _row("optimal", 17.0),
            _row("karpenter", 10.0, steady_cost=9.0, pods=100), _row("optimal", 8.0, pods=100)]
    check = _check(rows, "steady-state")
    assert check.verdict == "MISS"
    assert "realistic 1,000: 17.0000 vs 16.0000 (dearer)" in check.detail
    assert "realistic 100: 8.0000 vs 9.0000" in check.detail
    assert _check(rows[2:], "steady-state").verdict == "PASS"
    # ... while the launch comparison passes: the steady state is the stricter baseline.
    assert _check(rows, "karpenter cost on every row").verdict == "PASS"


def test_steady_state_target_not_run_when_no_steady_state_was_computed() -> None:
    note = "not computed: the time limit ran out after 3 consolidation commands"
    check = _check([_row("karpenter", 20.0, steady_note=note), _row("optimal", 17.0)], "steady-state")
    assert check.verdict == "NOT RUN"
    assert "not measured (not computed: the time limit ran out" in check.detail


# ------------------------------------------------------------------------------------------ rows and families
def _rows(*argv: str) -> list[run.RowSpec]:
    return run.plan_rows(run.parse_args(list(argv)))


def test_large_family_is_opt_in_and_plans_50000_realistic_pods_on_both_engines() -> None:
    assert not [r for r in _rows("--quick") if r.large]
    large = _rows("--families", "large")
    assert [(r.workload, r.pods, r.engine, r.time_limit_auto, r.large) for r in large] == [
        ("realistic", 50000, "karpenter", True, True), ("realistic", 50000, "optimal", True, True)]
    fixed = _rows("--families", "large", "--time-limit-huge", "120", "--large-pods", "300")
    assert {(r.pods, r.time_limit, r.time_limit_auto) for r in fixed} == {(300, 120.0, False)}


def test_survey_is_a_default_family_and_large_is_not() -> None:
    args = run.parse_args([])
    assert run.SURVEY in args.families and run.LARGE not in args.families


def test_steady_state_is_asked_on_compared_rows_not_on_throughput_rows() -> None:
    rows = _rows("--sizes", "100", "--catalogs", "aws", "--families", "diverse,generic")
    assert {(r.workload, r.steady_state) for r in rows} == {("diverse", True), ("generic", False)}
    assert not any(r.steady_state for r in _rows("--sizes", "100", "--no-steady-state"))


def test_karpenter_time_limit_applies_to_the_karpenter_rows_only() -> None:
    rows = _rows("--sizes", "100", "--catalogs", "aws", "--families", "diverse", "--karpenter-time-limit", "60")
    assert {(r.engine, r.time_limit) for r in rows} == {("karpenter", 60.0), ("optimal", 10.0)}


def test_an_auto_limit_is_judged_and_shown_as_resolved() -> None:
    row = _row("optimal", 1.0, time_limit_auto=True, limit=0.0, time_limit=120.0, wall_s=125.0)
    assert row.within_limit is True  # 125 <= 1.05 x 120
    assert _table([row])[0]["engine"] == "optimal (auto 120 s)"
    late = _row("optimal", 1.0, time_limit_auto=True, limit=0.0, time_limit=120.0, wall_s=130.0)
    assert _table([late])[0]["limit"] == "MISS (1.08x)"
    karpenter = _row("karpenter", 1.0, time_limit_auto=True, limit=0.0, time_limit=120.0, wall_s=30.0)
    assert _table([karpenter])[0]["engine"] == "karpenter (auto 120 s)"
    assert _table([_row("karpenter", 1.0)])[0]["engine"] == "karpenter"


def test_large_targets_throughput_gap_and_memory() -> None:
    karpenter = _row("karpenter", 2000.0, pods=50000, large=True, wall_s=60.0, steady_s=35.0, peak_rss_mb=900.0)
    optimal = _row("optimal", 1400.0, pods=50000, large=True, wall_s=118.0, time_limit=120.0, lower_bound=1372.0,
                   gap=0.02, peak_rss_mb=3500.0)
    checks = {c.target: c for c in run.check_targets([karpenter, optimal])}
    throughput = next(c for t, c in checks.items() if "pods/s on the large" in t)
    assert throughput.verdict == "PASS" and "2,000 pods/s" in throughput.detail
    gap = next(c for t, c in checks.items() if "large realistic row within its time limit" in t)
    assert gap.verdict == "PASS" and "gap 2.00%" in gap.detail
    memory = next(c for t, c in checks.items() if "peak memory" in t)
    assert memory.verdict == "MISS" and "optimal: 3,500 MB" in memory.detail
    cut = _row("karpenter", 2000.0, pods=50000, large=True, wall_s=20.0, not_simulated=33833)
    cut_check = next(c for c in run.check_targets([cut]) if "pods/s on the large" in c.target)
    assert cut_check.verdict == "MISS" and "33,833 pods not simulated" in cut_check.detail


def test_large_targets_are_absent_when_the_family_did_not_run() -> None:
    assert not [c for c in run.check_targets([_row("karpenter", 1.0)]) if "large" in c.target]


def test_a_row_run_in_process_carries_karpenters_steady_state() -> None:
    """The seed's host-spread example on the Karpenter engine: 20 one-pod nodes, nothing to consolidate."""
    figures = run.run_row(run.RowSpec("aws", "host-spread", 20, "karpenter", 10.0))
    assert figures["scheduled"] == 20
    assert figures["steady_cost"] == pytest.approx(figures["karpenter_cost"])
    assert figures["steady_s"] is not None and figures["steady_s"] <= figures["wall_s"]
    assert figures["time_limit"] == 10.0


# ------------------------------------------------------------------------------------------ proof survey
def _case(root: Path, suite: str, name: str, expect: dict[str, object], catalog: bool = False) -> Path:
    case = root / suite / name
    case.mkdir(parents=True)
    (case / "manifests.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    (case / "expect.yaml").write_text(yaml.safe_dump(expect))
    if catalog:
        (case / "catalog.yaml").write_text("kind: InstanceCatalog\n")
    return case


def test_survey_finds_the_plan_cases_and_runs_them_as_format_md_says(tmp_path: Path) -> None:
    kube = _case(tmp_path, "kube", "01-a", {"region": "ap-northeast-2"})
    karpenter = _case(tmp_path, "karpenter", "02-b", {"args": ["--engine", "karpenter", "--zones", "z1"]},
                      catalog=True)
    for other in ("explain", "explain-real", "lint", "consolidate", "diff"):
        _case(tmp_path, other, "01-x", {})
    (tmp_path / "seed" / "03-no-expect").mkdir(parents=True)
    cases = survey.discover(tmp_path, quickstart=None)
    assert [c.name for c in cases] == ["karpenter/02-b", "kube/01-a"]
    assert cases[0].arguments == ("plan", str(karpenter / "manifests.yaml"), "--catalog",
                                  str(karpenter / "catalog.yaml"), "--zones", "z1", "--engine", "optimal",
                                  "-o", "json")
    assert cases[1].arguments == ("plan", str(kube / "manifests.yaml"), "--region", "ap-northeast-2",
                                  "--engine", "optimal", "-o", "json")


def test_survey_adds_the_quickstart_and_filters_by_name(tmp_path: Path) -> None:
    _case(tmp_path, "seed", "01-a", {})
    quick = tmp_path / "quickstart"
    quick.mkdir()
    cases = survey.discover(tmp_path, quickstart=quick, time_limit=5)
    assert [c.name for c in cases] == ["seed/01-a", survey.QUICKSTART_NAME]
    assert cases[1].arguments == ("plan", str(quick), "--engine", "optimal", "--time-limit", "5", "-o", "json")
    assert [c.name for c in survey.discover(tmp_path, quickstart=quick, only="seed")] == ["seed/01-a"]
    assert survey.discover(tmp_path / "missing", quickstart=None) == []


def test_survey_reads_the_plan_documents_public_summary() -> None:
    document = json.dumps({"apiVersion": "karpplan.io/v1alpha1", "kind": "Plan", "summary": PLAN_SUMMARY})
    result = survey.read_plan("kube/01-a", 0, document, "", 11.5)
    assert (result.ok, result.proven, result.status, result.gap, result.cost, result.lower_bound) == \
        (True, False, "feasible", 0.2, 0.25, 0.2)
    assert (result.pods, result.plan_s, result.time_limit, result.wall_s) == (20, 9.6, 10.0, 11.5)
    failed = survey.read_plan("kube/01-b", 2, "", "manifests.yaml:3: unknown kind\n", 1.0)
    assert not failed.ok and failed.error == "exit 2: manifests.yaml:3: unknown kind"


def test_quantiles_are_nearest_rank() -> None:
    values = [float(v) for v in range(1, 11)]
    assert survey.quantiles(values) == {"median": 5.5, "p90": 9.0, "max": 10.0}
    assert survey.quantile([3.0], 0.9) == 3.0
    assert survey.quantiles([]) == {"median": None, "p90": None, "max": None}


def _result(case: str, status: str, wall: float, gap: float = 0.0, pods: int = 4) -> survey.SurveyResult:
    return survey.SurveyResult(case, True, status=status, gap=gap, wall_s=wall, plan_s=wall - 1, pods=pods,
                               cost=1.0, lower_bound=1.0 - gap, time_limit=10.0)


def test_survey_report_counts_the_proven_and_lists_the_rest() -> None:
    results = [_result("kube/01-a", "optimal", 2.0), _result("seed/02-b", "feasible", 11.0, gap=0.5),
               _result("quickstart", "optimal", 1.5, pods=13),
               survey.SurveyResult("fargate/03-c", False, "timeout after 600 s", wall_s=600.0)]
    text = survey.markdown(results, Path("/cases"))
    assert "**2 of 4 proven optimal** (kube 1/1, seed 0/1, quickstart 1/1, fargate 0/1); 1 without a plan." in text
    assert "| seed/02-b | 4 | feasible | 50.00% | 1.0000 | 0.5000 | 11.00 | 10.00 | 10 | — |" in text
    assert "| fargate/03-c | — | timeout after 600 s |" in text
    assert "| wall s | 2.00 | 11.00 | 11.00 |" in text
    figures = survey.summary(results)
    assert figures["proven"] == 2 and figures["notProven"] == ["seed/02-b", "fargate/03-c"]
    json.dumps(figures)  # JSON-ready


def test_survey_targets_small_plans_proven_and_the_quickstart_fast() -> None:
    results = [_result("kube/01-a", "optimal", 2.0), _result("seed/02-b", "feasible", 11.0, gap=0.5),
               _result("kube/03-big", "feasible", 30.0, pods=500), _result("quickstart", "optimal", 2.5, pods=13)]
    proven, quick = survey.checks(results)
    assert proven[1] == [True, False, True]  # the 500-pod plan is not a small plan
    assert "not seed/02-b (feasible, gap 50.00%)" in proven[2]
    assert quick[1] == [False] and "wall 2.50 s" in quick[2]
    by_target = {c.target: c.verdict for c in run.check_targets([], results)}
    assert by_target["every surveyed plan of up to 100 pods proven optimal"] == "MISS"


def test_survey_plans_a_real_case_in_a_fresh_process(tmp_path: Path) -> None:
    case = tmp_path / "seed" / "01-two-pods"
    case.mkdir(parents=True)
    (case / "manifests.yaml").write_text(
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n"
        "      requirements:\n      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [m5]}\n"
        "      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n---\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n"
        "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n"
        "      containers:\n      - name: c\n        image: nginx\n"
        "        resources: {requests: {cpu: 500m, memory: 512Mi}}\n")
    (case / "expect.yaml").write_text("region: us-east-1\n")
    [found] = survey.discover(tmp_path, quickstart=None)
    result = survey.run_case(found, survey.default_karpplan(), timeout=120)
    assert result.ok, result.error
    assert result.pods == 2 and result.scheduled == 2 and result.proven and result.gap == 0.0
    assert result.wall_s >= (result.plan_s or 0.0)
