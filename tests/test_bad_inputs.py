"""Bad input through the real command line: exit 2, `file:line: message` on stderr, nothing on stdout, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from karpplan.cli.main import app

BOMB = "\n".join(
    [
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
        *(f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]" for i in range(8)),
    ]
)
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: {replicas}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
      - name: web
        resources: {{requests: {{memory: {memory}}}}}
      topologySpreadConstraints:
      - maxSkew: {skew}
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: DoNotSchedule
"""


def deployment(replicas: str = "2", memory: str = "1Gi", skew: str = "1") -> str:
    return DEPLOYMENT.format(replicas=replicas, memory=memory, skew=skew)


# name -> (file content or None for "do not create", expected stderr line suffix after the file name)
CASES: dict[str, tuple[str | None, str]] = {
    "missing": (None, ": no such file or directory"),
    "invalid-yaml": ("kind: Pod\nmetadata:\n  name: [a\n", ":4: invalid YAML: "),
    "alias-bomb": (BOMB, ":7: YAML aliases expand to more than 1,000,000 nodes; refusing an alias bomb"),
    "not-a-mapping": ("- kind: Pod\n- kind: Node\n", ":1: document is a list, not a mapping (a Kubernetes object with kind)"),
    "quantity-1K": (deployment(memory="1K"), ":11: spec.template.spec.containers[0].resources.requests[memory]: "
                    "Invalid value: \"1K\": unable to parse quantity's suffix"),
    "replicas-abc": (deployment(replicas='"abc"'), ':5: spec.replicas: Invalid value: "abc": must be an integer'),
    "maxskew-x": (deployment(skew="x"), ':13: spec.template.spec.topologySpreadConstraints[0].maxSkew: '
                  'Invalid value: "x": must be an integer'),
    "list-items": ("apiVersion: v1\nkind: List\nitems:\n- 42\n", ":4: items[0]: is a number, not a mapping (a Kubernetes object)"),
    "deep": ("[" * 100_000 + "]" * 100_000, ":1: nested more than 1000 levels deep"),
    "binary": ("kind: Pod\x00\x01", ":1: invalid YAML: unacceptable character #x0000"),
    # `cat pools/default.yaml apps/graviton.yaml > all.yaml` (karpenter-blueprints): no `---` between the two,
    # so a plain YAML reader keeps the Deployment and the NodePool silently disappears.
    "concatenated-documents": (
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: default\nspec:\n  template:\n"
        "    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n"
        + deployment(),
        ":9: duplicate key \"apiVersion\" (first at line 1); a missing '---' between two documents?",
    ),
    "duplicate-cpu": (deployment(memory="1Gi, cpu: 100m, cpu: 200m"), ':11: duplicate key "cpu" (first at line 11)'),
    "containers-number": ("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: 3}\n",
                          ":4: spec.containers: Invalid value: 3: must be a list, not a number"),
}


def make(tmp_path: Path, name: str) -> str:
    content, _ = CASES[name]
    path = tmp_path / f"{name}.yaml"
    if content is not None:
        path.write_text(content)
    return str(path)


def assert_refused(code: int, stdout: str, stderr: str, path: str, suffix: str) -> None:
    assert code == 2, stderr
    assert stdout == ""
    assert "Traceback" not in stderr
    (first, *rest) = stderr.splitlines()
    assert first.startswith(path + suffix), first
    assert rest == []


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_in_process(tmp_path: Path, name: str) -> None:
    path = make(tmp_path, name)
    result = CliRunner().invoke(app, ["plan", path])
    assert_refused(result.exit_code, result.stdout, result.stderr, path, CASES[name][1])


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "karpplan.cli.main", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=60,
        env={**os.environ, "NO_COLOR": "1"},
    )


@pytest.mark.parametrize(
    "name", ["missing", "alias-bomb", "replicas-abc", "quantity-1K", "deep", "list-items", "concatenated-documents"]
)
def test_bad_input_in_a_real_process(tmp_path: Path, name: str) -> None:
    path = make(tmp_path, name)
    result = _run("plan", path)
    assert_refused(result.returncode, result.stdout, result.stderr, path, CASES[name][1])


def test_file_over_the_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    with path.open("wb") as handle:
        handle.truncate(60 * 1024 * 1024)  # sparse: the size is what counts, the content is never read
    result = _run("plan", str(path))
    assert_refused(
        result.returncode,
        result.stdout,
        result.stderr,
        str(path),
        ": file is 62,914,560 bytes, over the 52,428,800-byte limit (see --max-file-size)",
    )
    smaller = CliRunner().invoke(app, ["plan", "--max-file-size", "1Mi", str(path)])
    assert smaller.exit_code == 2 and "over the 1,048,576-byte limit" in smaller.stderr


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "secret.yaml"
    path.write_text(deployment())
    if os.geteuid() != 0:
        path.chmod(0)
        result = _run("plan", str(path))
        assert_refused(result.returncode, result.stdout, result.stderr, str(path), ": cannot read: Permission denied")
    # Root reads anything, so also refuse the read itself.

    def refuse(self: Path, *args: object, **kwargs: object) -> object:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "open", refuse)
    invoked = CliRunner().invoke(app, ["plan", str(path)])
    assert_refused(invoked.exit_code, invoked.stdout, invoked.stderr, str(path), ": cannot read: Permission denied")


def test_every_problem_of_every_file_is_listed(tmp_path: Path) -> None:
    paths = [make(tmp_path, name) for name in ("missing", "replicas-abc", "maxskew-x", "not-a-mapping")]
    result = CliRunner().invoke(app, ["plan", *paths])
    assert result.exit_code == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert [line.split(":", 1)[0] for line in lines] == [paths[0], paths[3], paths[1], paths[2]]


def test_bad_stdin(tmp_path: Path) -> None:
    result = _run("plan", "-", stdin="kind: Deployment\napiVersion: apps/v1\nmetadata: {name: x}\nspec: {replicas: x}\n")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith('<stdin>:4: spec.replicas: Invalid value: "x": must be an integer')


@pytest.mark.parametrize(
    "args",
    [
        ["plan"],
        ["plan", "x.yaml", "-o", "xml"],
        ["plan", "x.yaml", "--engine", "magic"],
        ["plan", "x.yaml", "--time-limit", "soon"],
        ["plan", "x.yaml", "--max-file-size", "big"],
        ["plan", "x.yaml", "--fargate-profile", "study-*"],
        ["plan", "x.yaml", "--no-such-option"],
    ],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
