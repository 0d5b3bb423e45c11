"""`karpplan diff BASE HEAD`: the PlanDiff document, its exit codes, and the pull-request comment (golden)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from diff_helpers import deployment, karpplan, pool, write

GOLDEN = Path(__file__).resolve().parent / "golden"


def check_golden(name: str, actual: str) -> None:
    """Compare with tests/golden/<name>; UPDATE_GOLDEN=1 rewrites the file instead."""
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"missing golden file {path}; run with UPDATE_GOLDEN=1 to create it"
    assert actual == path.read_text(encoding="utf-8"), f"{name} differs from the golden file:\n{actual}"


def _diff(tmp_path: Path, *extra: str) -> tuple[int, dict[str, object]]:
    out = karpplan("diff", "base", "head", "--region", "us-east-1", *extra, "-o", "json", cwd=tmp_path)
    assert "Traceback" not in out.stderr
    return out.returncode, json.loads(out.stdout)


def test_more_replicas_and_an_added_workload_cost_what_their_nodes_cost(tmp_path: Path) -> None:
    write(tmp_path / "base" / "all.yaml", pool(), deployment("web", 2))
    write(tmp_path / "head" / "all.yaml", pool(), deployment("web", 4), deployment("api", 1))
    code, doc = _diff(tmp_path)
    assert code == 0
    delta = doc["delta"]
    assert delta == {"hourlyCost": 0.288, "monthlyCost": 210.24, "newNodes": 3, "unschedulable": 0}  # 3 m5.large
    workloads = {w["workload"]: w for w in doc["workloads"]}  # type: ignore[attr-defined]
    assert workloads["Deployment/shop/web"]["change"] == "changed"
    assert (workloads["Deployment/shop/web"]["podsBase"], workloads["Deployment/shop/web"]["podsHead"]) == (2, 4)
    assert workloads["Deployment/shop/api"]["change"] == "added"
    assert workloads["Deployment/shop/api"]["file"] == os.path.join("head", "all.yaml")
    # Each 1-CPU pod takes 1/1.93 of an m5.large ($0.096/h): the workloads' deltas are their shares.
    assert workloads["Deployment/shop/api"]["hourlyCostDelta"] == pytest.approx(0.096 / 1.93, abs=1e-5)
    assert len(doc["pools"]) == 1  # type: ignore[arg-type]
    assert doc["pools"][0]["change"] == "unchanged"  # type: ignore[index]
    assert doc["pools"][0]["fields"] == []  # type: ignore[index]
    # the reviewer is told what changed in the definition, not only that it did
    assert workloads["Deployment/shop/web"]["fields"] == ["spec.replicas: 2 -> 4"]


def test_identical_trees_give_a_zero_delta_and_the_same_bytes_every_run(tmp_path: Path) -> None:
    for side in ("base", "head"):
        write(tmp_path / side / "all.yaml", pool(), deployment("web", 3), deployment("api", 2, cpu="500m"))
    runs = [karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "json", cwd=tmp_path) for _ in range(2)]
    assert runs[0].stdout == runs[1].stdout
    doc = json.loads(runs[0].stdout)
    assert doc["delta"]["hourlyCost"] == 0 and doc["delta"]["monthlyCost"] == 0
    assert {w["change"] for w in doc["workloads"]} == {"unchanged"}
    assert doc["lint"] == {"new": [], "fixed": [], "removedWithObject": []} and runs[0].returncode == 0


def test_a_nodepool_change_keeps_the_workloads_unchanged_and_moves_their_cost(tmp_path: Path) -> None:
    write(tmp_path / "base" / "all.yaml", pool("m5.large"), deployment("web", 2))
    write(tmp_path / "head" / "all.yaml", pool("m5.xlarge"), deployment("web", 2))
    code, doc = _diff(tmp_path)
    assert code == 0
    assert doc["pools"][0]["name"] == "default" and doc["pools"][0]["change"] == "changed"  # type: ignore[index]
    web = doc["workloads"][0]  # type: ignore[index]
    assert web["change"] == "unchanged" and web["hourlyCostDelta"] != 0


def test_newly_unschedulable_pods_fail_with_their_reason_and_lints_new_finding(tmp_path: Path) -> None:
    write(tmp_path / "base" / "all.yaml", pool(), deployment("web", 2))
    write(tmp_path / "head" / "all.yaml", pool(), deployment("web", 2, zone="us-east-1f"))
    code, doc = _diff(tmp_path)
    assert code == 1
    newly = doc["newlyUnschedulable"]
    assert [u["pod"] for u in newly] == ["shop/web-0", "shop/web-1"]  # type: ignore[attr-defined]
    assert all(u["placedInBase"] and "us-east-1f" in " ".join(u["reasons"]) for u in newly)  # type: ignore[attr-defined]
    assert [f["rule"] for f in doc["lint"]["new"]] == ["no-pool-can-launch"]  # type: ignore[index]
    assert doc["gate"]["exitCode"] == 1  # type: ignore[index]
    # Reversed, the same change fixes the finding and fails nothing.
    out = karpplan("diff", "head", "base", "--region", "us-east-1", "-o", "json", cwd=tmp_path)
    assert out.returncode == 0
    assert [f["rule"] for f in json.loads(out.stdout)["lint"]["fixed"]] == ["no-pool-can-launch"]


def test_the_cost_gate_fails_an_increase_over_its_percent(tmp_path: Path) -> None:
    write(tmp_path / "base" / "all.yaml", pool(), deployment("web", 2))
    write(tmp_path / "head" / "all.yaml", pool(), deployment("web", 3))
    code, doc = _diff(tmp_path, "--fail-on-increase", "40")
    assert code == 1 and doc["gate"]["costExceeded"] and doc["gate"]["increasePercent"] == 50  # type: ignore[index]
    code, doc = _diff(tmp_path, "--fail-on-increase", "60")
    assert code == 0 and doc["gate"]["reasons"] == []  # type: ignore[index]


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    write(tmp_path / "base" / "all.yaml", pool(), deployment("web", 2))
    out = karpplan("diff", "base", "missing", cwd=tmp_path)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip() == "missing: HEAD missing does not exist"
    out = karpplan("diff", "base", cwd=tmp_path)
    assert out.returncode == 2 and "BASE and HEAD" in out.stderr


@pytest.mark.parametrize(("head", "code", "golden"), [
    ((deployment("web", 4), deployment("api", 1)), 0, "diff-replicas.md"),  # more replicas, an added workload
    ((deployment("web", 2, zone="us-east-1f"),), 1, "diff-unschedulable.md"),  # pinned where the pool is not
], ids=["more-replicas", "newly-unschedulable"])
def test_markdown_comment(tmp_path: Path, head: tuple[str, ...], code: int, golden: str) -> None:
    write(tmp_path / "base" / "all.yaml", pool(), deployment("web", 2))
    write(tmp_path / "head" / "all.yaml", pool(), *head)
    out = karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "markdown", cwd=tmp_path)
    assert out.returncode == code
    check_golden(golden, out.stdout)


def test_github_output_annotates_files_and_writes_the_step_summary(tmp_path: Path) -> None:
    write(tmp_path / "base" / "all.yaml", pool(), deployment("web", 2))
    write(tmp_path / "head" / "all.yaml", pool(), deployment("web", 2, zone="us-east-1f"))
    summary = tmp_path / "summary.md"
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary)}
    out = karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "github", cwd=tmp_path, env=env)
    assert out.returncode == 1
    lines = out.stdout.splitlines()
    head_file = os.path.join("head", "all.yaml")
    assert any(line.startswith(f"::error file={head_file},line=22,title=karpplan diff%3A newly unschedulable::")
               for line in lines), lines
    assert any(line.startswith(f"::error file={head_file},line=") and "no-pool-can-launch" in line for line in lines)
    assert lines[-1].startswith("::notice title=karpplan diff::karpplan diff: -$140.16/month")
    assert summary.read_text().startswith("## karpplan diff: -$140.16/month")


def test_table_shows_the_delta_the_changed_workloads_and_pools(tmp_path: Path) -> None:
    write(tmp_path / "base" / "all.yaml", pool("m5.large"), deployment("web", 2))
    write(tmp_path / "head" / "all.yaml", pool("m5.xlarge"), deployment("web", 3))
    out = karpplan("diff", "base", "head", "--region", "us-east-1", cwd=tmp_path)
    assert out.returncode == 0 and out.stderr == ""
    lines = out.stdout.splitlines()
    assert lines[0].startswith("karpplan diff: +$")
    assert any(line.split()[:3] == ["Deployment/shop/web", "changed", "2"] for line in lines), out.stdout
    assert any(line.split()[:2] == ["default", "changed"] for line in lines), out.stdout


def test_yaml_is_the_json_document(tmp_path: Path) -> None:
    import yaml

    write(tmp_path / "base" / "all.yaml", pool(), deployment("web", 2))
    write(tmp_path / "head" / "all.yaml", pool(), deployment("web", 3))
    as_yaml = karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "yaml", cwd=tmp_path)
    assert yaml.safe_load(as_yaml.stdout) == _diff(tmp_path)[1]


def test_a_saving_that_comes_from_a_relaxed_preference_says_so(tmp_path: Path) -> None:
    # A new user's review: HEAD adds `limits.cpu` to the pool; Karpenter's subtractMax charging then stops opening
    # NodeClaims, the replicas' preferred spread over hosts is relaxed, and the diff quoted a saving without a word.
    limited = pool().replace("spec:\n  template:", "spec:\n  limits: {cpu: '4'}\n  template:", 1)
    write(tmp_path / "base" / "all.yaml", pool(), deployment("web", 4, cpu="500m"))
    write(tmp_path / "head" / "all.yaml", limited, deployment("web", 4, cpu="500m"))
    code, doc = _diff(tmp_path, "--engine", "karpenter")
    assert code == 0 and doc["delta"]["newNodes"] < 0  # type: ignore[index]
    notes = [n for n in doc["notes"] if "no longer honours" in n]  # type: ignore[attr-defined]
    assert len(notes) == 1 and "Deployment/web" in notes[0] and "kubernetes.io/hostname" in notes[0]
    assert os.path.join("head", "all.yaml") in notes[0]


def test_a_workload_its_change_lets_schedule_is_now_placed_and_a_job_is_said_to_run_to_completion(
        tmp_path: Path) -> None:
    # A new user's diff showed a 2-minute Job "unchanged" at +$196.81/month: BASE left it unschedulable (its zone
    # not in the pool), HEAD's pool takes it. The row now says it is placed now, and that a Job's month is hypothetical.
    job = deployment("report", 1, zone="us-east-1b").replace("apiVersion: apps/v1\nkind: Deployment",
                                                             "apiVersion: batch/v1\nkind: Job", 1) \
        .replace("  replicas: 1\n", "  completions: 1\n").replace("  selector: {matchLabels: {app: report}}\n", "")
    assert "kind: Job" in job and "selector: {matchLabels" not in job
    widened = pool().replace("[us-east-1a]", "[us-east-1a, us-east-1b]")
    assert widened != pool()
    write(tmp_path / "base" / "all.yaml", pool(), job)
    write(tmp_path / "head" / "all.yaml", widened, job)
    code, doc = _diff(tmp_path)
    (row,) = [w for w in doc["workloads"] if w["workload"] == "Job/shop/report"]  # type: ignore[attr-defined]
    assert row["change"] == "unchanged" and (row["placedBase"], row["placedHead"]) == (0, 1)
    table = karpplan("diff", "base", "head", "--region", "us-east-1", cwd=tmp_path, env={**os.environ, "COLUMNS": "160"})
    assert "unchanged, now placed" in table.stdout and "Job and CronJob rows" in table.stdout
