"""Tables at 80 columns fold names at their `/`, `-`, `.` boundaries, never mid-word: a new user's
`karpplan inventory` printed `CronJob/settlement-r` / `eport`, and `consolidate` spread each EC2 node name
over three lines (`ip-10-40-11-23.ap-` / `southeast-2.comput` / `e.internal`)."""

from __future__ import annotations

import io
import re
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text
from test_consolidate_semantics import node, nodepool, pod, write
from typer.testing import CliRunner

from karpplan.cli.main import app
from karpplan.render.wrap import fold_at_boundaries

runner = CliRunner()
CRONJOB = """\
apiVersion: batch/v1
kind: CronJob
metadata: {name: settlement-report, namespace: jobs}
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          topologySpreadConstraints:
            - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
               labelSelector: {matchLabels: {app.kubernetes.io/name: settlement-report}}}
          containers:
            - name: report
              image: x
              resources: {requests: {cpu: "1", memory: 3Gi}}
"""


def _cells(text: str) -> list[str]:
    """Every cell line of a borderless table: runs of text two or more spaces apart."""
    return [cell for line in text.splitlines() for cell in re.split(r"\s{2,}", line.strip()) if cell]


def test_inventory_at_80_columns_folds_names_at_their_separators(tmp_path: Path) -> None:
    (tmp_path / "cron.yaml").write_text(CRONJOB)
    result = runner.invoke(app, ["--color", "never", "inventory", str(tmp_path)], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert all(len(line) <= 80 for line in result.stdout.splitlines())
    cells = _cells(result.stdout)
    # rich's own folding printed `CronJob/settlement-r` / `eport`: now the name breaks after its `/` only
    workload = cells.index("CronJob/")
    assert "settlement-report" in cells[workload:]
    assert "topology.kubernetes.io/" in cells and "zone maxSkew=1" in cells


def test_consolidate_at_80_columns_shows_node_names_whole_without_their_shared_domain(tmp_path: Path) -> None:
    names = [f"ip-10-40-{i}-{i * 7}.ap-southeast-2.compute.internal" for i in (11, 42, 77)]
    path = write(tmp_path, *(node(n, zone="ap-southeast-2a") for n in names),
                 pod("web-1", names[0], cpu="700m"), pools=(nodepool(budgets=[{"nodes": "0"}]),))
    result = runner.invoke(app, ["--color", "never", "consolidate", str(path), "--region", "ap-southeast-2",
                                 "--time-limit", "2"], env={"COLUMNS": "80"})
    text = result.stdout
    assert all(len(line) <= 80 for line in text.splitlines())
    for name in names:
        assert f"│ {name.removesuffix('.ap-southeast-2.compute.internal')} " in text
    assert "node names without the EC2 domain they share (.ap-southeast-2.compute.internal)" in " ".join(text.split())


def test_fold_at_boundaries_keeps_styles_and_leaves_short_cells() -> None:
    table = Table()
    table.add_column("workload", overflow="fold")
    table.add_column("note", overflow="fold")
    styled = Text("Deployment/")
    styled.append("argocd-applicationset-controller", style="bold")
    table.add_row(styled, "short")
    console = Console(file=io.StringIO(), width=30, color_system=None)
    fold_at_boundaries(table, console)
    cell = table.columns[0]._cells[0]
    assert isinstance(cell, Text)
    assert cell.plain.split("\n") == ["Deployment/", "argocd-", "applicationset-", "controller"]
    assert any(span.style == "bold" for span in cell.spans)
    assert table.columns[1]._cells[0] == "short"


def test_node_takes_the_name_as_the_table_shows_it(tmp_path: Path) -> None:
    """The table shows `ip-10-40-11-77` for `ip-10-40-11-77.ap-southeast-2.compute.internal`: `--node` takes it."""
    names = [f"ip-10-40-{i}-{i * 7}.ap-southeast-2.compute.internal" for i in (11, 42)]
    path = write(tmp_path, *(node(n, zone="ap-southeast-2a") for n in names),
                 pod("web-1", names[0], cpu="700m"), pools=(nodepool(budgets=[{"nodes": "0"}]),))
    result = runner.invoke(app, ["--color", "never", "consolidate", str(path), "--region", "ap-southeast-2",
                                 "--time-limit", "2", "--node", "ip-10-40-11-77"], env={"COLUMNS": "100"})
    assert result.exit_code in (0, 1), result.output
    assert result.stdout.startswith(f"Node {names[0]} (m5.large")
