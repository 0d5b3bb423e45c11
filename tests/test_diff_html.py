"""`karpplan diff -o html`: the review page a person opens shows both sides, the delta and what changed."""

from __future__ import annotations

import re
from pathlib import Path

from diff_helpers import deployment, karpplan, pool, write


def test_the_diff_page_shows_both_costs_the_changed_workload_and_loads_nothing(tmp_path: Path) -> None:
    write(tmp_path / "base" / "all.yaml", pool(), deployment("web", 2))
    write(tmp_path / "head" / "all.yaml", pool(), deployment("web", 4), deployment("api<script>", 1))
    out = karpplan("diff", "base", "head", "--region", "us-east-1", "-o", "html", cwd=tmp_path)
    assert out.returncode in (0, 1), out.stderr
    page = out.stdout
    assert page.lstrip().lower().startswith("<!doctype html>")
    assert "Deployment/shop/web" in page
    assert "<script>" not in page.replace("&lt;script&gt;", "")  # the pod name stays text
    assert not re.search(r"""(src|href)\s*=\s*["']https?:""", page)  # self-contained
    # Two m5.large more ($0.096/h each): the page quotes the hourly delta.
    assert "0.1920" in page or "0.192" in page
