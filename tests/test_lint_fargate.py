"""`karpplan lint --fargate-profile`: the satisfiability rules see the Fargate profiles `plan` sees (the
eksctl ClusterConfigs in the manifests and the flags)."""

from __future__ import annotations

import io
import json

import pytest
from typer.testing import CliRunner

from karpplan.cli.main import app
from karpplan.lint.core import Severity
from karpplan.lint.registry import BY_NAME
from karpplan.lint.rules.examples import FARGATE_CLUSTER, NODEPOOL, deployment
from karpplan.lint.run import LintOptions, lint
from karpplan.model.fargate import parse_profile_flag

runner = CliRunner()

# A pod no NodePool can take (the only pool is tainted), and a workload whose zone spread caps its replicas.
TAINTED = NODEPOOL.replace("      requirements:", "      taints: [{key: dedicated, value: batch, effect: NoSchedule}]\n"
                                                 "      requirements:")
UNLAUNCHABLE = TAINTED + deployment("")
CAPPED = BY_NAME["spread-caps-replicas"].bad
CLUSTER = FARGATE_CLUSTER
HOST_NETWORK = "      hostNetwork: true\n"


def rules(text: str, *flags: str) -> list[str]:
    profiles = tuple(parse_profile_flag(flag, i) for i, flag in enumerate(flags, start=1))
    report = lint(LintOptions(paths=("-",), stdin=io.StringIO(text), fargate_profiles=profiles))
    return [f.rule for f in report.findings if f.severity is not Severity.info]  # the pool has no EC2NodeClass


def test_without_fargate_the_pods_are_unschedulable() -> None:
    assert rules(UNLAUNCHABLE) == ["no-pool-can-launch"]
    assert rules(CAPPED) == ["spread-caps-replicas"]


@pytest.mark.parametrize("text", [UNLAUNCHABLE, CAPPED], ids=["no-pool-can-launch", "spread-caps-replicas"])
def test_a_pod_fargate_runs_is_not_unschedulable(text: str) -> None:
    assert rules(text, "namespace=default") == []
    assert rules(CLUSTER + text) == []  # the same profile from an eksctl ClusterConfig


def test_a_profile_that_does_not_select_the_pod_changes_nothing() -> None:
    assert rules(UNLAUNCHABLE, "namespace=other") == ["no-pool-can-launch"]
    assert rules(CAPPED, "namespace=default,app=api") == ["spread-caps-replicas"]


@pytest.mark.parametrize("text", [UNLAUNCHABLE, CAPPED], ids=["no-pool-can-launch", "spread-caps-replicas"])
def test_a_pod_fargate_refuses_is_still_reported(text: str) -> None:
    refused = text.replace("      containers:", HOST_NETWORK + "      containers:")
    assert refused != text
    # It never falls back to EC2: the finding is Fargate's refusal, at the refused field.
    assert rules(refused, "namespace=default") == ["fargate-incompatible"]
    assert rules(CLUSTER + refused) == ["fargate-incompatible"]


def test_the_flag_on_the_command_line() -> None:
    result = runner.invoke(app, ["lint", "-", "-o", "json", "--fargate-profile", "namespace=default"],
                           input=UNLAUNCHABLE)
    assert result.exit_code == 0, result.stdout
    assert [f for f in json.loads(result.stdout)["findings"] if f["severity"] != "info"] == []
    result = runner.invoke(app, ["lint", "-", "-o", "json", "--fargate-profile", "namespace=other"], input=UNLAUNCHABLE)
    assert result.exit_code == 1
    assert [f["rule"] for f in json.loads(result.stdout)["findings"] if f["severity"] != "info"] == ["no-pool-can-launch"]
    result = runner.invoke(app, ["lint", "-", "--fargate-profile", "nonsense"], input=UNLAUNCHABLE)
    assert result.exit_code == 2


def test_replicas_fargate_runs_are_not_told_they_may_share_a_node() -> None:
    """A new user's trial: three ingest-api replicas a Fargate profile takes got replicas-without-spread ("all of
    them may land on one node or in one zone"); each Fargate pod has a node of its own and Fargate's scheduler
    places it in the profile's subnets. Replicas on EC2 still get it."""
    three = NODEPOOL + deployment("", replicas=3)
    assert "replicas-without-spread" in rules(three)
    assert "replicas-without-spread" in rules(three, "namespace=other")
    assert "replicas-without-spread" not in rules(three, "namespace=default")
