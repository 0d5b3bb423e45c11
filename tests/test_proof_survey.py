"""The proof survey's real inputs (bench/proof_survey.py): every folder of fixtures/real-survey and manifest of
fixtures/real is a case planned as a user would, each folder names its sources, and a case karpplan refuses is
listed but not held against the targets."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from bench import proof_survey as survey  # noqa: E402


def test_every_real_survey_folder_and_real_manifest_is_a_case() -> None:
    cases = survey.discover_real()
    names = {c.name for c in cases}
    folders = [p for p in (REPO / "fixtures" / "real-survey").iterdir() if p.is_dir()]
    assert folders and all(f"real-survey/{p.name}" in names for p in folders)
    assert any(n.startswith("real/") and n.endswith(".yaml") for n in names)
    od_spot = next(c for c in cases if c.name == "real-survey/od-spot-split")
    assert od_spot.arguments[:2] == ("plan", str(REPO / "fixtures" / "real-survey" / "od-spot-split"))
    assert od_spot.arguments[-4:] == ("--engine", "optimal", "-o", "json")


def test_each_real_survey_folder_names_repository_path_and_commit() -> None:
    for folder in (REPO / "fixtures" / "real-survey").iterdir():
        sources = (folder / "SOURCES").read_text()
        assert "https://github.com/" in sources and " at commit " in sources, folder.name
        for manifest in folder.glob("*.yaml"):
            assert f"- {manifest.name}:" in sources, f"{folder.name}/{manifest.name} has no source line"


def test_a_refused_real_input_is_listed_but_not_held_against_the_targets() -> None:
    refused = survey.SurveyResult("real/windows-nodeclassref-group.yaml", False, "exit 2: refused", exit_code=2)
    proven = survey.SurveyResult("real-survey/od-spot-split", True, pods=10, status="optimal")
    missed = survey.SurveyResult("kube/01", False, "exit 1: crash", exit_code=1)
    ((target, verdicts, detail), _) = survey.checks([refused, proven, missed])
    assert "100 pods" in target and verdicts == [True, False] and "kube/01" in detail
    assert "real/windows-nodeclassref-group.yaml | — | exit 2: refused" in survey.markdown(
        [refused, proven], REPO / "cases")
