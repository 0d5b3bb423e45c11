"""The command-line shell: version, `inventory` output formats, colour, verbosity, stdin, option plumbing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from karpplan import __version__
from karpplan.cli.main import app

from conftest import FIXTURES

QUICKSTART = str(FIXTURES / "quickstart")


def invoke(*args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), input=stdin, env=env)
    return result.exit_code, result.stdout, result.stderr


def test_version() -> None:
    assert invoke("--version") == (0, f"karpplan {__version__}\n", "")


def test_quickstart_table() -> None:
    code, out, err = invoke("--color", "never", "inventory", QUICKSTART)
    assert code == 0
    assert "13 pods: 13 pending in 3 groups" in out
    for name in ("Deployment/web", "Deployment/api", "StatefulSet/cache", "general", "log-agent"):
        assert name in out
    assert err == "skipped 1 document: 1 Service; -v lists them\n"


def test_verbose_lists_skipped_documents() -> None:
    code, out, err = invoke("--color", "never", "-v", "inventory", QUICKSTART)
    assert code == 0
    assert "Skipped documents" in out and "workloads.yaml:" in out and "Service" in out
    assert err == ""


def test_json_document() -> None:
    code, out, err = invoke("inventory", QUICKSTART, "-o", "json")
    assert code == 0 and err == ""
    document = json.loads(out)
    assert (document["apiVersion"], document["kind"]) == ("karpplan.io/v1alpha1", "Inventory")
    assert document["summary"]["pending"] == 13
    groups = {g["workload"]: g for g in document["pending"]}
    api = groups["Deployment/api"]
    assert api["replicas"] == 4 and api["pods"][0] == "api-0"
    assert api["template"]["requests"] == {"cpu": "1100m", "memory": "2176Mi", "pods": "1"}
    assert api["template"]["podAntiAffinity"]["required"] == ["kubernetes.io/hostname selector=app In [api]"]
    web_spread = groups["Deployment/web"]["template"]["topologySpreadConstraints"][0]
    assert web_spread["matchLabelKeys"] == ["pod-template-hash"]
    assert web_spread["origin"].endswith("workloads.yaml:22")
    (pool,) = document["nodePools"]
    assert "karpenter.sh/nodepool In [general]" in pool["requirements"]
    assert pool["limits"] == {"cpu": "1000", "memory": "4000Gi"}
    assert document["nodeClasses"][0]["amiFamily"] == "AL2023"
    assert document["daemonSets"][0]["template"]["requests"] == {"cpu": "100m", "memory": "128Mi", "pods": "1"}
    assert [s["kind"] for s in document["skipped"]] == ["Service"]


def test_yaml_document_matches_json() -> None:
    _, as_json, _ = invoke("inventory", QUICKSTART, "-o", "json")
    code, as_yaml, _ = invoke("inventory", QUICKSTART, "-o", "yaml")
    assert code == 0
    assert yaml.safe_load(as_yaml) == json.loads(as_json)


def test_stdin_and_files_together(tmp_path: Path) -> None:
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: piped}\nspec: {containers: [{name: a}]}\n"
    code, out, _ = invoke("inventory", "-", str(FIXTURES / "quickstart" / "nodepool.yaml"), "-o", "json", stdin=pod)
    assert code == 0
    document = json.loads(out)
    assert [p["name"] for p in document["pods"]] == ["piped"]
    assert document["summary"]["nodePools"] == 1


def test_fargate_profile_flags_are_added() -> None:
    code, out, _ = invoke(
        "inventory", QUICKSTART, "-o", "json", "--fargate-profile", "namespace=shop", "--fargate-profile",
        "namespace=batch-*,team=data",
    )
    assert code == 0
    profiles = json.loads(out)["fargateProfiles"]
    assert profiles == [
        {"name": "cli-1", "selectors": [{"namespace": "shop", "labels": {}}]},
        {"name": "cli-2", "selectors": [{"namespace": "batch-*", "labels": {"team": "data"}}]},
    ]


@pytest.mark.parametrize(
    ("args", "env", "colored"),
    [
        (["--color", "always"], {}, True),
        (["--color", "always"], {"NO_COLOR": "1"}, True),  # the explicit flag wins
        (["--color", "never"], {}, False),
        ([], {"NO_COLOR": "1"}, False),
        ([], {}, False),  # auto: not a terminal
    ],
)
def test_color(args: list[str], env: dict[str, str], colored: bool) -> None:
    code, out, _ = invoke(*args, "inventory", QUICKSTART, env=env)
    assert code == 0
    assert ("\x1b[" in out) is colored


def test_options_reach_the_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    from karpplan.cli import main as cli_main
    from karpplan.cli.terminal import Terminal
    from karpplan.planner import PlanOptions

    seen: list[tuple[PlanOptions, str, Terminal]] = []

    def fake_run_plan(options: PlanOptions, output: str, terminal: Terminal) -> int:
        seen.append((options, output, terminal))
        return 1

    monkeypatch.setattr(cli_main, "run_plan", fake_run_plan)
    code, _, _ = invoke(
        "-v", "plan", "a.yaml", "b/", "--catalog", "cat.yaml", "--region", "eu-west-1", "--engine", "karpenter",
        "--time-limit", "2.5", "--seed", "7", "--workers", "3", "-o", "yaml", "--max-file-size", "10Mi", "--allow-estimated-prices",
    )
    assert code == 1  # the command exits with what run_plan returns
    ((options, output, terminal),) = seen
    assert options.paths == ("a.yaml", "b/")
    assert (options.catalog, options.region, options.engine) == ("cat.yaml", "eu-west-1", "karpenter")
    assert (options.time_limit, options.seed, options.workers, output) == (2.5, 7, 3, "yaml")
    assert options.max_file_size == 10 * 2**20 and options.allow_estimated_prices and terminal.verbose == 1
    assert options.fargate_profiles == ()


def test_plan_runs_end_to_end_on_the_quickstart() -> None:
    code, out, err = invoke("plan", QUICKSTART, "--engine", "karpenter", "-o", "json")
    document = json.loads(out)
    assert (document["kind"], document["summary"]["pods"]) == ("Plan", 13)
    assert code == (1 if document["summary"]["unschedulable"] else 0), err
    phases = [p["name"] for p in document["summary"]["phases"]]
    assert phases == ["parse", "catalog", "build", "simulate", "assemble", "steady-state"]
    assert all(p["seconds"] >= 0 for p in document["summary"]["phases"])


def test_verbose_plan_prints_the_time_of_each_phase() -> None:
    code, _, err = invoke("--color", "never", "-v", "plan", QUICKSTART, "--engine", "karpenter", "-o", "json")
    assert code in (0, 1)
    (timing,) = [line for line in err.splitlines() if line.startswith("time: ")]
    assert [part.split()[0] for part in timing.removeprefix("time: ").split(", ")] == [
        "parse", "catalog", "build", "simulate", "assemble", "steady-state", "fixes", "render"]


def test_engine_choices_come_from_the_planner() -> None:
    from karpplan.planner import ENGINES

    code, _, err = invoke("plan", QUICKSTART, "--engine", "greedy")
    assert code == 2
    assert all(engine in err for engine in ENGINES)


def test_defaults() -> None:
    from karpplan.catalog import DEFAULT_REGION
    from karpplan.planner import ENGINES, PlanOptions

    options = PlanOptions(paths=("x",))
    assert (options.engine, options.time_limit, options.seed) == (ENGINES[0], 10.0, 0) == ("optimal", 10.0, 0)
    assert options.workers == 0  # all available cores
    assert options.max_file_size == 50 * 1024 * 1024 and options.region is None
    assert DEFAULT_REGION == "us-east-1"


def test_plan_says_what_it_skipped_and_lists_it_in_json(tmp_path: Path) -> None:
    extra = tmp_path / "extra.yaml"
    extra.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-config}\n---\n"
        "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web}\n"
    )
    code, out, err = invoke("plan", QUICKSTART, str(extra), "-o", "json", "--time-limit", "2")
    assert code == 0
    assert "skipped 3 documents: 1 ConfigMap, 1 Ingress, 1 Service; -v lists them" in err
    ignored = json.loads(out)["ignored"]
    assert {(i["kind"], i["name"]) for i in ignored} == {
        ("ConfigMap", "app-config"), ("Ingress", "web"), ("Service", "web")}
    assert all(i["origin"].count(":") == 1 and i["reason"] for i in ignored)


def test_workers_help_says_when_a_seed_gives_the_same_plan() -> None:
    code, out, _ = invoke("plan", "--help", env={"COLUMNS": "300", "NO_COLOR": "1"})
    assert code == 0
    text = " ".join(line.strip(" │|") for line in out.splitlines())
    text = " ".join(text.split())
    assert ("a seed and a worker count give the same plan on every run, unless the time limit cuts the search "
            "first (a warning says so)") in text


@pytest.mark.parametrize("command", ["plan", "lint", "explain", "consolidate", "diff", "inventory", "catalog"])
def test_help_names_values_as_users_write_them_never_python_types(command: str) -> None:
    # Typer 0.2x printed `PATH <list[str]>` and `--region <str>`; a new user read them as noise.
    code, out, _ = invoke(command, "--help", env={"COLUMNS": "120", "NO_COLOR": "1"})
    assert code == 0
    for leak in ("<str>", "<list[", "<file>", "<int>", "<float>", "<path>", "{PATH...}", "[PATH...]"):
        assert leak not in out, f"{command} --help shows {leak}"
