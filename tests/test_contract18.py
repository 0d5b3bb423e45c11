"""What a contract review found (session 18): lint's outputs as CI reads them, a closed stdout, a cut plan's gap."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from karpplan.cli.main import app
from karpplan.lint.registry import BY_NAME

BAD = BY_NAME["spread-invalid"].bad
ROOT = Path(__file__).resolve().parent.parent


def test_github_output_survives_an_unwritable_step_summary(tmp_path: Path) -> None:
    """$GITHUB_STEP_SUMMARY passed into a container without its file: the workflow commands still reach stdout,
    a one-line warning on stderr, no traceback, the exit lint's findings give."""
    (tmp_path / "bad.yaml").write_text(BAD)
    env = {"GITHUB_STEP_SUMMARY": str(tmp_path / "missing" / "summary.md")}
    result = CliRunner().invoke(app, ["lint", str(tmp_path / "bad.yaml"), "-o", "github"], env=env)
    assert result.exit_code == 1  # an error finding, not a crash
    assert "::error file=" in result.stdout
    assert "Traceback" not in result.stderr and "cannot append the job summary" in result.stderr


def test_github_title_is_the_rule_name() -> None:
    """The contract's `::error file=F,line=L,title=RULE::message`."""
    result = CliRunner().invoke(app, ["lint", "-", "-o", "github"], input=BAD, env={"GITHUB_STEP_SUMMARY": ""})
    assert ",title=spread-invalid::" in result.stdout


def test_sarif_uris_are_percent_encoded_references(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SARIF 2.1.0 wants a valid URI reference: `my app.yaml` and `we,ird:100%.yaml` relative to %SRCROOT%."""
    monkeypatch.chdir(tmp_path)  # %SRCROOT%: the directory lint runs in

    def uris(*args: str) -> set[str]:
        result = CliRunner().invoke(app, ["lint", *args, "-o", "sarif"])
        sarif = json.loads(result.stdout)
        return {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]}

    for name, uri in (("my app.yaml", "my%20app.yaml"), ("we,ird:100%.yaml", "we%2Cird%3A100%25.yaml")):
        (tmp_path / name).write_text(BAD)
        assert uris(name) == {uri}
        assert uris(str(tmp_path / name)) == {uri}  # an absolute path under the directory lint runs in
        (tmp_path / name).unlink()


def _piped_to_head(*args: str, stdin: str | None = None) -> int:
    """Exit code of `karpplan ARGS | head -c 10` (the reader leaves after 10 bytes)."""
    process = subprocess.Popen([sys.executable, "-m", "karpplan.cli.main", *args], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    if stdin is not None:
        process.stdin.write(stdin.encode())
    process.stdin.close()
    process.stdout.read(10)
    process.stdout.close()
    stderr = process.stderr.read().decode()
    code = process.wait(timeout=120)
    assert "Broken pipe" not in stderr and "Traceback" not in stderr, stderr
    return code


def test_a_reader_that_leaves_early_is_no_failure() -> None:
    """`karpplan ... | head` under `set -o pipefail`: exit 0, as `lint` always did (explain said 2, 'cannot read
    the log: Broken pipe'; plan and catalog 1)."""
    log = (ROOT.parent / "shared" / "cases" / "explain" / "01-v032-unknown-label" / "log.txt")
    text = log.read_text() if log.exists() else (
        'incompatible with provisioner "default", label "nodegroup" does not have known values\n')
    assert _piped_to_head("explain", "-", "-o", "json", stdin=text * 200) == 0
    assert _piped_to_head("plan", "fixtures/quickstart") == 0
    assert _piped_to_head("catalog", "-o", "json") == 0


def test_a_cut_plan_claims_no_gap(tmp_path: Path) -> None:
    """When the time limit leaves pods undecided the bound is of the pods placed only: no gap is reported (a
    plan that placed nothing read `gap: 0.0`)."""
    docs: list[dict[str, object]] = [{
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"},
        "spec": {"template": {"spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass",
                                                        "name": "default"}, "requirements": []}}}}]
    for i in range(60):
        docs.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"d{i}"}, "spec": {
            "replicas": 15, "selector": {"matchLabels": {"app": f"d{i}"}}, "template": {
                "metadata": {"labels": {"app": f"d{i}"}}, "spec": {"containers": [{
                    "name": "c", "image": "x", "resources": {"requests": {"cpu": "250m", "memory": "512Mi"}}}]}}}})
    (tmp_path / "big.yaml").write_text(yaml.safe_dump_all(docs))
    result = CliRunner().invoke(app, ["plan", str(tmp_path / "big.yaml"), "--time-limit", "0.05", "-o", "json"])
    summary = json.loads(result.stdout)["summary"]
    if summary["notSimulated"]:
        assert result.exit_code == 3 and summary["gap"] is None
    else:  # a machine fast enough to simulate 900 pods in 0.05 s: nothing was cut, a gap may be claimed
        assert result.exit_code in (0, 1)


def test_catalog_listing_is_versioned_and_round_trips_as_an_instancecatalog(tmp_path: Path) -> None:
    """`catalog -o json` carries apiVersion/kind like every other document; `-o catalog` writes the listed types as
    an InstanceCatalog that `plan --catalog` reads, so a user can trim or edit the catalog they plan with."""
    listing = CliRunner().invoke(app, ["catalog", "--cpu", "2", "--memory", "4Gi", "--limit", "3", "-o", "json"])
    document = json.loads(listing.stdout)
    assert document["apiVersion"] == "karpplan.io/v1alpha1" and document["kind"] == "InstanceTypeListing"
    exported = CliRunner().invoke(app, ["catalog", "--cpu", "2", "--memory", "4Gi", "--limit", "3", "-o", "catalog"])
    assert exported.exit_code == 0
    catalog = yaml.safe_load(exported.stdout)
    assert catalog["kind"] == "InstanceCatalog" and len(catalog["instanceTypes"]) == 3
    assert {t["name"] for t in catalog["instanceTypes"]} == {t["name"] for t in document["instanceTypes"]}
    (tmp_path / "catalog.yaml").write_text(exported.stdout)
    plan = CliRunner().invoke(app, ["plan", str(ROOT / "fixtures" / "quickstart"), "--catalog",
                                    str(tmp_path / "catalog.yaml"), "-o", "json"])
    assert plan.exit_code == 0, plan.output
    used = {n["instanceType"] for n in json.loads(plan.stdout)["nodes"] if n["new"]}
    assert used <= {t["name"] for t in catalog["instanceTypes"]}


def test_explain_sources_are_the_contracts_three() -> None:
    """cli-contract.md: `source` is karpenter, kube-scheduler or cluster-autoscaler; Fargate's scheduler is a
    kube-scheduler of its own, named in `scheduler` (it read `fargate-scheduler`)."""
    fargate = ("Warning  FailedScheduling  2m  fargate-scheduler  Pod not supported on Fargate: fields not "
               "supported: HostNetwork, Privileged, HostPort\n")
    result = CliRunner().invoke(app, ["explain", "-", "-o", "json"], input=fargate)
    (item,) = json.loads(result.stdout)["items"]
    assert (item["source"], item["scheduler"]) == ("kube-scheduler", "fargate-scheduler")
    cases = ROOT.parent / "shared" / "cases"
    for log in sorted(cases.glob("explain*/*/log.txt")):
        document = CliRunner().invoke(app, ["explain", str(log), "-o", "json"])
        for it in json.loads(document.stdout or '{"items": []}')["items"]:
            assert it["source"] in ("karpenter", "kube-scheduler", "cluster-autoscaler"), (log, it["source"])
