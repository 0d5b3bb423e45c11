"""PodDisruptionBudgets in `karpplan diff`: a plan evicts nothing, so a PDB never moves the cost, yet one that
allows 0 disruptions stops Karpenter's consolidation, drift and expiry of its pods' nodes ("Pdb prevents pod
evictions"). The diff names each PDB change (its fields) and says when a PDB now allows no eviction."""

from __future__ import annotations

import json
from pathlib import Path

from diff_helpers import deployment, karpplan, pool, write


def _pdb(spec: str, name: str = "api") -> str:
    return (f"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: {name}, namespace: shop}}\n"
            f"spec: {{{spec}, selector: {{matchLabels: {{app: api}}}}}}\n")


def _diff(tmp_path: Path, base: str, head: str) -> dict[str, object]:
    write(tmp_path / "base" / "all.yaml", pool(), deployment("api", 4), *([base] if base else []))
    write(tmp_path / "head" / "all.yaml", pool(), deployment("api", 4), *([head] if head else []))
    out = karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    doc: dict[str, object] = json.loads(out.stdout)
    return doc


def _notes(doc: dict[str, object]) -> list[str]:
    notes = doc["notes"]
    assert isinstance(notes, list)
    return [n for n in notes if "PodDisruptionBudget" in n]


def test_min_available_raised_to_the_replicas_is_said_to_block_consolidation(tmp_path: Path) -> None:
    doc = _diff(tmp_path, _pdb("minAvailable: 3"), _pdb("minAvailable: 4"))
    [note] = _notes(doc)
    assert note.startswith("head/all.yaml:")
    assert "PodDisruptionBudget shop/api changed (spec.minAvailable: 3 -> 4)" in note
    assert "it now allows 0 disruptions of the 4 pod(s) it selects (Deployment/shop/api), 1 before" in note
    assert "consolidation, drift and expiry of the nodes they run on are blocked" in note


def test_a_percentage_that_still_allows_one_eviction_is_only_named(tmp_path: Path) -> None:
    doc = _diff(tmp_path, _pdb("maxUnavailable: 50%"), _pdb("maxUnavailable: 25%"))
    [note] = _notes(doc)
    assert "(spec.maxUnavailable: 50% -> 25%): it allows 1 disruption(s) of the 4 pod(s)" in note
    assert "blocked" not in note


def test_a_blocking_pdb_added_and_one_removed(tmp_path: Path) -> None:
    [added] = _notes(_diff(tmp_path, "", _pdb("maxUnavailable: 0")))
    assert "PodDisruptionBudget shop/api added: it allows 0 disruptions" in added
    [removed] = _notes(_diff(tmp_path, _pdb("maxUnavailable: 0"), ""))
    assert removed == "PodDisruptionBudget shop/api removed: the pods it held (Deployment/shop/api) can be evicted again"


def test_an_unchanged_pdb_says_nothing(tmp_path: Path) -> None:
    assert _notes(_diff(tmp_path, _pdb("minAvailable: 4"), _pdb("minAvailable: 4"))) == []
