"""docs/explain.md shows what `karpplan explain` prints today: regenerating it changes nothing."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_explain_docs_are_fresh(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("gen_explain_docs", ROOT / "scripts" / "gen_explain_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = (ROOT / "docs" / "explain.md").read_text(encoding="utf-8")
    assert page == module.markdown(tmp_path), "docs/explain.md is stale: run python scripts/gen_explain_docs.py"
    assert page.count("## ") == len(module.EXAMPLES) and page.count("**Fix.**") == len(module.EXAMPLES)
